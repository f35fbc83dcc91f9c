"""``outreach campaign``: schedule a campaign's emails, see how far it got, cancel what has not gone out.

``schedule`` writes one Pending email task per recipient and step (``task_store.create_email_tasks``)
and one EventBridge Scheduler one-time schedule per task (``email_schedules.ensure_schedule``), and
records the campaign as a job (``task_store.record_job``; the campaign id is the tasks' ``job_id``).
Task ids and schedule names derive from campaign, recipient and step, so running it again creates
nothing twice; a task that already exists keeps the send time it was written with.

Before anything is written (and in a dry run) the plan is held against the account's SES sending quota
(``campaigns.ses_quota``, sesv2 GetAccount): a plan above the sending rate or the 24-hour quota is
refused with the numbers (exit 2). A GetAccount that is refused or cannot be reached leaves a dry run's
quota "not checked" and stops a real schedule before it writes anything (exit 1).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from boto3.dynamodb.types import TypeDeserializer
from botocore.exceptions import BotoCoreError, ClientError
from rich.console import Console

from outreach import clients, clock, config, errors, task_store
from outreach.email_schedules import ScheduleTarget, delete_schedule, ensure_schedule
from outreach.email_task import PlannedEmail, parse_utc_iso
from outreach.task_model import Kind, Status, Task
from outreach_operator.bounded_lines import file_sha256
from outreach_operator.campaigns.campaign_file import Campaign, CampaignFileError, SendWindow, load_campaign
from outreach_operator.campaigns.planning import CampaignPlan, plan_campaign
from outreach_operator.campaigns.recipients import (
    Recipients,
    RecipientsFileError,
    read_recipients_csv,
    recipients_from_results,
)
from outreach_operator.campaigns.ses_identity import identity_covers
from outreach_operator.campaigns.ses_quota import (
    account_client,
    busiest_24_hours,
    quota_problems,
    read_send_quota,
)
from outreach_operator.cli.confirm import confirm_change
from outreach_operator.cli.jobs import (
    existing_task_ids,
    progress_bar,
    result_documents,
    result_keys,
    result_task_id,
    task_rows,
)
from outreach_operator.cli.operator import operator_name
from outreach_operator.cli.output import BadInput, Failed, PartlyDone, Session, session, table

# Planned emails per create_email_tasks call: one progress step (the task store cuts each call into
# transactions by count and by size).
CREATE_CHUNK = 900


@click.group()
def campaign() -> None:
    """Email campaigns: one task and one one-time schedule per recipient and step."""


def schedule_target(s: Session) -> ScheduleTarget:
    """Where the schedules go and what they invoke, from the root's email outputs or the flags."""
    t = s.targets
    return ScheduleTarget(
        group=t.require("email_schedule_group", "--email-schedule-group"),
        worker_arn=t.require("email_worker_arn", "--email-worker-arn"),
        role_arn=t.require("email_scheduler_role_arn", "--email-scheduler-role-arn"),
        dlq_arn=t.require("email_dlq_arn", "--email-dlq-arn"),
    )


def campaign_tasks(campaign_id: str) -> list[Task]:
    """Every email task of the campaign, in one Scan (the table has no index by job)."""
    deserializer = TypeDeserializer()
    pages = (
        clients.dynamodb()
        .get_paginator("scan")
        .paginate(
            TableName=config.tasks_table(),
            FilterExpression="job_id = :campaign AND kind = :email",
            ConsistentRead=True,
            ExpressionAttributeValues={":campaign": {"S": campaign_id}, ":email": {"S": Kind.EMAIL.value}},
        )
    )
    return [
        Task.from_item({name: deserializer.deserialize(value) for name, value in item.items()})
        for page in pages
        for item in page.get("Items", [])
    ]


def _email_tasks(campaign_id: str, status: Status) -> list[Task]:
    """The campaign's email tasks in an open ``status`` (a Query of the ``open-tasks`` index)."""
    return [
        task
        for task in task_store.job_tasks_with_status(campaign_id, status)
        if task.kind == Kind.EMAIL.value and task.email is not None
    ]


