"""`make local`'s campaign: two steps to the sites the scrape job found, sent on the embedded AWS.

After the scrape job, ``outreach campaign schedule --from-job`` plans a two-step campaign (the
follow-up a day later) to the first address of every scraped site, one of them put on the account's
suppression list first. The virtual clock then jumps to each next send time; the applied Scheduler
schedules fire the email worker, which sends through the embedded SES. The report counts the emails
sent per step (the campaign's Finished tasks, and what SES accepted), the suppressed ones and the
failed ones by reason, and the tasks still open.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from embedded_aws.pipeline import LocalPipeline
from embedded_aws.ses_v2 import sent_emails
from outreach.task_model import Status

Command = Callable[..., tuple[int, str]]

# The window is open all week, so the run does not wait for a Monday; its zone has summer time.
_WINDOW = {
    "weekdays": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"],
    "start": "00:00",
    "end": "23:59",
    "timezone": "Europe/Berlin",
}


def campaign_file(campaign_id: str, identity: str) -> dict[str, Any]:
    """A two-step campaign sent from an address of the SES identity applied to the local root."""
    domain = identity.rsplit("@", 1)[-1]
    sender = identity if "@" in identity else f"outreach@{domain}"
    return {
        "campaign_id": campaign_id,
        "sender": f"Local Outreach <{sender}>",
        "reply_to": f"replies@{domain}",
        "unsubscribe": f"mailto:unsubscribe@{domain}?subject={{{{ email | urlencode }}}}",
        "window": _WINDOW,
        "max_per_minute": 60,
        "steps": [
            {"subject": "A question for {{ company }}", "text": "Hello {{ company }},\nshall we talk?\n"},
            {"after_days": 1, "subject": "Re: A question for {{ company }}", "text": "Any news?\n"},
        ],
    }


def _email_flags(stack: LocalPipeline) -> list[str]:
    outputs = stack.outputs
    return [
        "--email-schedule-group", str(outputs["email_schedule_group"]),
        "--email-worker-arn", str(outputs["email_worker_arn"]),
        "--email-scheduler-role-arn", str(outputs["email_scheduler_role_arn"]),
        "--email-dlq-arn", str(outputs["email_dlq_arn"]),
        "--email-sender-identity", str(outputs["email_sender_identity"]),
    ]  # fmt: skip


def _pending_send_times(stack: LocalPipeline, campaign_id: str) -> list[float]:
    from outreach_operator import task_queries

    with stack.as_caller():
        pending = task_queries.job_tasks_with_status(campaign_id, Status.PENDING)
    return sorted(task.email.send_time.timestamp() for task in pending if task.email is not None)


def _open_count(stack: LocalPipeline, campaign_id: str) -> int:
    counts = stack.job_counts(campaign_id)
    return counts[Status.PENDING.value] + counts[Status.RUNNING.value]


def send_all(stack: LocalPipeline, campaign_id: str, *, timeout: float) -> None:
    """Jump the virtual clock to each next send time until no email of the campaign is open."""
    deadline = time.monotonic() + timeout
    while _open_count(stack, campaign_id) and time.monotonic() < deadline:
        due = _pending_send_times(stack, campaign_id)
        if due and due[0] > stack.clock.now():
            stack.clock.advance(due[0] - stack.clock.now() + 1)
        time.sleep(1.0)


def suppress(stack: LocalPipeline, address: str) -> None:
    """Put ``address`` on the account's suppression list, as a bounce would."""
    stack.client("sesv2").put_suppressed_destination(EmailAddress=address, Reason="BOUNCE")


def run_campaign(stack: LocalPipeline, command: Command, job_id: str, *, timeout: float) -> dict[str, Any]:
    """Schedule the campaign from the finished job, send it, and report what happened."""
    campaign_id = f"{job_id}-campaign"
    start = datetime.fromtimestamp(stack.clock.now() + 120, UTC)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "campaign.json"
        path.write_text(json.dumps(campaign_file(campaign_id, str(stack.outputs["email_sender_identity"]))))
        args = ["campaign", "schedule", "--campaign", str(path), "--from-job", job_id, "--skip-invalid"]
        first_recipient = _first_recipient(stack, job_id)
        if first_recipient:
            suppress(stack, first_recipient)
        code, out = command(stack, "--json", *_email_flags(stack), *args, "--start", start.isoformat())
    if code != 0:
        raise RuntimeError(f"outreach campaign schedule exited {code}: {out}")
    scheduled = json.loads(out)
    send_all(stack, campaign_id, timeout=timeout)
    code, out = command(stack, "--json", "campaign", "status", campaign_id)
    if code != 0:
        raise RuntimeError(f"outreach campaign status exited {code}: {out}")
    return campaign_report(scheduled, json.loads(out), len(sent_emails(stack.region)), first_recipient)


def _first_recipient(stack: LocalPipeline, job_id: str) -> str:
    """The address the campaign's first recipient will get (the one put on the suppression list)."""
    from outreach_operator.campaigns.recipients import recipients_from_results
    from outreach_operator.cli.jobs import result_documents, result_keys, result_task_id

    bucket = stack.pipeline["results_bucket"]
    with stack.as_caller():
        keys = result_keys(bucket, job_id)
        pairs = ((result_task_id(job_id, key), doc) for key, doc in result_documents(bucket, keys))
        recipients = recipients_from_results(pairs)
    return recipients.valid[0].email if recipients.valid else ""


def campaign_report(
    scheduled: Mapping[str, Any], status: Mapping[str, Any], ses_accepted: int, suppressed_address: str
) -> dict[str, Any]:
    steps = {str(entry["step"]): entry for entry in status["steps"]}
    reasons: Counter[str] = Counter()
    for entry in status["reasons"]:
        reasons[f"{entry['status']}:{entry['reason']}"] += int(entry["emails"])
    sent = sum(int(entry[Status.FINISHED.value]) for entry in steps.values())
    return {
        "campaign_id": status["campaign_id"],
        "recipients": scheduled["recipients_scheduled"],
        "rows_not_scheduled": len(scheduled["rejected"]),
        "emails": scheduled["emails"],
        "sent_per_step": {step: int(entry[Status.FINISHED.value]) for step, entry in steps.items()},
        "ses_accepted": ses_accepted,
        "one_email_per_sent_task": ses_accepted == sent,
        "suppressed_address": suppressed_address,
        "suppressed": sum(n for reason, n in reasons.items() if "suppressed" in reason),
        "not_sent_by_reason": dict(reasons),
        "still_open": int(status["counts"][Status.PENDING.value])
        + int(status["counts"][Status.RUNNING.value]),
    }


def report_lines(report: Mapping[str, Any]) -> list[str]:
    return [
        f"campaign {report['campaign_id']}: {report['emails']} emails to {report['recipients']} recipients "
        f"({report['rows_not_scheduled']} sites without an address)",
        f"  sent per step  {report['sent_per_step']}",
        f"  SES accepted   {report['ses_accepted']} "
        f"(one email per sent task: {report['one_email_per_sent_task']})",
        f"  suppressed     {report['suppressed']} "
        f"({report['suppressed_address'] or 'none'} on the suppression list)",
        f"  not sent       {report['not_sent_by_reason'] or 'none'}",
        f"  still open     {report['still_open']}",
    ]
