"""A campaign scheduled by the command line on moto: the example campaign, its schedules, its sends.

Shared by the campaign command tests and the contact ledger's tests (a block cancels a scheduled
campaign's emails; planning leaves stopped addresses out). The fixtures they use (``email_flags``,
``ses``, ``ses_account``) are in ``conftest``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import boto3
import yaml

from outreach import email_worker
from tests.support.aws import REGION, Resources
from tests.support.lambda_context import FakeContext

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
CAMPAIGN = EXAMPLES / "campaign.yaml"
RECIPIENTS = EXAMPLES / "recipients.csv"
CAMPAIGN_ID = "spring-outreach-2027"
GROUP = "outreach-test-email"
START = "2027-03-01T08:00:00"  # a Monday, an hour before the example's window opens in Berlin
# What the campaign lint asks each body of the example campaign to state (compliance.rules).
STATEMENTS = "\n{{ unsubscribe }}\n{{ postal_address }}\nFrom {{ data_source }}.\n"


def schedule_example(
    run: Callable[..., Any],
    flags: list[str],
    *args: str,
    recipients: Path = RECIPIENTS,
    start: str = START,
    campaign: Path = CAMPAIGN,
) -> Any:
    return run(
        "campaign", "schedule", "--campaign", str(campaign), "--recipients", str(recipients),
        "--start", start, *args, extra=["--json", *flags],
    )  # fmt: skip


def campaign_file(tmp_path: Path, **changes: Any) -> Path:
    """The example campaign with ``changes`` to its top-level fields, as a JSON campaign file."""
    data = yaml.safe_load(CAMPAIGN.read_text(encoding="utf-8"))
    data.update(changes)
    path = tmp_path / "campaign.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def schedules() -> dict[str, dict[str, Any]]:
    scheduler = boto3.client("scheduler", region_name=REGION)
    names = [s["Name"] for s in scheduler.list_schedules(GroupName=GROUP)["Schedules"]]
    found = {}
    for name in names:
        got = scheduler.get_schedule(Name=name, GroupName=GROUP)
        found[name] = {
            "expression": got["ScheduleExpression"],
            "zone": got["ScheduleExpressionTimezone"],
            "input": json.loads(got["Target"]["Input"]),
            "after": got["ActionAfterCompletion"],
            "retries": got["Target"]["RetryPolicy"]["MaximumRetryAttempts"],
            "dlq": got["Target"]["DeadLetterConfig"]["Arn"],
        }
    return found


def email_items(resources: Resources) -> list[dict[str, Any]]:
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    items = dynamodb.scan(TableName=resources.table, ConsistentRead=True)["Items"]
    return sorted(
        (item for item in items if item["kind"]["S"] == "email"), key=lambda item: item["task_id"]["S"]
    )


def csv_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "r.csv"
    path.write_text(text, encoding="utf-8")
    return path


def fire_due_schedules(now: float) -> list[dict[str, Any]]:
    """Invoke the worker with the input of every schedule due by ``now``, as Scheduler would; the
    inputs it was invoked with."""
    scheduler = boto3.client("scheduler", region_name=REGION)
    fired = []
    for listed in scheduler.list_schedules(GroupName=GROUP)["Schedules"]:
        schedule = scheduler.get_schedule(Name=listed["Name"], GroupName=GROUP)
        zone = ZoneInfo(schedule["ScheduleExpressionTimezone"])
        due = datetime.fromisoformat(schedule["ScheduleExpression"].removeprefix("at(").removesuffix(")"))
        if due.replace(tzinfo=zone).timestamp() <= now:
            event = json.loads(schedule["Target"]["Input"])
            email_worker.lambda_handler(event, FakeContext())
            scheduler.delete_schedule(Name=listed["Name"], GroupName=GROUP)  # ActionAfterCompletion DELETE
            fired.append(event)
    return fired
