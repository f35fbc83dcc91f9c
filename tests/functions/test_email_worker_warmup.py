"""The worker's warm-up cap of the sending identity, across campaigns: while the identity warms up, no
UTC day sends more emails than its ramp's cap, or than the account's 24-hour quota where that is lower;
the email past the cap is moved to the next UTC day inside its window (its schedule with it), never
dropped; an established identity is not counted."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from zoneinfo import ZoneInfo

import boto3
import pytest

from embedded_aws.ses_account import report_ses_account, set_ses_account
from outreach import contacts, email_schedules, task_store
from outreach.contacts import identity_days
from outreach.task_model import Status
from outreach.warmup_ramp import utc_day
from tests.functions.email_worker_support import invoke, stored_task
from tests.support.aws import REGION
from tests.support.email import FIRST_SEND, SCHEDULE_GROUP, SENDER_DOMAIN, planned

BERLIN = ZoneInfo("Europe/Berlin")
FIRST_DAY = FIRST_SEND.astimezone(BERLIN).date()  # a Tuesday: the ramp's day 1


@pytest.fixture
def warming(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The identity in its warm-up since the first send's UTC day: 2 emails on day 1, 4 on day 2; the
    account's quota answered by GetAccount (the embedded AWS's, moto has none)."""
    report_ses_account()
    set_ses_account(REGION)
    monkeypatch.setenv("WARMUP_START_DATE", utc_day(FIRST_SEND.timestamp()).isoformat())
    monkeypatch.setenv("WARMUP_DAILY_CAPS", "2,4")
    yield
    set_ses_account(REGION)


def _counted(day_offset: int = 0) -> int:
    day = utc_day(FIRST_SEND.timestamp()) + timedelta(days=day_offset)
    key = contacts.identity_day_key(SENDER_DOMAIN, day)
    return int(contacts.reads.records([key]).get(key, {}).get(identity_days.COUNT, 0))


def _fires_at(task_id: str) -> str:
    task = stored_task(task_id)
    assert task.email is not None
    found = boto3.client("scheduler", region_name=REGION).get_schedule(
        Name=task.email.schedule_name, GroupName=SCHEDULE_GROUP
    )
    return str(found["ScheduleExpression"])


def test_the_email_past_a_days_warmup_cap_goes_out_the_next_utc_day_inside_its_window(
    ses: list[float], warming: None
) -> None:
    emails = [
        planned("anna@example.org"),
        planned("ben@example.net", campaign="winter"),
        planned("cleo@example.de", campaign="autumn"),
    ]
    for email in emails:
        task_store.create_email_tasks([email])
        email_schedules.ensure_schedule(email, email_schedules.ScheduleTarget.from_env())

    outcomes = [invoke(email.task_id, f"request-{n}")["outcome"] for n, email in enumerate(emails)]

    assert outcomes == ["Sent", "Sent", "Deferred"]
    assert [stored_task(e.task_id).status for e in emails[:2]] == [Status.FINISHED, Status.FINISHED]
    assert _counted() == 2
    moved = stored_task(emails[2].task_id)
    assert moved.status is Status.PENDING and moved.email is not None
    # The next UTC day, at the email's own local time: Wednesday 09:30 in Berlin, inside its window.
    assert moved.email.send_time == FIRST_SEND + timedelta(days=1)
    assert _fires_at(emails[2].task_id) == email_schedules.at_expression(moved.email.send_time)

    ses[0] = moved.email.send_time.timestamp()
    assert invoke(emails[2].task_id, "request-next-day")["outcome"] == "Sent"
    assert stored_task(emails[2].task_id).status is Status.FINISHED
    assert (_counted(), _counted(1)) == (2, 1)


def test_the_accounts_24_hour_quota_is_the_ceiling_of_the_ramps_cap(ses: list[float], warming: None) -> None:
    set_ses_account(REGION, max_24_hour_send=1)
    emails = [planned("anna@example.org"), planned("ben@example.net", campaign="winter")]
    for email in emails:
        task_store.create_email_tasks([email])

    outcomes = [invoke(email.task_id, f"request-{n}")["outcome"] for n, email in enumerate(emails)]

    assert outcomes == ["Sent", "Deferred"]
    assert [stored_task(e.task_id).status for e in emails] == [Status.FINISHED, Status.PENDING]
    assert _counted() == 1


def test_an_established_identity_sends_without_a_count(ses: list[float]) -> None:
    emails = [planned(f"person{n}@example.org", campaign=f"c{n}") for n in range(3)]
    for email in emails:
        task_store.create_email_tasks([email])

    outcomes = [invoke(email.task_id, f"request-{n}")["outcome"] for n, email in enumerate(emails)]

    assert outcomes == ["Sent", "Sent", "Sent"]
    assert _counted() == 0
