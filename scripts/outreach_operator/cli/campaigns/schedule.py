"""``campaign schedule``: plan every step for every recipient, then write the tasks and their schedules.

``schedule`` writes one Pending email task per recipient and step (``task_store.create_email_tasks``)
and one EventBridge Scheduler one-time schedule per task (``email_schedules.ensure_schedule``), and
records the campaign as a job (``task_store.record_job``; the campaign id is the tasks' ``job_id``).
Task ids and schedule names derive from campaign, recipient and step, so running it again creates
nothing twice; a task that already exists keeps the send time it was written with. Before anything is
written (and in a dry run) the recipients the contact ledger stops are left out and listed with why
(``stopped``), a campaign without its own ``unsubscribe`` gets the one-click link of each recipient
and step (``default_unsubscribe``), a campaign with a ``reply_domain`` the reply address of each
(``reply_addresses``, made with the same key), and the plan is held against the account's SES sending
quota (``quota``). While the sending identity warms up, the plan keeps the campaign's emails per UTC day
under the identity's cap (``warmup``: the environment's ``email_warmup`` output, the account's
24-hour quota as the ceiling). The report (and the dry run) shows the stop rules (``stop_rules_report``)
and, per UTC day under the ramp, the emails planned and the cap. First
of all the campaign lint runs (``compliance``): a campaign it refuses is refused before anything is
read or planned, and the reasons of the rules a campaign turned off are recorded on its job row.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from outreach import clock, errors, task_store
from outreach.email_schedules import ScheduleTarget
from outreach.email_task import PlannedEmail
from outreach.task_model import Kind
from outreach_operator.campaigns.campaign_file import Campaign, SendWindow
from outreach_operator.campaigns.domain_pacing import domain_of
from outreach_operator.campaigns.planning import CampaignPlan, plan_campaign
from outreach_operator.campaigns.reply_addresses import ReplyAddresses
from outreach_operator.campaigns.ses_identity import identity_covers
from outreach_operator.campaigns.stop_rules import stop_rules_report
from outreach_operator.cli.campaigns.check import load_checked, refusal
from outreach_operator.cli.campaigns.default_unsubscribe import one_click_links, unsubscribe_report
from outreach_operator.cli.campaigns.quota import check_quota
from outreach_operator.cli.campaigns.recipient_sources import from_csv, from_job
from outreach_operator.cli.campaigns.schedule_view import render_rejected, render_scheduled
from outreach_operator.cli.campaigns.scheduler_rate import scheduler_rate_of
from outreach_operator.cli.campaigns.stopped import leave_out_stopped
from outreach_operator.cli.campaigns.warmup import warmup_pacing
from outreach_operator.cli.campaigns.writing import write_plan
from outreach_operator.cli.confirm import confirm_change
from outreach_operator.cli.jobs.create import existing_task_ids
from outreach_operator.cli.operator import operator_name
from outreach_operator.cli.output import BadInput, Session

# How many domains the report names (those with the most emails).
_BUSIEST_DOMAINS = 5


def schedule_campaign(
    s: Session,
    campaign_path: Path,
    recipients_path: Path | None,
    from_job_id: str | None,
    start: str | None,
    skip_invalid: bool,
    operator: str | None,
    dry_run: bool,
    rate: float | None,
) -> None:
    """The campaign planned for its recipients and checked; unless ``dry_run``, recorded and written
    (the schedules at most ``rate`` Scheduler requests a second, by default 80% of the account's
    CreateSchedule quota: ``scheduler_quota``)."""
    if (recipients_path is None) == (from_job_id is None):
        raise BadInput("give exactly one of --recipients FILE or --from-job ID")
    chosen, lint = load_checked(campaign_path)
    if lint.refused:
        raise refusal(campaign_path, lint)
    _check_sender(s, chosen)
    first = _start(start, chosen.window)
    if recipients_path is not None:
        recipients, source = from_csv(recipients_path)
    else:
        s.targets.require("tasks_table", "--table")
        recipients, source = from_job(s, str(from_job_id))
    links = one_click_links(s, chosen, dry_run=dry_run)
    replies = reply_addresses(s, chosen, dry_run=dry_run)
    stops = leave_out_stopped(s, recipients.valid, dry_run=dry_run)
    warmup, warmup_report = warmup_pacing(s, dry_run=dry_run)
    plan = plan_campaign(chosen, stops.kept, first, links, replies, warmup)
    rejected = [row.as_dict() for row in [*recipients.rejected, *plan.rejected]]
    report: dict[str, Any] = {
        "campaign_id": chosen.campaign_id,
        "campaign": str(campaign_path),
        "recipients": source,
        "start": first.isoformat(),
        "recipients_scheduled": len(plan.emails) // len(chosen.steps),
        "emails": len(plan.emails),
        "rejected": rejected,
        "stopped": stops.stopped,
        "stops": stops.report(),
        "unsubscribe": unsubscribe_report(chosen, links),
        "stop_rules": {**stop_rules_report(chosen), **(replies.report() if replies else {})},
        "lint": lint.as_dicts(),
        "timezone": chosen.window.timezone,
        "plan": plan_by_day(plan.emails, chosen.window),
        "pacing": pacing_report(chosen, plan),
        "warmup": {**warmup_report, **({"days": warmup.report()} if warmup else {})},
        "zones": {"sources": plan.zone_sources, "plan": plan_by_zone(plan.emails)},
        "dry_run": dry_run,
    }
    if rejected and not skip_invalid:
        s.emit({**report, "written": 0}, lambda c: render_rejected(c, rejected))
        raise BadInput(
            f"{len(rejected)} rows cannot be scheduled; nothing written (fix them or --skip-invalid)"
        )
    if not plan.emails:
        s.emit({**report, "written": 0}, lambda c: render_scheduled(c, report, planned=False))
        left_out = f" ({len(stops.stopped)} left out: the contact ledger stops them)" if stops.stopped else ""
        raise BadInput(f"no recipient to schedule{left_out}")
    if dry_run:
        report["ses_quota"] = check_quota(chosen, plan, dry_run=True)
        if s.targets.tasks_table:
            try:
                task_store.check_job_kind(chosen.campaign_id, Kind.EMAIL)
            except errors.JobKindConflictError as exc:
                raise BadInput(f"{exc}; nothing written") from exc
            existing = existing_task_ids([email.task_id for email in plan.emails])
            report.update(would_create=len(plan.emails) - len(existing), existing=len(existing))
    else:
        s.targets.require("tasks_table", "--table")
        target = schedule_target(s)
        report["ses_quota"] = check_quota(chosen, plan, dry_run=False)
        campaign_source = (
            f"{campaign_path.name} sha256:{hashlib.sha256(campaign_path.read_bytes()).hexdigest()}"
        )
        confirm_change(s, f"schedule {len(plan.emails):,} emails of campaign {chosen.campaign_id}")
        try:
            task_store.record_job(
                chosen.campaign_id,
                kind=Kind.EMAIL,
                source=f"{campaign_source}; recipients {source}",
                tasks=len(plan.emails),
                created_by=operator_name(operator),
                waivers=chosen.compliance_waivers,
            )
        except errors.JobKindConflictError as exc:
            raise BadInput(str(exc)) from exc
        chosen_rate = scheduler_rate_of(s, "CreateSchedule", rate)
        report["scheduler_rate"] = chosen_rate
        report.update(write_plan(s, plan, target, chosen_rate["rate_per_second"]))
    s.emit(report, lambda c: render_scheduled(c, report))


def reply_addresses(s: Session, campaign: Campaign, *, dry_run: bool) -> ReplyAddresses | None:
    """The reply addresses of a campaign with a ``reply_domain`` (made with the unsubscribe key,
    ``unsubscribe_key_arn``; a dry run needs no key), else ``None``."""
    if campaign.reply_domain is None:
        return None
    key = None if dry_run else s.targets.require("unsubscribe_key_arn", "--unsubscribe-key-arn")
    return ReplyAddresses(campaign.reply_domain, key, campaign.campaign_id)


def schedule_target(s: Session) -> ScheduleTarget:
    """Where the schedules go and what they invoke, from the root's email outputs or the flags."""
    t = s.targets
    return ScheduleTarget(
        group=t.require("email_schedule_group", "--email-schedule-group"),
        worker_arn=t.require("email_worker_arn", "--email-worker-arn"),
        role_arn=t.require("email_scheduler_role_arn", "--email-scheduler-role-arn"),
        dlq_arn=t.require("email_dlq_arn", "--email-dlq-arn"),
    )


