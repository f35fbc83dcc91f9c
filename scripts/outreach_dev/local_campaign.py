"""`make local`'s campaign: two steps to the sites the scrape job found, sent on the embedded AWS.

After the scrape job, ``outreach campaign schedule --recipients`` plans a two-step campaign (the
follow-up a day later) to the first address of every scraped site, one of them put on the account's
suppression list first, and to the recipients of two busy domains with their own zones; a second,
one-step campaign to some of those is planned for the same start (``local_governor``). Each email
links the one-click unsubscribe endpoint. The virtual clock then jumps to each next send time of
either campaign; the applied Scheduler schedules fire the email worker, which sends through the
embedded SES and defers a first step whose address had the other campaign's first contact too
recently. Between the steps the campaign listens (``local_listening``): a hard bounce, a one-click
unsubscribe and a link scanner's GET; and, when the root receives replies (its reply domain), the
campaign sets ``reply_domain`` and a few recipients answer by mail (``local_replies``): replies, one
through a client that dropped the token, and an out-of-office. The report counts the emails sent per
step (the campaign's Finished tasks, and what SES accepted for the campaign), the suppressed ones and
the failed ones by reason, the tasks still open, the governor's decisions (lint, pacing, zones, the
first contacts deferred and whether any was lost, the second campaign's counts), what the listening
did and what the replies did.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from botocore.exceptions import ConnectTimeoutError, ReadTimeoutError

from embedded_aws.pipeline import LocalPipeline
from outreach.task_model import Kind, Status
from outreach_dev import local_governor, local_listening, local_replies
from outreach_operator.campaigns.recipients import Recipient

Command = Callable[..., tuple[int, str]]

# The window is open all week, so the run does not wait for a Monday; its zone has summer time.
_WINDOW = {
    "weekdays": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"],
    "start": "00:00",
    "end": "23:59",
    "timezone": "Europe/Berlin",
}


# What the campaign lint asks every body to say (the sender's postal address, an unsubscribe link).
POSTAL_ADDRESS = "Local Outreach, 1 Example Street, 10115 Berlin, Germany"
FOOTER = "\n{{ postal_address }}\nUnsubscribe: {{ unsubscribe }}\n"


def campaign_file(campaign_id: str, identity: str, reply_domain: str | None = None) -> dict[str, Any]:
    """A two-step campaign sent from an address of the SES identity applied to the local root; with
    ``reply_domain``, replies come back to the pipeline and are forwarded to ``reply_to``."""
    domain = identity.rsplit("@", 1)[-1]
    sender = identity if "@" in identity else f"outreach@{domain}"
    campaign: dict[str, Any] = {
        "campaign_id": campaign_id,
        "sender": f"Local Outreach <{sender}>",
        "reply_to": f"replies@{domain}",
        "window": _WINDOW,
        "max_per_minute": 60,
        "postal_address": POSTAL_ADDRESS,
        "steps": [
            {
                "subject": "A question for {{ company }}",
                "text": "Hello {{ company }},\nshall we talk?\n" + FOOTER,
            },
            {"after_days": 1, "subject": "Re: A question for {{ company }}", "text": "Any news?\n" + FOOTER},
        ],
    }
    if reply_domain:
        campaign["reply_domain"] = reply_domain
    return campaign


def email_flags(stack: LocalPipeline) -> list[str]:
    """The ``outreach`` options naming the applied root's email parts: schedules, worker, SES identity,
    the contact ledger and the one-click unsubscribe endpoint with its key."""
    outputs = stack.outputs
    return [
        "--email-schedule-group", str(outputs["email_schedule_group"]),
        "--email-worker-arn", str(outputs["email_worker_arn"]),
        "--email-scheduler-role-arn", str(outputs["email_scheduler_role_arn"]),
        "--email-dlq-arn", str(outputs["email_dlq_arn"]),
        "--email-sender-identity", str(outputs["email_sender_identity"]),
        "--contacts-table", str(outputs["contacts_table_name"]),
        "--unsubscribe-url", str(outputs["unsubscribe_url"]),
        "--unsubscribe-key-arn", str(outputs["unsubscribe_key_arn"]),
    ]  # fmt: skip


def _open_send_times(stack: LocalPipeline, campaign_ids: Sequence[str], last_step: int | None) -> list[float]:
    """Send times of the campaigns' open emails (of steps up to ``last_step``, if given), earliest first."""
    from outreach_operator import task_queries

    with stack.as_caller():
        tasks = [
            task
            for campaign_id in campaign_ids
            for status in (Status.PENDING, Status.RUNNING)
            for task in task_queries.job_tasks_with_status(campaign_id, status)
        ]
    return sorted(
        task.email.send_time.timestamp()
        for task in tasks
        if task.email is not None and (last_step is None or task.email.step <= last_step)
    )