# ---- schedule ---------------------------------------------------------------------------------


def _load(path: Path) -> Campaign:
    try:
        return load_campaign(path)
    except CampaignFileError as exc:
        raise BadInput(str(exc)) from exc


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


def _from_csv(path: Path) -> tuple[Recipients, str]:
    try:
        recipients = read_recipients_csv(path)
    except RecipientsFileError as exc:
        raise BadInput(str(exc)) from exc
    return recipients, f"{path.name} sha256:{file_sha256(path)}"  # in chunks: the file may be large


def _from_job(s: Session, job_id: str) -> tuple[Recipients, str]:
    """The recipients a finished scrape job's results give (as ``outreach job export`` reads them)."""
    bucket = s.targets.require("results_bucket", "--results-bucket")
    counts = task_store.job_counts(job_id)
    if not any(counts.values()) and task_store.get_job(job_id) is None:
        raise BadInput(f"no job {job_id!r} in {s.targets.tasks_table}")
    still_open = counts[Status.PENDING.value] + counts[Status.RUNNING.value]
    if still_open:
        raise BadInput(f"job {job_id} is not finished: {still_open} tasks are still open")
    keys = result_keys(bucket, job_id)
    pairs = ((result_task_id(job_id, key), document) for key, document in result_documents(bucket, keys))
    return recipients_from_results(pairs), f"job {job_id}"


def _check_sender(s: Session, chosen: Campaign) -> None:
    identity = s.targets.email_sender_identity
    if identity and not identity_covers(identity, chosen.sender):
        raise BadInput(f"sender {chosen.sender!r} is not covered by the SES identity {identity!r}")


def _check_quota(chosen: Campaign, plan: CampaignPlan, *, dry_run: bool) -> dict[str, Any]:
    """The plan held against the account's SES quota: ``BadInput`` above it; what was read, for the
    report. GetAccount refused or unreachable: "not checked" in a dry run, ``Failed`` otherwise."""
    try:
        quota = read_send_quota(account_client())
    except (ClientError, BotoCoreError) as exc:
        if not dry_run:
            raise Failed(
                f"cannot read the account's SES sending quota (sesv2 GetAccount): {exc}; nothing written "
                "(allow ses:GetAccount to these credentials, or check the endpoint and region)"
            ) from exc
        return {"checked": False, "reason": f"quota not checked: sesv2 GetAccount failed: {exc}"}
    now = datetime.fromtimestamp(clock.now(), UTC)
    send_times = [email.send_at for email in plan.emails]
    problems = quota_problems(send_times, chosen.max_per_minute, quota, now)
    if problems:
        raise BadInput(
            "the plan is above the account's SES sending quota; nothing written:\n" + "\n".join(problems)
        )
    busiest = busiest_24_hours(send_times, now, round(quota.sent_last_24_hours))
    return {
        "checked": True,
        **quota.as_dict(),
        "busiest_24_hours": {
            "emails": busiest.planned,
            "sent_before": busiest.sent_before,
            "end": busiest.end,
        },
    }


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


