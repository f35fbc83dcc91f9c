"""The operator's commands on a campaign of 7,200 emails: schedule, status, job list and cancel timed.

The example campaign (two steps) is scheduled for ``recipients`` recipients with ``outreach campaign
schedule`` on moto in-process, then ``campaign status``, ``job list`` and ``campaign cancel`` run
against it, each through the command line as an operator runs it (click's runner, ``--json``). The
cancel's second row is the seconds from its start until its last transaction returned: from then on
no email of the campaign can be sent (every Pending task Cancelled; a schedule that fires finds its
task Cancelled). ``campaign status`` is read twice for its items read (each Query's ``ScannedCount``):
with the campaign alone, and with a second campaign of as many emails scheduled beside it. Every
AWS call is counted (``call_counter``), so the rows say how many Scan calls each read made besides its
wall time. moto answers in-process: a call's cost here is moto's Python, so the times are those of
the embedded AWS on the machine, not of AWS; the calls are what AWS would bill.
"""

from __future__ import annotations

import csv
import json
import time
from datetime import UTC, datetime
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import boto3
from click.testing import CliRunner

from embedded_aws.service_quotas import support_list_service_quotas
from embedded_aws.ses_account import report_ses_account
from embedded_aws.ses_v2 import support_ses_v2
from outreach_dev.bench import call_counter
from outreach_dev.bench.report import Figure, MeasurementError, Section
from outreach_dev.bench.sandbox import ACCOUNT, REGION, sandbox
from outreach_dev.contacts_table_shape import create_contacts_table
from outreach_operator.cli.app import cli

CAMPAIGN = Path(__file__).resolve().parents[3] / "examples" / "campaign.yaml"
CAMPAIGN_ID = "spring-outreach-2027"
OTHER_CAMPAIGN_ID = "autumn-outreach-2027"
# The targets of issues 28 and 45 ("The operator's commands"), in seconds.
CANCEL_TARGET = 30.0
NOTHING_SENDABLE_TARGET = 5.0
STATUS_TARGET = 3.0
SCHEDULE_TARGET = 20.0


def _recipients(path: Path, count: int) -> None:
    """``count`` recipients, one company each, at distinct domains (no domain pacing moves them)."""
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["email", "company", "website", "contact_name"])
        for i in range(count):
            writer.writerow(
                [f"info@company-{i}.example", f"Company {i}", f"https://company-{i}.example/", ""]
            )


def _email_flags(prefix: str) -> list[str]:
    """The schedule group, the email DLQ and the worker's names, created as modules/email declares them."""
    group = f"{prefix}-email"
    boto3.client("scheduler", region_name=REGION).create_schedule_group(Name=group)
    sqs = boto3.client("sqs", region_name=REGION)
    dlq_url = sqs.create_queue(QueueName=f"{prefix}-email-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    return [
        "--email-schedule-group", group,
        "--email-worker-arn", f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{prefix}-email-worker",
        "--email-scheduler-role-arn", f"arn:aws:iam::{ACCOUNT}:role/{prefix}-email-scheduler",
        "--email-dlq-arn", dlq_arn,
    ]  # fmt: skip


def _timed(flags: list[str], *args: str) -> tuple[float, Any, call_counter.CallCount]:
    """One command through the command line: its wall time, its JSON report and its AWS calls."""
    with call_counter.call_count() as count, count.counting():
        began = time.perf_counter()
        result = CliRunner().invoke(cli, [*flags, "--json", *args], env={"OUTREACH_OPERATOR": "bench"})
        seconds = time.perf_counter() - began
    if result.exit_code != 0:
        raise MeasurementError(f"{' '.join(args[:2])} exited {result.exit_code}: {result.output[-400:]}")
    return seconds, json.loads(result.stdout), count


def _calls(count: call_counter.CallCount) -> dict[str, int]:
    return dict(sorted(count.calls.items()))


