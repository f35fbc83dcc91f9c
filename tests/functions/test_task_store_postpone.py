"""Rules of ``postpone_email``: a Pending, unclaimed email moves later only from the send time that was
read, its status and counters kept, and never earlier than planned."""

from __future__ import annotations

import pytest

from outreach import task_store
from outreach.email_task import PlannedEmail
from outreach.errors import TransitionRejectedError
from outreach.task_model import Status, Task
from outreach.task_store.transitions import postpone_email
from tests.support.aws import Resources
from tests.support.email import planned

LATER = "2027-03-10T08:30:00Z"


def _stored(email: PlannedEmail) -> Task:
    task = task_store.get_task(email.task_id)
    assert task is not None
    return task


@pytest.fixture
def email(resources: Resources) -> PlannedEmail:
    planned_email = planned("ada@example.org", 2)
    task_store.create_email_tasks([planned_email])
    return planned_email


def test_a_pending_email_moves_later_keeping_its_status_and_counters(email: PlannedEmail) -> None:
    before = _stored(email)
    assert before.email is not None
    postpone_email(before, send_at=LATER)
    after = _stored(email)
    assert after.email is not None
    assert (after.status, after.email.send_at) == (Status.PENDING, LATER)
    row = task_store.batch_get([email.task_id])[0]
    assert row["postponed_from"] == before.email.send_at
    assert row["postponed_at"] == row["updated_at"]
    assert task_store.job_counts("spring")["Pending"] == 1


def test_a_postponement_from_a_send_time_no_longer_there_is_refused(email: PlannedEmail) -> None:
    read = _stored(email)
    postpone_email(read, send_at=LATER)
    with pytest.raises(TransitionRejectedError):
        postpone_email(read, send_at="2027-03-12T08:30:00Z")
    moved = _stored(email)
    assert moved.email is not None and moved.email.send_at == LATER


def test_a_claimed_email_is_not_postponed(email: PlannedEmail) -> None:
    read = _stored(email)
    task_store.claim_email(read, owner="worker", lease_seconds=300)
    with pytest.raises(TransitionRejectedError):
        postpone_email(read, send_at=LATER)
    claimed = _stored(email)
    assert claimed.status is Status.RUNNING
    assert claimed.email is not None and read.email is not None
    assert claimed.email.send_at == read.email.send_at


@pytest.mark.parametrize("send_at", ["2027-03-05T08:30:00Z", "2027-03-01T08:30:00Z"])
def test_an_email_never_moves_earlier_than_planned(email: PlannedEmail, send_at: str) -> None:
    read = _stored(email)
    assert read.email is not None and read.email.send_at == "2027-03-05T08:30:00Z"
    with pytest.raises(ValueError, match="later"):
        postpone_email(read, send_at=send_at)
    assert _stored(email).updated_at == read.updated_at