@campaign.command("schedule")
@click.option(
    "--campaign", "campaign_path", required=True, type=click.Path(path_type=Path, dir_okay=False, exists=True)
)
@click.option(
    "--recipients",
    "recipients_path",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="CSV with a header row and an email column; other columns are placeholders.",
)
@click.option("--from-job", help="Recipients from this finished scrape job's results.")
@click.option("--start", help="First send time (ISO-8601; no offset = the window's zone). Default: now.")
@click.option("--skip-invalid", is_flag=True, help="Schedule the valid rows and list the skipped ones.")
@click.option("--operator", help="Who schedules (default: OUTREACH_OPERATOR or the AWS identity).")
@click.option("--dry-run", is_flag=True, help="Show the plan per day and step; write nothing.")
@click.pass_context
def schedule(
    ctx: click.Context,
    campaign_path: Path,
    recipients_path: Path | None,
    from_job: str | None,
    start: str | None,
    skip_invalid: bool,
    operator: str | None,
    dry_run: bool,
) -> None:
    """Plan every step for every recipient, then write the tasks and their one-time schedules."""
    s = session(ctx)
    if (recipients_path is None) == (from_job is None):
        raise BadInput("give exactly one of --recipients FILE or --from-job ID")
    chosen = _load(campaign_path)
    _check_sender(s, chosen)
    first = _start(start, chosen.window)
    if recipients_path is not None:
        recipients, source = _from_csv(recipients_path)
    else:
        s.targets.require("tasks_table", "--table")
        recipients, source = _from_job(s, str(from_job))
    plan = plan_campaign(chosen, recipients.valid, first)
    rejected = [row.as_dict() for row in [*recipients.rejected, *plan.rejected]]
    report: dict[str, Any] = {
        "campaign_id": chosen.campaign_id,
        "campaign": str(campaign_path),
        "recipients": source,
        "start": first.isoformat(),
        "recipients_scheduled": len(plan.emails) // len(chosen.steps),
        "emails": len(plan.emails),
        "rejected": rejected,
        "timezone": chosen.window.timezone,
        "plan": plan_by_day(plan.emails, chosen.window),
        "dry_run": dry_run,
    }
    if rejected and not skip_invalid:
        s.emit({**report, "written": 0}, lambda c: _render_rejected(c, rejected))
        raise BadInput(
            f"{len(rejected)} rows cannot be scheduled; nothing written (fix them or --skip-invalid)"
        )
    if not plan.emails:
        raise BadInput("no recipient to schedule")
    if dry_run:
        report["ses_quota"] = _check_quota(chosen, plan, dry_run=True)
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
        report["ses_quota"] = _check_quota(chosen, plan, dry_run=False)
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
            )
        except errors.JobKindConflictError as exc:
            raise BadInput(str(exc)) from exc
        report.update(_write(s, plan, target))
    s.emit(report, lambda c: _render_scheduled(c, report))


def _write(s: Session, plan: CampaignPlan, target: ScheduleTarget) -> dict[str, int]:
    emails = plan.emails
    campaign_id = emails[0].campaign_id
    existing: set[str] = set()
    created = 0
    outcome: Counter[str] = Counter()
    with progress_bar(s) as bar:
        tasks_bar = bar.add_task(f"tasks of {campaign_id}", total=len(emails))
        for start in range(0, len(emails), CREATE_CHUNK):
            try:
                result = task_store.create_email_tasks(emails[start : start + CREATE_CHUNK])
            except Exception as exc:
                raise PartlyDone(
                    f"campaign schedule {campaign_id}",
                    [f"emails 1-{start} written ({created} new, {len(existing)} existing)"],
                    [f"emails {start + 1}-{len(emails)} and every schedule (re-run the same command)"],
                    exc,
                ) from exc
            created += len(result.created)
            existing.update(result.existing)
            bar.advance(tasks_bar, len(result.created) + len(result.existing))
        stored = task_rows(sorted(existing), ["status", "send_at"])
        schedules_bar = bar.add_task(f"schedules of {campaign_id}", total=len(emails))
        for index, email in enumerate(emails):
            try:
                outcome[_ensure(email, stored.get(email.task_id), target)] += 1
            except Exception as exc:
                raise PartlyDone(
                    f"campaign schedule {campaign_id}",
                    [f"every task; schedules of emails 1-{index}"],
                    [f"schedules of emails {index + 1}-{len(emails)} (re-run the same command)"],
                    exc,
                ) from exc
            bar.advance(schedules_bar)
    return {
        "created": created,
        "existing": len(existing),
        "schedules_created": outcome["created"],
        "schedules_existing": outcome["existing"],
        "not_pending": outcome["not_pending"],
    }


def _ensure(email: PlannedEmail, stored: Mapping[str, Any] | None, target: ScheduleTarget) -> str:
    """The email's schedule made sure of: ``created``, ``existing``, or ``not_pending`` for a task that
    no longer waits for one (sent, failed or cancelled). A task written earlier (``stored``: its status
    and send time as read) keeps its send time."""
    if stored is None:
        return "created" if ensure_schedule(email, target) else "existing"
    if stored["status"]["S"] != Status.PENDING.value:
        return "not_pending"
    kept = replace(email, send_at=parse_utc_iso(stored["send_at"]["S"]))
    return "created" if ensure_schedule(kept, target) else "existing"


