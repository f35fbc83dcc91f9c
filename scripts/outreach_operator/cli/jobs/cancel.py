"""``job cancel``: a job's open tasks to Cancelled, never an email task that is being sent."""

from __future__ import annotations

from rich.console import Console, Group

from outreach import errors
from outreach.task_model import Kind, Status, Task
from outreach_operator import task_actions, task_queries
from outreach_operator.cli.confirm import confirm_change
from outreach_operator.cli.operator import operator_name
from outreach_operator.cli.output import PartlyDone, Session, table


def cancel_job(s: Session, job_id: str, reason: str, operator: str | None, dry_run: bool) -> None:
    """Cancel the job's Pending tasks and Running scrape tasks (list them with ``dry_run``); emitted."""
    s.targets.require("tasks_table", "--table")
    found = [
        *task_queries.job_tasks_with_status(job_id, Status.PENDING),
        *task_queries.job_tasks_with_status(job_id, Status.RUNNING),
    ]
    open_tasks = [t for t in found if not _being_sent(t)]
    skipped = [t for t in found if _being_sent(t)]
    cancelled: list[str] = []
    moved_on: list[str] = []
    if not dry_run and open_tasks:
        confirm_change(s, f"cancel {len(open_tasks)} open tasks of job {job_id}")
        who = operator_name(operator)
        for index, task in enumerate(open_tasks):
            try:
                task_actions.operator_cancel(task, reason=f"{reason} (by {who})")
            except errors.TransitionRejectedError:  # claimed, finished or failed meanwhile: left to it
                moved_on.append(task.task_id)
                continue
            except Exception as exc:
                raise PartlyDone(
                    f"job cancel {job_id}", cancelled, [t.task_id for t in open_tasks[index:]], exc
                ) from exc
            cancelled.append(task.task_id)
    report = {
        "job_id": job_id,
        "dry_run": dry_run,
        "open_tasks": [{"task_id": t.task_id, "status": t.status.value, "url": t.url} for t in open_tasks],
        "cancelled": cancelled,
        "moved_on": moved_on,
        "skipped_being_sent": [t.task_id for t in skipped],
    }

    def render(console: Console) -> None:
        rows = [[t.task_id, t.status.value, t.url] for t in open_tasks]
        verb = "would cancel" if dry_run else "cancelled"
        console.print(
            Group(
                table(
                    f"{verb} {len(open_tasks) if dry_run else len(cancelled)} tasks",
                    ["task", "was", "url"],
                    rows,
                )
            )
        )
        if moved_on:
            console.print(
                f"{len(moved_on)} tasks were claimed or became terminal first and were left as they are"
            )
        if skipped:
            console.print(
                f"skipped {len(skipped)} email tasks that are Running (being sent): an email that may be "
                "going out is never cancelled; the worker or the email reconciler settles each"
            )

    s.emit(report, render)


def _being_sent(task: Task) -> bool:
    """An email task a worker has claimed: it may be going out now, so it is never cancelled."""
    return task.kind == Kind.EMAIL.value and task.status is Status.RUNNING
