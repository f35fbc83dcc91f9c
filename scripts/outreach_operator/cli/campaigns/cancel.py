"""``campaign cancel``: every Pending email of a campaign to Cancelled, then its schedule deleted.

The tasks are cancelled in transactions of up to 99 (``task_actions.cancel_many``: each task only if it
is still Pending, so an email a worker claimed meanwhile is left to it), then the schedules of the
cancelled ones are deleted many at once under Scheduler's request rate (``scheduler_calls``).
Cancelling first means a schedule that fires meanwhile finds its task Cancelled and sends nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console

from outreach.email_schedules import delete_schedule
from outreach.task_model import Kind, Status, Task
from outreach_operator import scheduler_calls, task_actions, task_queries
from outreach_operator.cli.confirm import confirm_change
from outreach_operator.cli.jobs.progress import progress_bar
from outreach_operator.cli.operator import operator_name
from outreach_operator.cli.output import PartlyDone, Session, table


def cancel_campaign(
    s: Session, campaign_id: str, reason: str, operator: str | None, dry_run: bool, rate: float
) -> None:
    """Cancel the campaign's Pending emails (list them with ``dry_run``); a claimed send goes on."""
    s.targets.require("tasks_table", "--table")
    pending = _email_tasks(campaign_id, Status.PENDING)
    running = _email_tasks(campaign_id, Status.RUNNING)
    cancelled: list[str] = []
    moved_on: list[str] = []
    schedules_deleted = 0
    if not dry_run:
        group = s.targets.require("email_schedule_group", "--email-schedule-group")
        confirm_change(s, f"cancel {len(pending):,} Pending emails of campaign {campaign_id}")
        who = operator_name(operator)
        with progress_bar(s) as bar:
            tasks_bar = bar.add_task(f"emails of {campaign_id} cancelled", total=len(pending))

            def written(ids: Sequence[str]) -> None:
                cancelled.extend(ids)
                bar.advance(tasks_bar, len(ids))

            try:
                # The tasks first: a schedule firing meanwhile finds its task Cancelled and sends nothing.
                outcome = task_actions.cancel_many(pending, reason=f"{reason} (by {who})", on_written=written)
            except Exception as exc:
                done = set(cancelled)
                raise PartlyDone(
                    f"campaign cancel {campaign_id} (no schedule deleted yet: each fires into a Cancelled "
                    "task and sends nothing)",
                    cancelled,
                    [t.task_id for t in pending if t.task_id not in done],
                    exc,
                ) from exc
            moved_on = outcome.rejected  # claimed or done meanwhile: not interrupted
            bar.update(tasks_bar, total=len(pending), completed=len(pending))
            names = {t.task_id: t.email.schedule_name for t in pending if t.email is not None}
            schedules_bar = bar.add_task(f"schedules of {campaign_id} deleted", total=len(cancelled))
            deleted: list[str] = []
            try:
                for task_id, existed in scheduler_calls.run_all(
                    cancelled, lambda task_id: delete_schedule(names[task_id], group), rate=rate
                ):
                    deleted.append(task_id)
                    schedules_deleted += existed
                    bar.advance(schedules_bar)
            except Exception as exc:
                gone = set(deleted)
                raise PartlyDone(
                    f"campaign cancel {campaign_id} (every email cancelled; a schedule left fires into a "
                    "Cancelled task: no send)",
                    [f"schedule of {task_id}" for task_id in deleted],
                    [f"schedule of {task_id}" for task_id in cancelled if task_id not in gone],
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


def _email_tasks(campaign_id: str, status: Status) -> list[Task]:
    """The campaign's email tasks in an open ``status`` (a Query of the ``open-tasks`` index)."""
    return [
        task
        for task in task_queries.job_tasks_with_status(campaign_id, status)
        if task.kind == Kind.EMAIL.value and task.email is not None
    ]


def _email_view(task: Task) -> dict[str, Any]:
    assert task.email is not None  # _email_tasks keeps email tasks only
    return {
        "task_id": task.task_id,
        "step": task.email.step,
        "recipient": task.email.recipient,
        "send_at": task.email.send_at,
        "schedule_name": task.email.schedule_name,
    }