def _render_rejected(console: Console, rejected: list[dict[str, Any]]) -> None:
    console.print(
        table(
            f"{len(rejected)} rows not scheduled",
            ["row", "source", "value", "reason"],
            [[r["row"], r["source"], r["value"], r["reason"]] for r in rejected],
        )
    )


def _render_scheduled(console: Console, report: dict[str, Any]) -> None:
    if report["rejected"]:
        _render_rejected(console, report["rejected"])
    console.print(
        table(
            f"campaign {report['campaign_id']}: {report['emails']:,} emails to "
            f"{report['recipients_scheduled']:,} recipients (times in {report['timezone']})",
            ["day", "step", "emails", "first", "last"],
            [[r["day"], r["step"], r["emails"], r["first"], r["last"]] for r in report["plan"]],
        )
    )
    _render_quota(console, report["ses_quota"])
    if report["dry_run"]:
        known = "" if "existing" not in report else f" ({report['existing']:,} tasks already exist)"
        console.print(f"dry run: nothing written{known}")
        return
    console.print(
        f"tasks: {report['created']:,} created, {report['existing']:,} already there; schedules: "
        f"{report['schedules_created']:,} created, {report['schedules_existing']:,} already there, "
        f"{report['not_pending']:,} tasks no longer pending"
    )


def _render_quota(console: Console, quota: dict[str, Any]) -> None:
    if not quota["checked"]:
        console.print(f"SES {quota['reason']}")
        return
    daily = (
        "no 24-hour limit" if quota["max_24_hour_send"] < 0 else f"{quota['max_24_hour_send']:,.0f} per 24 h"
    )
    busiest = quota["busiest_24_hours"]
    console.print(
        f"SES quota in {quota['region']}: {quota['max_send_rate']:.1f}/s, {daily} "
        f"({quota['sent_last_24_hours']:,.0f} sent in the last 24 h); the plan's busiest 24 h: "
        f"{busiest['emails']:,} emails"
    )


# ---- status -----------------------------------------------------------------------------------


@campaign.command("status")
@click.argument("campaign_id")
@click.pass_context
def status(ctx: click.Context, campaign_id: str) -> None:
    """Emails per step and status, and why emails failed or were cancelled (one Scan of the table)."""
    s = session(ctx)
    s.targets.require("tasks_table", "--table")
    row = task_store.get_job(campaign_id)
    counts = task_store.job_counts(campaign_id)
    if row is None and not any(counts.values()):
        raise BadInput(f"no campaign {campaign_id!r} in {s.targets.tasks_table}")
    tasks = campaign_tasks(campaign_id)
    per_step: dict[int, Counter[str]] = {}
    reasons: Counter[tuple[str, str]] = Counter()
    for task in tasks:
        assert task.email is not None  # Task.from_item gives every email row its email fields
        per_step.setdefault(task.email.step, Counter())[task.status.value] += 1
        if task.status in (Status.FAILED, Status.CANCELLED):
            reason = (task.failure_reason or "unknown").split(":", 1)[0].strip() or "unknown"
            reasons[(task.status.value, reason)] += 1
    pending = [t.email.send_at for t in tasks if t.status is Status.PENDING and t.email is not None]
    data: dict[str, Any] = {
        "campaign_id": campaign_id,
        "created_at": None if row is None else row.get("created_at"),
        "created_by": None if row is None else row.get("created_by"),
        "source": None if row is None else row.get("source"),
        "counts": counts,
        "steps": [
            {"step": step, **{st.value: per_step[step][st.value] for st in Status}}
            for step in sorted(per_step)
        ],
        "reasons": [{"status": st, "reason": r, "emails": n} for (st, r), n in reasons.most_common()],
        "next_send_at": min(pending) if pending else None,
    }

    def render(console: Console) -> None:
        columns = ["step", *(st.value for st in Status)]
        rows = [[entry[c] for c in columns] for entry in data["steps"]]
        rows.append(["all (counters)", *(counts[st.value] for st in Status)])
        console.print(table(f"campaign {campaign_id}", columns, rows))
        if data["reasons"]:
            console.print(
                table(
                    "why not sent",
                    ["status", "reason", "emails"],
                    [[r["status"], r["reason"], r["emails"]] for r in data["reasons"]],
                )
            )
        if data["next_send_at"]:
            console.print(f"next send: {data['next_send_at']}")

    s.emit(data, render)