# Virtual seconds the campaign's planning may take before its first send (6 hours).
PLANNING_ALLOWANCE_SECONDS = 6 * 3600


def send_all(
    stack: LocalPipeline,
    campaign_id: str,
    *,
    timeout: float,
    last_step: int | None = None,
    others: Sequence[str] = (),
) -> None:
    """Jump the virtual clock to each next send time until no email of the campaign, nor of the
    ``others`` sent beside it (of their steps up to ``last_step``, if given), is open."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            due = _open_send_times(stack, [campaign_id, *others], last_step)
        except (ReadTimeoutError, ConnectTimeoutError):  # outcome: a busy emulator; read again next turn
            time.sleep(1.0)
            continue
        if not due:
            return
        if due[0] > stack.clock.now():
            # not while an invocation runs (its virtual deadline would pass): next turn instead
            stack.runtime.advance_clock_if_idle(due[0] - stack.clock.now() + 1)
        time.sleep(1.0)


def suppress(stack: LocalPipeline, address: str) -> None:
    """Put ``address`` on the account's suppression list, as a bounce would."""
    stack.client("sesv2").put_suppressed_destination(EmailAddress=address, Reason="BOUNCE")


def _schedule(
    stack: LocalPipeline, command: Command, campaign: Path, recipients: Path, start: datetime
) -> dict[str, Any]:
    """``outreach campaign schedule`` of a campaign file to a recipients file; its JSON report."""
    args = ["campaign", "schedule", "--campaign", str(campaign), "--recipients", str(recipients)]
    code, out = command(
        stack, "--json", *email_flags(stack), *args, "--skip-invalid", "--start", start.isoformat()
    )
    if code != 0:
        raise RuntimeError(f"outreach campaign schedule exited {code}: {out}")
    scheduled: dict[str, Any] = json.loads(out)
    return scheduled


def _status(stack: LocalPipeline, command: Command, campaign_id: str) -> dict[str, Any]:
    code, out = command(stack, "--json", "campaign", "status", campaign_id)
    if code != 0:
        raise RuntimeError(f"outreach campaign status exited {code}: {out}")
    status: dict[str, Any] = json.loads(out)
    return status


def run_campaign(stack: LocalPipeline, command: Command, job_id: str, *, timeout: float) -> dict[str, Any]:
    """Schedule the campaign to the finished job's addresses and the busy domains' recipients, and the
    second campaign beside it (``local_governor``), send both, and report what happened."""
    campaign_id = f"{job_id}-campaign"
    second_id = f"{job_id}-second"
    # The first send waits until the planning is done however long it takes (a MAC and a schedule per
    # email on a busy machine can outlast the send grace period on the fast clock); then the clock
    # jumps to a minute before the start.
    start = datetime.fromtimestamp(stack.clock.now() + PLANNING_ALLOWANCE_SECONDS, UTC)
    reply_domain = stack.pipeline.get("inbound_reply_domain")
    zone = ZoneInfo(str(_WINDOW["timezone"]))
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        identity = str(stack.outputs["email_sender_identity"])
        campaign = campaign_file(campaign_id, identity, reply_domain)
        path = folder / "campaign.json"
        path.write_text(json.dumps(campaign))
        second_path = folder / "second.json"
        second_path.write_text(json.dumps(local_governor.second_campaign_file(campaign, second_id)))
        found = _job_recipients(stack, job_id)
        everyone = local_governor.write_recipients(
            folder / "recipients.csv", [*local_governor.busy_rows(), *local_governor.job_rows(found)]
        )
        shared = local_governor.write_recipients(folder / "shared.csv", local_governor.shared_rows())
        recipients = [recipient.email for recipient in found]
        first_recipient = recipients[0] if recipients else ""
        if first_recipient:
            suppress(stack, first_recipient)
        listeners = local_listening.Listeners.of(recipients)
        repliers: local_replies.Repliers | None = None
        with local_listening.bouncing(listeners):
            scheduled = _schedule(stack, command, path, everyone, start)
            second = _schedule(stack, command, second_path, shared, start)
            if stack.clock.now() > start.timestamp() - 60:
                raise RuntimeError(f"planning took longer than {PLANNING_ALLOWANCE_SECONDS} virtual seconds")
            stack.clock.advance(start.timestamp() - 60 - stack.clock.now())
            send_all(stack, campaign_id, timeout=timeout, last_step=1, others=[second_id])
            answers: dict[str, int] = {}
            back_on: date | None = None
            if listeners is not None:
                local_listening.wait_bounced(stack, listeners, timeout=timeout)
                answers = local_listening.click(stack, campaign_id, listeners)
            if reply_domain:
                # After the suppressed recipient and the listeners.
                repliers = local_replies.Repliers.of(stack, campaign_id, recipients[4:])
            if repliers is not None:
                back_on = local_replies.answer(stack, campaign_id, repliers, zone)
                local_replies.wait_answered(stack, campaign_id, repliers, back_on, timeout=timeout)
            send_all(stack, campaign_id, timeout=timeout, others=[second_id])
    status = _status(stack, command, campaign_id)
    accepted = len(local_listening.campaign_emails(stack, campaign_id))
    report = campaign_report(scheduled, status, accepted, first_recipient)
    second_report = campaign_report(
        second, _status(stack, command, second_id), len(local_listening.campaign_emails(stack, second_id)), ""
    )
    rows = {c: stack.tasks(c, Kind.EMAIL) for c in (campaign_id, second_id)}
    report["governor"] = governor_report(
        scheduled, local_governor.first_contact_deferrals(rows), second_report
    )
    if listeners is not None:
        report["listening"] = local_listening.listening_report(stack, campaign_id, listeners, answers, status)
    if repliers is not None and back_on is not None:
        report["replies"] = local_replies.replies_report(stack, campaign_id, repliers, back_on, status, zone)
    return report


