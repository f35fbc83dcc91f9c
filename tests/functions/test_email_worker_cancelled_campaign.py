"""A cancelled campaign sends nothing: each of its schedules that fires after the cancel invokes the
worker for a Cancelled task, which sends no email, and the schedule deletes itself after that one
invocation (``ActionAfterCompletion=DELETE``)."""

from __future__ import annotations

import json

import boto3

from embedded_aws.ses_v2 import sent_emails
from outreach import email_worker, task_store
from outreach.email_schedules import ScheduleTarget, ensure_schedule
from outreach.task_model import Status
from outreach_operator import task_actions
from tests.functions.email_worker_support import stored_task
from tests.support.aws import REGION
from tests.support.email import SCHEDULE_GROUP, planned
from tests.support.lambda_context import FakeContext


def test_schedules_firing_after_a_campaign_cancel_send_no_email(ses: list[float]) -> None:
    emails = [planned(f"lead{i}@example.org", step) for i in range(4) for step in (1, 2)]
    task_store.create_email_tasks(emails)
    target = ScheduleTarget.from_env()
    assert all(ensure_schedule(email, target) for email in emails)
    # The cancel of `campaign cancel`: the tasks only, in batches; the schedules stay.
    outcome = task_actions.cancel_many(
        [stored_task(email.task_id) for email in emails], reason="campaign cancelled by operator (by test)"
    )
    assert sorted(outcome.applied) == sorted(email.task_id for email in emails)
    scheduler = boto3.client("scheduler", region_name=REGION)
    outcomes = []
    for email in emails:
        schedule = scheduler.get_schedule(Name=email.schedule_name, GroupName=SCHEDULE_GROUP)
        assert schedule["ActionAfterCompletion"] == "DELETE"
        # The schedule fires at its send time, after the cancel, with the input it was created with.
        ses[0] = email.send_at.timestamp() + 1
        event = json.loads(schedule["Target"]["Input"])
        outcomes.append(
            email_worker.lambda_handler(event, FakeContext(aws_request_id=email.task_id))["outcome"]
        )
    assert outcomes == ["AlreadyTerminal"] * len(emails)
    assert sent_emails(REGION) == []
    assert {stored_task(email.task_id).status for email in emails} == {Status.CANCELLED}
    counts = task_store.job_counts("spring")
    assert (counts["Cancelled"], counts["Pending"], counts["Running"], counts["Finished"]) == (8, 0, 0, 0)
