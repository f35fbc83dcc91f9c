"""Rules of the email core: idempotent task creation with counters, one schedule per task, the email
transitions (claim only from Pending, holder-only outcomes) and the reconciler's give-up."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime

import boto3
import pytest

from outreach import clock, email_schedules, errors, task_store
from outreach.email_task import EmailMessage
from outreach.errors import InvalidJobInputError
from outreach.task_model import Kind, Status, Task
from tests.support.aws import REGION, Resources
from tests.support.email import BERLIN, planned


@pytest.fixture
def frozen_clock() -> Iterator[list[float]]:
    moment = [1_800_000_000.0]
    clock.set_time_source(lambda: moment[0])
    yield moment
    clock.set_time_source(None)


@pytest.fixture
def target(resources: Resources) -> email_schedules.ScheduleTarget:
    boto3.client("scheduler", region_name=REGION).create_schedule_group(Name="outreach-test-email")
    return email_schedules.ScheduleTarget(
        group="outreach-test-email",
        worker_arn=f"arn:aws:lambda:{REGION}:123456789012:function:outreach-test-email-worker",
        role_arn="arn:aws:iam::123456789012:role/outreach-test-email-scheduler",
        dlq_arn=f"arn:aws:sqs:{REGION}:123456789012:outreach-test-email-dlq",
    )


def _task(task_id: str) -> Task:
    task = task_store.get_task(task_id)
    assert task is not None
    return task


def test_creating_the_same_emails_twice_creates_no_duplicate_tasks(resources: Resources) -> None:
    emails = [planned(f"r{i}@example.org", step) for i in range(60) for step in (1, 2)]
    first = task_store.create_email_tasks(emails)
    second = task_store.create_email_tasks([*emails, planned("R0@Example.org")])
    assert len(first.created) == 120
    assert second.created == []
    assert sorted(second.existing) == sorted(first.created)
    assert task_store.job_counts("spring")["Pending"] == 120


def test_email_tasks_carry_the_contract_fields(resources: Resources) -> None:
    email = planned("a@example.org", 2)
    task_store.create_email_tasks([email])
    task = _task(email.task_id)
    assert (task.kind, task.job_id, task.status, task.attempts) == ("email", "spring", Status.PENDING, 0)
    assert task.email is not None
    assert task.email.step == 2
    assert task.email.recipient == "a@example.org"
    assert task.email.send_at == "2027-03-05T08:30:00Z"
    assert task.email.timezone == "Europe/Berlin"
    assert task.email.schedule_name == email.schedule_name
    assert EmailMessage.from_item(task.email.message) == email.message
    assert [t.task_id for t in task_store.open_tasks(Kind.EMAIL, Status.PENDING, "9999")] == [email.task_id]


def test_emails_of_two_campaigns_in_one_call_are_refused(resources: Resources) -> None:
    with pytest.raises(InvalidJobInputError):
        task_store.create_email_tasks([planned("a@example.org"), planned("b@example.org", campaign="x")])
    assert task_store.job_counts("spring")["Pending"] == 0


def test_an_email_task_is_claimed_once_and_never_from_running(
    resources: Resources, frozen_clock: list[float]
) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    stale = _task(email.task_id)
    claimed = task_store.claim_email(stale, owner="invocation-1", lease_seconds=60)
    assert claimed.status is Status.RUNNING
    assert claimed.attempts == 1
    with pytest.raises(errors.TransitionRejectedError):
        task_store.claim_email(stale, owner="invocation-2", lease_seconds=60)
    frozen_clock[0] += 3600
    with pytest.raises(errors.TransitionRejectedError):
        task_store.claim_email(_task(email.task_id), owner="invocation-3", lease_seconds=60)
    assert task_store.job_counts("spring") == {
        "Pending": 0,
        "Running": 1,
        "Finished": 0,
        "Failed": 0,
        "Cancelled": 0,
    }


def test_only_the_claim_holder_finishes_an_email_and_records_the_message_id(resources: Resources) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    claimed = task_store.claim_email(_task(email.task_id), owner="invocation-1", lease_seconds=60)
    impostor = Task(**{**claimed.__dict__, "lease": None})
    with pytest.raises(errors.TransitionRejectedError):
        task_store.finish_email(impostor, ses_message_id="other")
    task_store.finish_email(claimed, ses_message_id="ses-1")
    done = _task(email.task_id)
    assert done.status is Status.FINISHED
    assert done.email is not None
    assert done.email.ses_message_id == "ses-1"
    assert done.lease is None
    assert task_store.job_counts("spring")["Finished"] == 1


def test_a_released_email_claim_goes_back_to_pending_with_its_error(resources: Resources) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    claimed = task_store.claim_email(_task(email.task_id), owner="invocation-1", lease_seconds=60)
    task_store.return_email_to_pending(claimed, error="throttled: TooManyRequestsException")
    back = _task(email.task_id)
    assert back.status is Status.PENDING
    assert back.lease is None
    assert back.last_error == "throttled: TooManyRequestsException"
    again = task_store.claim_email(back, owner="invocation-2", lease_seconds=60)
    assert again.attempts == 2
    assert task_store.job_counts("spring")["Running"] == 1


def test_a_skipped_follow_up_is_cancelled_with_its_reason(resources: Resources) -> None:
    email = planned("a@example.org", 2)
    task_store.create_email_tasks([email])
    claimed = task_store.claim_email(_task(email.task_id), owner="invocation-1", lease_seconds=60)
    task_store.skip_email(claimed, reason="earlier_step_bounced: step 1")
    skipped = _task(email.task_id)
    assert (skipped.status, skipped.failure_reason) == (Status.CANCELLED, "earlier_step_bounced: step 1")
    assert task_store.job_counts("spring")["Cancelled"] == 1


def test_giving_up_needs_an_unchanged_task_without_a_live_lease(
    resources: Resources, frozen_clock: list[float]
) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    claimed = task_store.claim_email(_task(email.task_id), owner="invocation-1", lease_seconds=60)
    with pytest.raises(errors.TransitionRejectedError):
        task_store.fail_stale(claimed, reason="delivery_unknown")
    frozen_clock[0] += 61
    task_store.fail_stale(claimed, reason="delivery_unknown")
    assert _task(email.task_id).failure_reason == "delivery_unknown"
    assert task_store.job_counts("spring")["Failed"] == 1


def test_a_pending_email_task_can_be_given_up_as_too_late(resources: Resources) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    task_store.fail_stale(_task(email.task_id), reason="too_late")
    failed = _task(email.task_id)
    assert (failed.status, failed.failure_reason) == (Status.FAILED, "too_late")
    assert task_store.job_counts("spring")["Pending"] == 0


def test_a_schedule_fires_at_the_send_time_written_in_utc_with_retries_dlq_and_self_delete(
    target: email_schedules.ScheduleTarget,
) -> None:
    email = planned("a@example.org")
    assert email_schedules.ensure_schedule(email, target) is True
    schedule = boto3.client("scheduler", region_name=REGION).get_schedule(
        Name=email.schedule_name, GroupName=target.group
    )
    # 09:30 in Berlin (CET, UTC+1) is 08:30 UTC: an absolute instant, whatever the window's zone.
    assert schedule["ScheduleExpression"] == "at(2027-03-02T08:30:00)"
    assert schedule["ScheduleExpressionTimezone"] == "UTC"
    assert schedule["ActionAfterCompletion"] == "DELETE"
    assert schedule["FlexibleTimeWindow"] == {"Mode": "OFF"}
    assert schedule["Target"]["Arn"] == target.worker_arn
    assert schedule["Target"]["RoleArn"] == target.role_arn
    assert json.loads(schedule["Target"]["Input"]) == {"task_id": email.task_id}
    assert schedule["Target"]["RetryPolicy"]["MaximumRetryAttempts"] == 2
    assert schedule["Target"]["DeadLetterConfig"] == {"Arn": target.dlq_arn}


def test_creating_a_schedule_twice_creates_one(target: email_schedules.ScheduleTarget) -> None:
    email = planned("a@example.org")
    assert email_schedules.ensure_schedule(email, target) is True
    assert email_schedules.ensure_schedule(email, target) is False
    listed = boto3.client("scheduler", region_name=REGION).list_schedules(GroupName=target.group)
    assert [s["Name"] for s in listed["Schedules"]] == [email.schedule_name]


def test_a_stored_task_schedules_at_its_send_time_or_the_time_given(
    target: email_schedules.ScheduleTarget,
) -> None:
    email = planned("a@example.org", 2)
    task_store.create_email_tasks([email])
    task = _task(email.task_id)
    assert email_schedules.ensure_schedule(task, target) is True
    scheduler = boto3.client("scheduler", region_name=REGION)
    got = scheduler.get_schedule(Name=email.schedule_name, GroupName=target.group)
    assert got["ScheduleExpression"] == "at(2027-03-05T08:30:00)"
    assert email_schedules.delete_schedule(email.schedule_name, target) is True
    soon = datetime(2027, 3, 5, 10, 1, tzinfo=UTC)
    assert email_schedules.ensure_schedule(task, target, at=soon) is True
    got = scheduler.get_schedule(Name=email.schedule_name, GroupName=target.group)
    assert got["ScheduleExpression"] == "at(2027-03-05T10:01:00)"


def test_a_send_time_in_the_hour_the_clocks_go_back_is_scheduled_at_its_own_instant(
    target: email_schedules.ScheduleTarget,
) -> None:
    # Berlin's clocks go back at 03:00 CEST on 2027-10-31: 02:30 happens twice, at 00:30 and 01:30 UTC.
    second = replace(planned("a@example.org"), send_at=datetime(2027, 10, 31, 2, 30, tzinfo=BERLIN, fold=1))
    first = replace(planned("b@example.org"), send_at=datetime(2027, 10, 31, 2, 30, tzinfo=BERLIN, fold=0))
    email_schedules.ensure_schedule(second, target)
    email_schedules.ensure_schedule(first, target)
    scheduler = boto3.client("scheduler", region_name=REGION)
    expressions = [
        scheduler.get_schedule(Name=email.schedule_name, GroupName=target.group)["ScheduleExpression"]
        for email in (first, second)
    ]
    assert expressions == ["at(2027-10-31T00:30:00)", "at(2027-10-31T01:30:00)"]


def test_a_send_time_within_a_second_is_scheduled_at_the_next_whole_second_never_before(
    target: email_schedules.ScheduleTarget,
) -> None:
    # at() names whole seconds and Scheduler fires at it, never before: 08:30:00.2 is written 08:30:01
    late = replace(planned("a@example.org"), send_at=datetime(2027, 3, 2, 8, 30, 0, 200_000, tzinfo=UTC))
    exact = replace(planned("b@example.org"), send_at=datetime(2027, 3, 2, 8, 30, 0, tzinfo=UTC))
    for email in (late, exact):
        email_schedules.ensure_schedule(email, target)
    scheduler = boto3.client("scheduler", region_name=REGION)
    expressions = [
        scheduler.get_schedule(Name=email.schedule_name, GroupName=target.group)["ScheduleExpression"]
        for email in (late, exact)
    ]
    assert expressions == ["at(2027-03-02T08:30:01)", "at(2027-03-02T08:30:00)"]


def test_a_schedule_is_never_created_in_the_past(target: email_schedules.ScheduleTarget) -> None:
    email = planned("a@example.org")
    # The command wrote the task long before it got to the schedule: send_at has passed by then.
    now = email.send_at.timestamp() + 300.4
    clock.set_time_source(lambda: now)
    try:
        email_schedules.ensure_schedule(email, target)
        overdue = email_schedules.ensure_schedule(
            planned("b@example.org"), target, at=datetime.fromtimestamp(now - 30, UTC)
        )
    finally:
        clock.set_time_source(None)
    assert overdue is True
    scheduler = boto3.client("scheduler", region_name=REGION)
    for name in (email.schedule_name, planned("b@example.org").schedule_name):
        expression = scheduler.get_schedule(Name=name, GroupName=target.group)["ScheduleExpression"]
        fires = datetime.strptime(expression, "at(%Y-%m-%dT%H:%M:%S)").replace(tzinfo=UTC).timestamp()
        assert fires >= now + email_schedules.MIN_LEAD_SECONDS
        assert fires <= now + email_schedules.MIN_LEAD_SECONDS + 1


def test_deleting_or_finding_a_missing_schedule_is_no_error(target: email_schedules.ScheduleTarget) -> None:
    email = planned("a@example.org")
    assert email_schedules.schedule_exists(email.schedule_name, target) is False
    assert email_schedules.delete_schedule(email.schedule_name, target) is False
    email_schedules.ensure_schedule(email, target)
    assert email_schedules.schedule_exists(email.schedule_name, target) is True
    assert email_schedules.delete_schedule(email.schedule_name, target) is True
    assert email_schedules.schedule_exists(email.schedule_name, target) is False


def test_the_schedule_target_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMAIL_SCHEDULE_GROUP", "g")
    monkeypatch.setenv("EMAIL_WORKER_ARN", "arn:w")
    monkeypatch.setenv("EMAIL_SCHEDULER_ROLE_ARN", "arn:r")
    monkeypatch.setenv("EMAIL_DLQ_ARN", "arn:d")
    assert email_schedules.ScheduleTarget.from_env() == email_schedules.ScheduleTarget(
        "g", "arn:w", "arn:r", "arn:d"
    )
    monkeypatch.delenv("EMAIL_DLQ_ARN")
    with pytest.raises(errors.ConfigurationError, match="EMAIL_DLQ_ARN"):
        email_schedules.ScheduleTarget.from_env()