def _job_recipients(stack: LocalPipeline, job_id: str) -> list[Recipient]:
    """The recipients the finished job's results give (the first is put on the suppression list)."""
    from outreach_operator.campaigns.recipients import recipients_from_results
    from outreach_operator.cli.jobs import result_documents, result_keys, result_task_id

    bucket = stack.pipeline["results_bucket"]
    with stack.as_caller():
        keys = result_keys(bucket, job_id)
        pairs = ((result_task_id(job_id, key), doc) for key, doc in result_documents(bucket, keys))
        recipients = recipients_from_results(pairs)
    return list(recipients.valid)


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


def governor_report(
    scheduled: Mapping[str, Any], first_contacts: Mapping[str, Any], second: Mapping[str, Any]
) -> dict[str, Any]:
    """What the governor decided: each lint rule's outcome, the emails the domain pacing moved (with its
    settings), where the recipients' zones came from and the emails per zone (the schedule's report);
    the first contacts the workers deferred at send time (``local_governor.first_contact_deferrals``);
    and the second campaign's own report (``campaign_report``)."""
    pacing = scheduled["pacing"]
    return {
        "lint": {verdict["rule"]: verdict["outcome"] for verdict in scheduled["lint"]},
        "pacing_moved": pacing["emails_moved"],
        "pacing": f"{pacing['domain_daily_cap']} a day, "
        f"{pacing['domain_min_gap_seconds']} s apart per domain",
        "zones": scheduled["zones"]["sources"],
        "zone_emails": local_governor.zone_emails(scheduled),
        "first_contacts": dict(first_contacts),
        "second_campaign": dict(second),
    }


def governor_lines(governor: Mapping[str, Any]) -> list[str]:
    """The report's governor section."""
    first = governor["first_contacts"]
    second = governor["second_campaign"]
    return [
        f"  lint           {governor['lint']}",
        f"  pacing         {governor['pacing_moved']} emails moved ({governor['pacing']})",
        f"  zones          {governor['zones']}",
        f"  per zone       {governor['zone_emails']}",
        f"  first contacts {first['deferred']} deferred at send time {first['per_campaign']}, "
        f"{first['sent_later']} sent later, lost {first['lost']} {first['not_sent_later'] or ''}".rstrip(),
        f"  second campaign {second['campaign_id']}: {second['emails']} emails to {second['recipients']} "
        f"shared recipients, sent {sum(second['sent_per_step'].values())}, SES accepted "
        f"{second['ses_accepted']}, still open {second['still_open']}",
    ]


def campaign_ok(report: Mapping[str, Any]) -> bool:
    """Nothing of the campaigns is open, SES accepted one email per sent task, and no deferred first
    contact was lost."""
    sent_once = [report]
    governor = report.get("governor")
    if governor is not None:
        sent_once.append(governor["second_campaign"])
        if governor["first_contacts"]["lost"]:
            return False
    return all(r["still_open"] == 0 and r["one_email_per_sent_task"] for r in sent_once)


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
        *(governor_lines(report["governor"]) if "governor" in report else []),
        *(local_listening.report_lines(report["listening"]) if "listening" in report else []),
        *(local_replies.report_lines(report["replies"]) if "replies" in report else []),
    ]
