"""Rules of a stop's fan-out: every Pending email to the address, in every campaign, is cancelled with
the stop's reason and its schedule deleted; a claimed (Running) one is left to its worker; a repeated
fan-out cancels nothing twice."""

from __future__ import annotations

import boto3

from outreach import contacts, email_schedules, task_store
from outreach.contacts import Source, State
from outreach.task_model import Status
from tests.functions.contacts.ledger_support import at
from tests.support.aws import REGION, Resources
from tests.support.email import planned

GROUP = "outreach-test-email"
TARGET = email_schedules.ScheduleTarget(
    group=GROUP,
    worker_arn=f"arn:aws:lambda:{REGION}:123456789012:function:outreach-test-email-worker",
    role_arn="arn:aws:iam::123456789012:role/outreach-test-email-scheduler",
    dlq_arn=f"arn:aws:sqs:{REGION}:123456789012:outreach-test-email-dlq",
)


def test_a_stop_cancels_the_pending_emails_of_every_campaign_and_leaves_the_claimed_one(
    resources: Resources,
) -> None:
    boto3.client("scheduler", region_name=REGION).create_schedule_group(Name=GROUP)
    stopped, other = "Anna@Example.org", "bert@example.org"
    emails = {
        (campaign, address, step): planned(address, step, campaign=campaign)
        for campaign in ("spring", "autumn")
        for address in (stopped, other)
        for step in (1, 2, 3)
    }
    for campaign in ("spring", "autumn"):
        task_store.create_email_tasks([e for (c, _, _), e in emails.items() if c == campaign])
    for email in emails.values():
        email_schedules.ensure_schedule(email, TARGET)
    # spring's first mail to the address is being sent right now: its worker holds the claim.
    claimed_id = emails[("spring", stopped, 1)].task_id
    pending = task_store.get_task(claimed_id)
    assert pending is not None
    task_store.claim_email(pending, owner="worker-1", lease_seconds=60)

    stop_key = contacts.address_key("anna@example.org")
    assert contacts.record_stop(
        stop_key, State.UNSUBSCRIBED, at=at(1), why="one-click", source=Source.UNSUBSCRIBE
    )
    stop = contacts.stop_of(stopped)
    assert stop is not None
    fan = contacts.cancel_open_emails("ANNA@example.org", stop.reason, GROUP)

    assert fan == contacts.FanOut(cancelled=5, already_moved=1, schedules_deleted=5)
    for (_, address, _), email in emails.items():
        task = task_store.get_task(email.task_id)
        assert task is not None
        exists = email_schedules.schedule_exists(email.schedule_name, TARGET)
        if email.task_id == claimed_id:
            assert task.status is Status.RUNNING
            assert task.lease is not None
            assert task.lease.owner == "worker-1"
        elif address == stopped:
            assert (task.status, task.failure_reason) == (Status.CANCELLED, stop.reason)
            assert stop.reason.startswith("contact_stopped: unsubscribed since 2027-03-02T08:01:00Z")
            assert not exists
            continue
        else:
            assert task.status is Status.PENDING
        assert exists
    # Counted as every status change is: spring has 1 Running and 2 Cancelled of its 6.
    spring = task_store.job_counts("spring")
    assert (spring["Pending"], spring["Running"], spring["Cancelled"]) == (3, 1, 2)

    # The event delivered again: nothing is cancelled twice, and nothing is left to delete.
    assert contacts.cancel_open_emails(stopped, stop.reason, GROUP) == contacts.FanOut(already_moved=1)
    assert task_store.job_counts("spring")["Cancelled"] == 2


def test_a_fan_out_stopped_between_the_cancel_and_the_delete_deletes_the_schedule_when_run_again(
    resources: Resources,
) -> None:
    boto3.client("scheduler", region_name=REGION).create_schedule_group(Name=GROUP)
    email = planned("anna@example.org")
    task_store.create_email_tasks([email])
    email_schedules.ensure_schedule(email, TARGET)
    task = task_store.get_task(email.task_id)
    assert task is not None
    task_store.cancel_for_stop(task, reason="contact_stopped: complained since 2027-03-02T08:01:00Z (x)")
    assert email_schedules.schedule_exists(email.schedule_name, TARGET)
    fan = contacts.cancel_open_emails("anna@example.org", "contact_stopped: again", GROUP)
    assert fan == contacts.FanOut(schedules_deleted=1)
    assert not email_schedules.schedule_exists(email.schedule_name, TARGET)
    cancelled = task_store.get_task(email.task_id)
    assert cancelled is not None
    assert cancelled.failure_reason == "contact_stopped: complained since 2027-03-02T08:01:00Z (x)"
