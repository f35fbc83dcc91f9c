"""``campaign schedule`` stopped halfway and run again: no task and no schedule twice, none missing.

The first run stops while it writes the tasks, the second while it creates the schedules; the third
finishes. Task ids and schedule names derive from campaign, recipient and step, so what the earlier
runs wrote is found again, not written twice, and the counters count every task once.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from outreach import task_store
from outreach.email_task import email_schedule_name
from tests.outreach_operator.cli.campaign_support import CAMPAIGN_ID, GROUP, csv_file
from tests.outreach_operator.cli.campaign_support import email_items as _email_items
from tests.outreach_operator.cli.campaign_support import schedule_example as _schedule
from tests.outreach_operator.cli.conftest import Run, as_json, hook_clients, unhook_clients
from tests.support.aws import REGION, Resources

# 60 recipients x 2 steps: 120 emails, written in several transactions (one per counter shard).
RECIPIENTS = 60
pytestmark = pytest.mark.usefixtures("ses_account")


def _recipients(tmp_path: Path) -> Path:
    rows = "".join(
        f"info@company-{i}.example,Company {i},https://company-{i}.example/,\n" for i in range(RECIPIENTS)
    )
    return csv_file(tmp_path, "email,company,website,contact_name\n" + rows)


def _schedules() -> dict[str, dict[str, Any]]:
    """Every schedule of the group (ListSchedules page by page), by name: its expression and input."""
    scheduler = boto3.client("scheduler", region_name=REGION)
    found: dict[str, dict[str, Any]] = {}
    for page in scheduler.get_paginator("list_schedules").paginate(GroupName=GROUP):
        for listed in page["Schedules"]:
            assert listed["Name"] not in found
            got = scheduler.get_schedule(Name=listed["Name"], GroupName=GROUP)
            found[listed["Name"]] = {
                "expression": got["ScheduleExpression"],
                "input": json.loads(got["Target"]["Input"]),
            }
    return found


def _stopped_at(run: Run, flags: list[str], recipients: Path, event: str, nth: int) -> Any:
    """``campaign schedule`` with the ``nth`` call of ``event`` failing (an error no retry hides)."""
    seen: list[int] = []

    def fail_the_nth(**_: Any) -> None:
        seen.append(1)
        if len(seen) == nth:
            raise ClientError({"Error": {"Code": "InternalServerException", "Message": "stop"}}, event)

    hook_clients(event, fail_the_nth, "test-stop")
    try:
        return _schedule(run, flags, recipients=recipients)
    finally:
        unhook_clients(event, "test-stop")


def test_a_schedule_run_stopped_twice_then_run_again_writes_every_email_and_schedule_exactly_once(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path
) -> None:
    recipients = _recipients(tmp_path)
    first = _stopped_at(run, email_flags, recipients, "before-call.dynamodb.TransactWriteItems", 2)
    assert first.exit_code == 1, first.output
    written_first = len(_email_items(resources))
    assert 0 < written_first < 2 * RECIPIENTS
    assert _schedules() == {}
    second = _stopped_at(run, email_flags, recipients, "before-call.scheduler.CreateSchedule", 50)
    assert second.exit_code == 1, second.output
    assert len(_email_items(resources)) == 2 * RECIPIENTS
    assert 0 < len(_schedules()) < 2 * RECIPIENTS
    third = as_json(_schedule(run, email_flags, recipients=recipients))
    assert third["created"] == 0 and third["existing"] == 2 * RECIPIENTS
    assert third["schedules_created"] + third["schedules_existing"] == 2 * RECIPIENTS
    items = _email_items(resources)
    task_ids = [item["task_id"]["S"] for item in items]
    assert len(task_ids) == len(set(task_ids)) == 2 * RECIPIENTS
    assert {item["status"]["S"] for item in items} == {"Pending"}
    schedules = _schedules()
    assert set(schedules) == {email_schedule_name(task_id) for task_id in task_ids}
    for item in items:
        schedule = schedules[email_schedule_name(item["task_id"]["S"])]
        assert schedule["input"] == {"task_id": item["task_id"]["S"]}
        send_at = datetime.fromisoformat(item["send_at"]["S"].replace("Z", "+00:00")).astimezone(UTC)
        assert schedule["expression"] == f"at({send_at.strftime('%Y-%m-%dT%H:%M:%S')})"
    counts = task_store.job_counts(CAMPAIGN_ID)
    assert counts["Pending"] == sum(counts.values()) == 2 * RECIPIENTS
    steps = task_store.step_counts(CAMPAIGN_ID)
    assert steps.uncounted == 0
    assert steps.statuses[1]["Pending"] == steps.statuses[2]["Pending"] == RECIPIENTS
