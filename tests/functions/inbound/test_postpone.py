"""Rules of an absence's postponement: each open step of the campaign goes past the return date inside
the window, later steps keep their spacing, nothing moves earlier, and the schedules follow."""

from __future__ import annotations

from datetime import date

import boto3

from outreach import email_schedules, task_store
from outreach.email_task import PlannedEmail
from outreach.inbound.postpone import postpone_for_absence
from outreach.task_model import Status
from tests.functions import feedback_support
from tests.functions.feedback_support import mark_sent, stored
from tests.functions.inbound import inbound_support
from tests.functions.inbound.inbound_support import Inbound, campaign
from tests.support.aws import REGION

feedback = feedback_support.feedback  # fixtures, found by name
inbound = inbound_support.inbound

A = "ada@example.org"
# Step 1 Tue 2 March 09:30 Berlin (sent), step 2 Fri 5 March, step 3 Mon 8 March, step 4 Thu 11 March.


def _send_at(email: PlannedEmail) -> str:
    task = stored(email.task_id)
    assert task.email is not None
    return task.email.send_at


def _fires_at(inbound: Inbound, email: PlannedEmail) -> str:
    found = boto3.client("scheduler", region_name=REGION).get_schedule(
        Name=email.schedule_name, GroupName=inbound.target.group
    )
    return str(found["ScheduleExpression"])


def test_a_step_before_the_return_moves_to_the_next_window_day_and_later_steps_keep_their_spacing(
    inbound: Inbound,
) -> None:
    emails = campaign(inbound, [A], steps=4)[A]
    mark_sent(emails[0])
    # Back on Saturday 6 March: step 2 goes on Monday 8 March at its own 09:30; step 3, planned for that
    # Monday, keeps its three days after step 2 (Thursday 11 March), and step 4 its three after that
    # (Sunday 14 March, so Monday 15 March).
    done = postpone_for_absence(A, "spring", date(2027, 3, 6), inbound.target)
    assert [_send_at(email) for email in emails[1:]] == [
        "2027-03-08T08:30:00Z",
        "2027-03-11T08:30:00Z",
        "2027-03-15T08:30:00Z",
    ]
    assert [_fires_at(inbound, email) for email in emails[1:]] == [
        "at(2027-03-08T08:30:00)",
        "at(2027-03-11T08:30:00)",
        "at(2027-03-15T08:30:00)",
    ]
    assert (done.moved, done.schedules_moved) == (3, 3)
    task = stored(emails[1].task_id)
    assert task.status is Status.PENDING


def test_a_return_before_the_next_step_moves_nothing(inbound: Inbound) -> None:
    emails = campaign(inbound, [A])[A]
    mark_sent(emails[0])
    before = [_send_at(email) for email in emails[1:]]
    done = postpone_for_absence(A, "spring", date(2027, 3, 4), inbound.target)
    assert [_send_at(email) for email in emails[1:]] == before
    assert (done.moved, done.schedules_moved) == (0, 0)


def test_only_the_campaigns_own_emails_move(inbound: Inbound) -> None:
    spring = campaign(inbound, [A])[A]
    autumn = campaign(inbound, [A], name="autumn")[A]
    mark_sent(spring[0])
    before = [_send_at(email) for email in autumn]
    postpone_for_absence(A, "spring", date(2027, 3, 10), inbound.target)
    assert [_send_at(email) for email in autumn] == before
    assert _send_at(spring[1]) == "2027-03-10T08:30:00Z"


def test_a_claimed_step_is_left_to_its_worker(inbound: Inbound) -> None:
    emails = campaign(inbound, [A])[A]
    mark_sent(emails[0])
    task_store.claim_email(stored(emails[1].task_id), owner="worker", lease_seconds=300)
    postpone_for_absence(A, "spring", date(2027, 3, 10), inbound.target)
    claimed = stored(emails[1].task_id)
    assert claimed.status is Status.RUNNING and claimed.email is not None
    assert claimed.email.send_at == "2027-03-05T08:30:00Z"
    assert _send_at(emails[2]) == "2027-03-10T08:30:00Z"


def test_run_again_moves_nothing_and_puts_back_a_schedule_a_crash_left_behind(inbound: Inbound) -> None:
    emails = campaign(inbound, [A])[A]
    mark_sent(emails[0])
    postpone_for_absence(A, "spring", date(2027, 3, 10), inbound.target)
    # A crash between the task's move and its schedule's: the schedule still fires at the old time.
    email_schedules.delete_schedule(emails[1].schedule_name, inbound.target)
    email_schedules.ensure_schedule(emails[1], inbound.target)
    assert _fires_at(inbound, emails[1]) == "at(2027-03-05T08:30:00)"
    again = postpone_for_absence(A, "spring", date(2027, 3, 10), inbound.target)
    assert (again.moved, again.schedules_moved) == (0, 1)
    assert _fires_at(inbound, emails[1]) == "at(2027-03-10T08:30:00)"
    assert _send_at(emails[1]) == "2027-03-10T08:30:00Z"


def test_an_overdue_step_moves_no_earlier_than_a_minute_from_now(inbound: Inbound) -> None:
    emails = campaign(inbound, [A])[A]
    # The clock at Wednesday 10 March 12:00 Berlin; step 1 was never sent, back "today".
    inbound.clock[0] = 1804676400.0  # 2027-03-10T11:00:00Z
    postpone_for_absence(A, "spring", date(2027, 3, 10), inbound.target)
    assert _send_at(emails[0]) == "2027-03-10T11:01:00Z"
