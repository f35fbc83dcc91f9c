"""``campaign cancel``: every Pending email of a campaign to Cancelled, then its schedule deleted."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from outreach import errors
from outreach.email_schedules import ScheduleTarget, delete_schedule
from outreach.task_model import Kind, Status, Task
from outreach_operator import task_actions, task_queries
from outreach_operator.cli.confirm import confirm_change
from outreach_operator.cli.operator import operator_name
from outreach_operator.cli.output import PartlyDone, Session, table


def cancel_campaign(s: Session, campaign_id: str, reason: str, operator: str | None, dry_run: bool) -> None:
    """Cancel the campaign's Pending emails (list them with ``dry_run``); a claimed send goes on."""
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
                task_actions.cancel(task, reason=f"{reason} (by {who})")
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
