"""A campaign plan written: its tasks in chunks, then one schedule per email, many at once under
Scheduler's request rate; a stop says how far it got."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from outreach import task_store
from outreach.email_schedules import ScheduleTarget, ensure_schedule
from outreach.email_task import PlannedEmail, parse_utc_iso
from outreach.task_model import Status
from outreach_operator import scheduler_calls
from outreach_operator.campaigns.planning import CampaignPlan
from outreach_operator.cli.jobs.progress import progress_bar
from outreach_operator.cli.output import PartlyDone, Session
from outreach_operator.task_queries import task_rows

# Planned emails per create_email_tasks call: one progress step (the task store cuts each call into
# transactions by count and by size).
CREATE_CHUNK = 900


def write_plan(s: Session, plan: CampaignPlan, target: ScheduleTarget, rate: float) -> dict[str, int]:
    """Every task of the plan, then every schedule (many at once, at most ``rate`` Scheduler requests a
    second: ``scheduler_calls``); what was created and what was already there."""
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
        try:
            for _, made in scheduler_calls.run_all(
                emails, lambda email: _ensure(email, stored.get(email.task_id), target), rate=rate
            ):
                outcome[made] += 1
                bar.advance(schedules_bar)
        except Exception as exc:
            done = sum(outcome.values())
            raise PartlyDone(
                f"campaign schedule {campaign_id}",
                [f"every task; {done} schedules made sure of"],
                [f"{len(emails) - done} schedules (re-run the same command)"],
                exc,
            ) from exc
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
    if stored["status"] != Status.PENDING.value:
        return "not_pending"
    kept = replace(email, send_at=parse_utc_iso(str(stored["send_at"])))
    return "created" if ensure_schedule(kept, target) else "existing"