# ---- cancel -----------------------------------------------------------------------------------


def _email_view(task: Task) -> dict[str, Any]:
    assert task.email is not None  # _email_tasks keeps email tasks only
    return {
        "task_id": task.task_id,
        "step": task.email.step,
        "recipient": task.email.recipient,
        "send_at": task.email.send_at,
        "schedule_name": task.email.schedule_name,
    }


@campaign.command("cancel")
@click.argument("campaign_id")
@click.option("--reason", default="campaign cancelled by operator", show_default=True)
@click.option("--operator", help="Who cancels (default: OUTREACH_OPERATOR or the AWS identity).")
@click.option("--dry-run", is_flag=True, help="List the emails that would be cancelled; change nothing.")
@click.pass_context
def cancel(ctx: click.Context, campaign_id: str, reason: str, operator: str | None, dry_run: bool) -> None:
    """Cancel every Pending email of the campaign and delete its schedule; a claimed send goes on."""
    s = session(ctx)
    s.targets.require("tasks_table", "--table")
    pending = _email_tasks(campaign_id, Status.PENDING)
    running = _email_tasks(campaign_id, Status.RUNNING)
    cancelled: list[str] = []
    moved_on: list[str] = []
    schedules_deleted = 0
    if not dry_run:
        group = s.targets.require("email_schedule_group", "--email-schedule-group")
        target = ScheduleTarget(group=group, worker_arn="", role_arn="", dlq_arn="")
        confirm_change(s, f"cancel {len(pending):,} Pending emails of campaign {campaign_id}")
        who = operator_name(operator)
        for index, task in enumerate(pending):
            assert task.email is not None  # _email_tasks keeps email tasks only
            try:
                # The task first: a schedule firing meanwhile finds it Cancelled and sends nothing.
                task_store.cancel(task, reason=f"{reason} (by {who})")
            except errors.TransitionRejectedError:  # claimed or done meanwhile: not interrupted
                moved_on.append(task.task_id)
                continue
            except Exception as exc:
                raise PartlyDone(
                    f"campaign cancel {campaign_id}", cancelled, [t.task_id for t in pending[index:]], exc
                ) from exc
            cancelled.append(task.task_id)
            try:
                schedules_deleted += delete_schedule(task.email.schedule_name, target)
            except Exception as exc:
                raise PartlyDone(
                    f"campaign cancel {campaign_id} (a schedule left fires into a Cancelled task: no send)",
                    cancelled,
                    [t.task_id for t in pending[index + 1 :]],
                    exc,
                ) from exc
    report: dict[str, Any] = {
        "campaign_id": campaign_id,
        "dry_run": dry_run,
        "pending": [_email_view(t) for t in pending],
        "running_not_interrupted": [_email_view(t) for t in running],
        "cancelled": cancelled,
        "schedules_deleted": schedules_deleted,
        "moved_on": moved_on,
    }

    def render(console: Console) -> None:
        verb = "would cancel" if dry_run else "cancelled"
        rows = [[e["task_id"], e["step"], e["recipient"], e["send_at"]] for e in report["pending"]]
        console.print(
            table(
                f"{verb} {len(pending) if dry_run else len(cancelled)} emails",
                ["task", "step", "recipient", "send at"],
                rows,
            )
        )
        if running:
            console.print(f"{len(running)} emails are being sent now and are not interrupted")
        if moved_on:
            console.print(
                f"{len(moved_on)} emails were claimed or finished meanwhile and were left as they are"
            )

    s.emit(report, render)