def run(recipients: int) -> Section:
    """Schedule, status, job list and cancel of a ``recipients`` x 2-step campaign, timed and counted."""
    section = Section("operator commands", details={"recipients": recipients, "emails": 2 * recipients})
    with sandbox("bench-opcmds") as box, TemporaryDirectory() as scratch:
        support_ses_v2()
        report_ses_account()
        support_list_service_quotas()
        boto3.client("sesv2", region_name=REGION).create_email_identity(EmailIdentity="mail.acme.example")
        flags = [
            "--table", box.table,
            "--region", REGION,
            "--contacts-table", create_contacts_table("bench-opcmds-contacts", REGION),
            *_email_flags("bench-opcmds"),
        ]  # fmt: skip
        path = Path(scratch) / "recipients.csv"
        _recipients(path, recipients)
        # A Monday 08:00 in Berlin after the sandbox's clock: the window opens an hour later.
        start = datetime.fromtimestamp(box.now[0], UTC).date().isoformat()
        start = _next_monday(start)
        schedule_s, scheduled, schedule_calls = _schedule(flags, CAMPAIGN, path, start, recipients)
        status_s, status, status_calls = _timed(flags, "campaign", "status", CAMPAIGN_ID)
        if sum(status["counts"].values()) != 2 * recipients:
            raise MeasurementError(f"status counted {status['counts']}")
        list_s, listed, list_calls = _timed(flags, "job", "list")
        if not any(job["job_id"] == CAMPAIGN_ID for job in listed):
            raise MeasurementError("job list does not list the campaign")
        other = Path(scratch) / "other-campaign.yaml"
        other.write_text(CAMPAIGN.read_text().replace(CAMPAIGN_ID, OTHER_CAMPAIGN_ID), encoding="utf-8")
        _schedule(flags, other, path, start, recipients)
        beside_s, beside, beside_calls = _timed(flags, "campaign", "status", CAMPAIGN_ID)
        if beside["next_send_at"] != status["next_send_at"] or beside["counts"] != status["counts"]:
            raise MeasurementError(f"status beside another campaign read {beside['counts']}")
        began = time.perf_counter()
        cancel_s, cancelled, cancel_calls = _timed(flags, "campaign", "cancel", CAMPAIGN_ID)
        nothing_sendable_s = cancel_calls.last_return["dynamodb:TransactWriteItems"] - began
        if len(cancelled["cancelled"]) != 2 * recipients or cancelled["schedules_left"] != 2 * recipients:
            raise MeasurementError(
                f"cancel cancelled {len(cancelled['cancelled'])}, left {cancelled['schedules_left']}"
            )
    section.details.update(
        {
            "schedule_seconds": schedule_s,
            "status_seconds": status_s,
            "job_list_seconds": list_s,
            "cancel_seconds": cancel_s,
            "cancel_nothing_sendable_seconds": nothing_sendable_s,
            "status_beside_other_campaign_seconds": beside_s,
            "status_items_read": {"alone": status_calls.items_read, "beside": beside_calls.items_read},
            "scheduler_rate": scheduled.get("scheduler_rate"),
            "calls": {
                "schedule": _calls(schedule_calls),
                "status": _calls(status_calls),
                "job list": _calls(list_calls),
                "status beside another campaign": _calls(beside_calls),
                "cancel": _calls(cancel_calls),
            },
        }
    )
    emails = f"{2 * recipients:,} emails"
    section.add(
        Figure(
            f"campaign cancel, {emails}",
            cancel_s,
            "s",
            target=f"<= {CANCEL_TARGET:.0f} s",
            met=cancel_s <= CANCEL_TARGET,
        )
    )
    section.add(
        Figure(
            "campaign cancel: seconds until no email can be sent",
            nothing_sendable_s,
            "s",
            target=f"<= {NOTHING_SENDABLE_TARGET:.0f} s",
            met=nothing_sendable_s <= NOTHING_SENDABLE_TARGET,
        )
    )
    section.add(
        Figure(
            f"campaign status, {emails}",
            status_s,
            "s",
            target=f"<= {STATUS_TARGET:.0f} s",
            met=status_s <= STATUS_TARGET,
        )
    )
    alone, beside_read = status_calls.items_read, beside_calls.items_read
    section.add(
        Figure(
            f"items read by `campaign status`, another campaign of {emails} beside it",
            beside_read,
            "items",
            baseline=alone if alone else None,
            target=f"= {alone} (the campaign alone)",
            met=beside_read == alone,
        )
    )
    status_scans = status_calls.calls["dynamodb:Scan"]
    section.add(
        Figure("campaign status: Scan calls", status_scans, "calls", target="0", met=status_scans == 0)
    )
    section.add(
        Figure(
            f"campaign schedule, {emails}",
            schedule_s,
            "s",
            target=f"<= {SCHEDULE_TARGET:.0f} s",
            met=schedule_s <= SCHEDULE_TARGET,
        )
    )
    list_scans = list_calls.calls["dynamodb:Scan"]
    section.add(
        Figure("job list: Scan calls", list_scans, "calls", target="0 (from the index)", met=list_scans == 0)
    )
    section.add(Figure("job list", list_s, "s"))
    return section


def _schedule(
    flags: list[str], campaign: Path, recipients_csv: Path, start: str, recipients: int
) -> tuple[float, Any, call_counter.CallCount]:
    """``campaign schedule`` of ``campaign`` for the recipients, checked to create every schedule."""
    seconds, scheduled, calls = _timed(
        flags, "campaign", "schedule", "--campaign", str(campaign), "--recipients", str(recipients_csv),
        "--start", start,
    )  # fmt: skip
    if scheduled.get("schedules_created") != 2 * recipients:
        raise MeasurementError(f"schedule created {scheduled.get('schedules_created')} schedules")
    return seconds, scheduled, calls


def _next_monday(day: str) -> str:
    """08:00 (the window's zone) on the first Monday after ``day`` (ISO date)."""
    date = datetime.fromisoformat(day).date()
    ahead = 7 - date.weekday() if date.weekday() else 7
    return f"{date.fromordinal(date.toordinal() + ahead).isoformat()}T08:00:00"
