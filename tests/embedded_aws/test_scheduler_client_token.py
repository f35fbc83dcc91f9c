"""CreateSchedule in the embedded AWS honours ClientToken: a retried create gets the first answer back.

AWS: https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateSchedule.html (ClientToken,
ConflictException).
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from embedded_aws.base import client
from embedded_aws.clock import VirtualClock

TARGET = {
    "Arn": "arn:aws:lambda:us-east-1:123456789012:function:sender",
    "RoleArn": "arn:aws:iam::123456789012:role/scheduler",
}


def _create(scheduler: Any, token: str, *, expression: str = "at(2030-01-01T09:00:00)") -> str:
    arn: str = scheduler.create_schedule(
        Name="send-e-1",
        ClientToken=token,
        ScheduleExpression=expression,
        FlexibleTimeWindow={"Mode": "OFF"},
        Target=TARGET,
    )["ScheduleArn"]
    return arn


def test_a_create_repeated_with_its_token_returns_the_first_schedule_arn_and_makes_one_schedule(
    endpoint: str, clock: VirtualClock
) -> None:
    """ClientToken "ensure[s] the idempotency of the request": the SDK's retry of a create carries the
    same token and gets the first result, not an error. API_CreateSchedule.html (ClientToken)"""
    scheduler = client("scheduler", endpoint)
    # GIVEN a schedule created with a token
    first = _create(scheduler, "retry-token-1")
    # WHEN the same request is sent again with the same token (a retry after a slow answer)
    again = _create(scheduler, "retry-token-1")
    # THEN it succeeds with the first ARN, and there is still one schedule
    assert again == first
    assert [s["Arn"] for s in scheduler.list_schedules()["Schedules"]] == [first]


def test_a_create_with_another_token_for_an_existing_name_is_a_conflict(
    endpoint: str, clock: VirtualClock
) -> None:
    """A new request (new token) for a name in use is refused with ConflictException.
    API_CreateSchedule.html (Errors)"""
    scheduler = client("scheduler", endpoint)
    _create(scheduler, "first-token")
    with pytest.raises(ClientError) as conflict:
        _create(scheduler, "second-token")
    assert conflict.value.response["Error"]["Code"] == "ConflictException"


def test_the_same_token_with_other_parameters_is_a_conflict(endpoint: str, clock: VirtualClock) -> None:
    """API_CreateSchedule.html does not say what a reused token with other parameters gets; the
    emulator refuses it as a conflict rather than pretend the different request was applied
    (our choice, unconfirmed)."""
    scheduler = client("scheduler", endpoint)
    _create(scheduler, "reused-token")
    with pytest.raises(ClientError) as conflict:
        _create(scheduler, "reused-token", expression="at(2031-01-01T09:00:00)")
    assert conflict.value.response["Error"]["Code"] == "ConflictException"
    schedule = scheduler.get_schedule(Name="send-e-1")
    assert schedule["ScheduleExpression"] == "at(2030-01-01T09:00:00)"


def test_a_deleted_schedule_forgets_its_token(endpoint: str, clock: VirtualClock) -> None:
    """The token is remembered with the schedule: once it is deleted, the same request creates it again.
    API_CreateSchedule.html, API_DeleteSchedule.html"""
    scheduler = client("scheduler", endpoint)
    _create(scheduler, "kept-token")
    scheduler.delete_schedule(Name="send-e-1")
    _create(scheduler, "kept-token")
    assert len(scheduler.list_schedules()["Schedules"]) == 1
