"""A two-step campaign on the embedded AWS: one-time schedules fire on the virtual clock, the worker
sends through SES while SES throttles some sends and one worker dies right after its send.

The end state: every task terminal (nothing lost), exactly one email per task that went out, each
Finished task naming its email, none sent before its time or later than the send grace allows (the
product's promise: an email the worker could not send on time, e.g. after its throttled retry aged out
on a loaded machine, is sent by the email reconciler inside the grace or not at all).
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from embedded_aws.ses_faults import inject_ses
from embedded_aws.ses_v2 import SentEmail, sent_emails
from outreach import email_schedules, task_store
from outreach.email_task import EmailMessage, PlannedEmail
from outreach.task_model import Kind
from tests.e2e.conftest import E2E
from tests.e2e.stacks import SECOND_STACK

# Its own waits allow the 1,000 emails 1,200 s on a loaded machine; the suite's 300 s would cut them short.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500), SECOND_STACK]

RECIPIENTS = 500
CAMPAIGN = "campaign-e2e"
TIMEZONE = "Europe/Berlin"
# Sends of a step are spread 1.2 s apart (50 a minute); the follow-up goes out 40 minutes later.
SPACING_SECONDS = 1.2
FOLLOW_UP_AFTER = timedelta(minutes=40)
THROTTLED = 10


def _plan(sender: str, start: datetime) -> list[PlannedEmail]:
    planned: list[PlannedEmail] = []
    for step, offset in ((1, timedelta(0)), (2, FOLLOW_UP_AFTER)):
        for i in range(RECIPIENTS):
            recipient = f"lead{i:03d}@customer{i % 37}.example"
            planned.append(
                PlannedEmail(
                    campaign_id=CAMPAIGN,
                    step=step,
                    send_at=start + offset + timedelta(seconds=SPACING_SECONDS * i),
                    timezone=TIMEZONE,
                    message=EmailMessage(
                        sender=sender,
                        to=recipient,
                        subject=f"Step {step} for lead {i:03d}",
                        text="Hello",
                        unsubscribe=f"mailto:unsubscribe@{sender.split('@', 1)[1]}",
                    ),
                )
            )
    return planned


def _send_grace(e2e: E2E) -> timedelta:
    """How late an email may still go out: the applied worker's ``EMAIL_SEND_GRACE_SECONDS``."""
    stack = e2e.stack
    with stack.as_caller():
        worker = boto3.client("lambda").get_function_configuration(
            FunctionName=str(stack.outputs["email_worker_arn"])
        )
    return timedelta(seconds=int(worker["Environment"]["Variables"]["EMAIL_SEND_GRACE_SECONDS"]))


def _email_rows(e2e: E2E) -> dict[str, dict[str, Any]]:
    return e2e.task_rows(CAMPAIGN, Kind.EMAIL)


def _not_finished(e2e: E2E) -> dict[str, tuple[str, str]]:
    """Every email task that did not finish, with its status and failure reason (for a failed assert)."""
    return {
        task_id: (str(row["status"]), str(row.get("failure_reason", "")))
        for task_id, row in _email_rows(e2e).items()
        if row["status"] != "Finished"
    }


def test_a_two_step_campaign_sends_one_email_per_task_inside_its_window_under_throttling_and_a_crash(
    e2e: E2E,
) -> None:
    stack = e2e.stack
    outputs = stack.outputs
    target = email_schedules.ScheduleTarget(
        group=str(outputs["email_schedule_group"]),
        worker_arn=str(outputs["email_worker_arn"]),
        role_arn=str(outputs["email_scheduler_role_arn"]),
        dlq_arn=str(outputs["email_dlq_arn"]),
    )
    sender = f"campaigns@{outputs['email_sender_identity']}"
    start = datetime.fromtimestamp(stack.clock.now(), tz=UTC).replace(second=0, microsecond=0)
    start += timedelta(minutes=3)
    planned = _plan(sender, start)
    step_one = [p for p in planned if p.step == 1]
    throttled = {p.message.to for p in step_one[:THROTTLED]}
    crashed = step_one[THROTTLED]

    with inject_ses() as faults:
        throttle = faults.throttle(throttled, times=1)
        death = faults.die_after_send({crashed.message.to}, stack.clock, hold_seconds=90)
        with stack.as_caller():
            created = task_store.create_email_tasks(planned)
            scheduled = sum(email_schedules.ensure_schedule(p, target) for p in planned)
            again = task_store.create_email_tasks(planned)
            # The follow-ups' schedules: none can have fired (and deleted itself) yet, however slow this is.
            rescheduled = sum(email_schedules.ensure_schedule(p, target) for p in planned[-50:])
        assert (len(created.created), scheduled) == (2 * RECIPIENTS, 2 * RECIPIENTS)
        assert (again.created, rescheduled) == ([], 0)
        # No idle skipping: a clock jump while the schedules wait to fire would make them late.
        counts = e2e.wait_terminal(CAMPAIGN, 2 * RECIPIENTS, timeout=1200.0, idle_skip=0.0)

    assert throttle.fired == THROTTLED
    assert death.fired == 1
    assert counts["Pending"] == counts["Running"] == 0
    assert (counts["Finished"], counts["Failed"], counts["Cancelled"]) == (
        2 * RECIPIENTS - 2,
        1,
        1,
    ), (counts, _not_finished(e2e))

    rows = _email_rows(e2e)
    crashed_row = rows[crashed.task_id]
    assert (crashed_row["status"], str(crashed_row["failure_reason"]).split(":")[0]) == (
        "Failed",
        "delivery_unknown",
    )
    follow_up = rows[next(p.task_id for p in planned if p.step == 2 and p.message.to == crashed.message.to)]
    assert follow_up["status"] == "Cancelled"
    assert all(int(rows[p.task_id]["attempts"]) == 2 for p in step_one[:THROTTLED])

    emails: list[SentEmail] = [e for e in sent_emails(stack.region) if e.sender == sender]
    per_task = Counter((e.to, e.subject) for e in emails)
    assert set(per_task.values()) == {1}, [key for key, n in per_task.items() if n > 1]
    finished = {str(r["ses_message_id"]) for r in rows.values() if r["status"] == "Finished"}
    assert len(emails) == len(finished) + 1
    assert finished <= {e.message_id for e in emails}

    by_key = {(p.message.to, p.message.subject): p for p in planned}
    grace = _send_grace(e2e)
    for email in emails:
        plan = by_key[(email.to[0], email.subject)]
        latest = plan.send_at + grace
        assert plan.send_at.timestamp() <= email.sent_at <= latest.timestamp(), (email, plan.send_at)
    e2e.record(
        "email_campaign",
        recipients=RECIPIENTS,
        emails=len(emails),
        finished=counts["Finished"],
        throttled_sends=throttle.fired,
        latest_send_seconds=max(
            email.sent_at - by_key[(email.to[0], email.subject)].send_at.timestamp() for email in emails
        ),
    )
