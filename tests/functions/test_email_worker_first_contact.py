"""The worker's per-address first-contact rule across campaigns: a first step to an address another
campaign first contacted inside the gap is moved to the next allowed minute inside its window (its
schedule and its follow-ups with it), never sent early and never dropped; of two campaigns' workers
that read the same ledger record only one sends; a retried task keeps its own slot, taken again at
the moment it goes out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import boto3
import pytest
from botocore.exceptions import EndpointConnectionError

from outreach import config, contacts, email_schedules, task_store
from outreach.contacts import first_contacts
from outreach.task_model import Status
from tests.functions.email_worker_support import RecordingSes, invoke, stored_task
from tests.support.aws import REGION
from tests.support.email import FIRST_SEND, SCHEDULE_GROUP, planned

ADDRESS = "anna@example.org"
BERLIN = ZoneInfo("Europe/Berlin")


def _fires_at(task_id: str) -> str:
    task = stored_task(task_id)
    assert task.email is not None
    found = boto3.client("scheduler", region_name=REGION).get_schedule(
        Name=task.email.schedule_name, GroupName=SCHEDULE_GROUP
    )
    return str(found["ScheduleExpression"])


def _slots() -> dict[str, Any]:
    record = contacts.reads.records([contacts.address_key(ADDRESS)])
    return dict(first_contacts.FirstContacts.from_item(record[contacts.address_key(ADDRESS)]).taken)


def test_a_first_step_inside_another_campaigns_gap_is_moved_into_its_window_with_its_follow_up(
    recording_ses: RecordingSes, ses: list[float]
) -> None:
    gap = config.first_contact_gap_seconds()
    earlier = planned(ADDRESS, 1, campaign="winter")
    first, second = planned(ADDRESS, 1), planned(ADDRESS, 2)
    task_store.create_email_tasks([earlier])
    task_store.create_email_tasks([first, second])
    # Planned as `campaign schedule` plans them: each task with its schedule at its send time.
    for email in (first, second):
        email_schedules.ensure_schedule(email, email_schedules.ScheduleTarget.from_env())
    assert invoke(earlier.task_id)["outcome"] == "Sent"

    ses[0] = FIRST_SEND.timestamp() + 3_600
    assert invoke(first.task_id)["outcome"] == "Deferred"

    assert len(recording_ses.requests) == 1
    moved = stored_task(first.task_id)
    assert moved.status is Status.PENDING and moved.email is not None
    new_time = moved.email.send_time
    assert new_time.timestamp() >= FIRST_SEND.timestamp() + gap
    local = new_time.astimezone(BERLIN)
    assert local.weekday() < 5 and 9 <= local.hour < 17 and local.second == 0
    # The next allowed minute: the gap ends at 09:30 on a Tuesday, inside the window, so exactly there.
    assert new_time == FIRST_SEND + timedelta(seconds=gap)
    assert _fires_at(first.task_id) == email_schedules.at_expression(new_time)
    # The follow-up keeps its planned three days after the first step.
    follow_up = stored_task(second.task_id)
    assert follow_up.email is not None
    assert follow_up.email.send_time - new_time >= second.send_at - first.send_at
    assert _fires_at(second.task_id) == email_schedules.at_expression(follow_up.email.send_time)

    ses[0] = new_time.timestamp()
    assert invoke(first.task_id, "request-2")["outcome"] == "Sent"
    assert len(recording_ses.requests) == 2
    assert set(_slots()) == {earlier.task_id, first.task_id}


def test_of_two_campaigns_workers_that_read_the_same_record_only_one_sends_a_first_contact(
    recording_ses: RecordingSes, ses: list[float], monkeypatch: Any
) -> None:
    spring, summer = planned(ADDRESS, 1), planned(ADDRESS, 1, campaign="summer")
    task_store.create_email_tasks([spring])
    task_store.create_email_tasks([summer])
    write = first_contacts._write
    raced: list[dict[str, str]] = []
    started: list[bool] = []

    def summer_goes_first(*args: Any) -> bool:
        # Spring read the record (no slots, version 0) and is about to write: summer runs whole now.
        if not started:
            started.append(True)
            raced.append(invoke(summer.task_id, "request-summer"))
        return write(*args)

    monkeypatch.setattr(first_contacts, "_write", summer_goes_first)
    assert invoke(spring.task_id, "request-spring")["outcome"] == "Deferred"

    assert raced == [{"task_id": summer.task_id, "outcome": "Sent"}]
    assert [r["Destination"]["ToAddresses"] for r in recording_ses.requests] == [[ADDRESS]]
    assert list(_slots()) == [summer.task_id]
    deferred = stored_task(spring.task_id)
    assert deferred.status is Status.PENDING and deferred.email is not None
    assert deferred.email.send_time.timestamp() >= FIRST_SEND.timestamp() + config.first_contact_gap_seconds()


def test_a_retried_first_step_sends_on_the_slot_it_took_before_the_failure(
    recording_ses: RecordingSes, ses: list[float], monkeypatch: Any
) -> None:
    email = planned(ADDRESS, 1)
    task_store.create_email_tasks([email])
    failures = [RuntimeError("connection refused before the request")]

    def refuse_once(**request: Any) -> Any:
        if failures:
            failures.pop()
            raise EndpointConnectionError(endpoint_url="https://email.eu-west-1.amazonaws.com")
        return RecordingSes.send_email(recording_ses, **request)

    monkeypatch.setattr(recording_ses, "send_email", refuse_once)
    with pytest.raises(EndpointConnectionError):  # raised for Lambda's async retry
        invoke(email.task_id)
    assert stored_task(email.task_id).status is Status.PENDING
    assert list(_slots()) == [email.task_id]

    assert invoke(email.task_id, "request-2")["outcome"] == "Sent"
    assert len(recording_ses.requests) == 1
    assert list(_slots()) == [email.task_id]


def test_follow_ups_are_not_first_contacts_and_take_no_slot(
    recording_ses: RecordingSes, ses: list[float]
) -> None:
    other = planned(ADDRESS, 1, campaign="winter")
    first, second = planned(ADDRESS, 1), planned(ADDRESS, 2)
    task_store.create_email_tasks([first, second])
    task_store.create_email_tasks([other])
    assert invoke(first.task_id)["outcome"] == "Sent"
    # Another campaign's first contact, in the same gap, is moved; this campaign's follow-up is not.
    ses[0] = second.send_at.timestamp()
    assert invoke(second.task_id)["outcome"] == "Sent"
    assert list(_slots()) == [first.task_id]
    assert datetime.fromtimestamp(ses[0], UTC) == second.send_at


def test_a_first_step_that_did_not_go_out_takes_its_slot_again_at_the_moment_it_is_sent(
    recording_ses: RecordingSes, ses: list[float], monkeypatch: Any
) -> None:
    # GIVEN a 10-minute gap, and spring's first step that took its slot at 09:30 but was not sent
    monkeypatch.setenv("FIRST_CONTACT_GAP_SECONDS", "600")
    spring, summer = planned(ADDRESS, 1), planned(ADDRESS, 1, campaign="summer")
    task_store.create_email_tasks([spring])
    task_store.create_email_tasks([summer])
    refused = [EndpointConnectionError(endpoint_url="https://email.eu-west-1.amazonaws.com")]

    def refuse_once(**request: Any) -> Any:
        if refused:
            raise refused.pop()
        return RecordingSes.send_email(recording_ses, **request)

    monkeypatch.setattr(recording_ses, "send_email", refuse_once)
    with pytest.raises(EndpointConnectionError):
        invoke(spring.task_id)
    # WHEN summer's first step goes out one gap later, and spring's is tried again a minute after that
    ses[0] = FIRST_SEND.timestamp() + 600
    assert invoke(summer.task_id, "request-summer")["outcome"] == "Sent"
    ses[0] = FIRST_SEND.timestamp() + 660
    # THEN spring's slot is judged at the moment it would go out, not at the one it held: it is deferred
    assert invoke(spring.task_id, "request-2")["outcome"] == "Deferred"
    moved = stored_task(spring.task_id)
    assert moved.email is not None
    assert moved.email.send_time.timestamp() >= FIRST_SEND.timestamp() + 1_200
    ses[0] = moved.email.send_time.timestamp()
    assert invoke(spring.task_id, "request-3")["outcome"] == "Sent"
    assert len(recording_ses.requests) == 2
    slots = _slots()
    assert slots[spring.task_id] == moved.email.send_time.timestamp()
    assert slots[spring.task_id] - slots[summer.task_id] >= 600