def pacing_report(campaign: Campaign, plan: CampaignPlan) -> dict[str, Any]:
    """The domain pacing's settings and decisions: how many emails it moved later, and the domains
    with the most emails (each with its busiest local day)."""
    zone = campaign.window.zone
    per_day = Counter((domain_of(e.message.to), e.send_at.astimezone(zone).date()) for e in plan.emails)
    totals = Counter(domain_of(e.message.to) for e in plan.emails)
    busiest = []
    for domain, emails in totals.most_common(_BUSIEST_DOMAINS):
        days = {day: count for (name, day), count in per_day.items() if name == domain}
        busiest.append(
            {"domain": domain, "emails": emails, "days": len(days), "most_in_a_day": max(days.values())}
        )
    return {**campaign.pacing.model_dump(), "emails_moved": plan.paced, "busiest_domains": busiest}


def plan_by_zone(emails: Sequence[PlannedEmail]) -> list[dict[str, Any]]:
    """Emails per recipient zone, local day and local hour (the hours the recipients see them)."""
    groups = Counter(
        (email.timezone, local.date().isoformat(), local.hour)
        for email in emails
        for local in (email.send_at.astimezone(ZoneInfo(email.timezone)),)
    )
    return [
        {"zone": zone, "day": day, "hour": f"{hour:02d}:00", "emails": count}
        for (zone, day, hour), count in sorted(groups.items())
    ]


def plan_by_day(emails: Sequence[PlannedEmail], window: SendWindow) -> list[dict[str, Any]]:
    """Emails per local day (in the window's zone) and step, with the first and last send time."""
    groups: dict[tuple[str, int], list[datetime]] = {}
    for email in emails:
        local = email.send_at.astimezone(window.zone)
        groups.setdefault((local.date().isoformat(), email.step), []).append(local)
    return [
        {
            "day": day,
            "step": step,
            "emails": len(times),
            "first": min(times).strftime("%H:%M:%S"),
            "last": max(times).strftime("%H:%M:%S"),
        }
        for (day, step), times in sorted(groups.items())
    ]


def _start(value: str | None, window: SendWindow) -> datetime:
    """``--start`` (ISO-8601; without an offset, a time in the window's zone), else now."""
    if value is None:
        return datetime.fromtimestamp(clock.now(), UTC)
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise BadInput(f"--start: not an ISO-8601 time: {value!r}") from exc
    chosen = parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=window.zone)
    if chosen.timestamp() < clock.now() - 60:
        raise BadInput(f"--start {value} is in the past: give a time from now on, or leave it out")
    return chosen


def _check_sender(s: Session, chosen: Campaign) -> None:
    identity = s.targets.email_sender_identity
    if identity and not identity_covers(identity, chosen.sender):
        raise BadInput(f"sender {chosen.sender!r} is not covered by the SES identity {identity!r}")
