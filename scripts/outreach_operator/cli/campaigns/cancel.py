"""``campaign cancel``: every Pending email of a campaign to Cancelled; its schedules deleted on request.

The tasks are cancelled in transactions of up to 99 (``task_actions.cancel_many``: each task only if it
is still Pending, so an email a worker claimed meanwhile is left to it). Once the last transaction is
written no email of the campaign can be sent: the worker a schedule invokes reads the task first and
returns on a terminal one without sending (``email_worker.process``: ``AlreadyTerminal``), and each
schedule was created with ``ActionAfterCompletion=DELETE``, so Scheduler deletes it after that one
invocation (https://docs.aws.amazon.com/scheduler/latest/UserGuide/managing-schedule-delete.html).

So the schedules stay by default. What they cost until they fire: one Scheduler invocation each
($1.00 a million after 14 million free a month, https://aws.amazon.com/eventbridge/pricing/), one
short worker invocation (a GetItem) each, and one of the account's schedules each against the
Region's quota of schedules (10,000,000 by default,
https://docs.aws.amazon.com/scheduler/latest/UserGuide/scheduler-quotas.html) until its send time.
``--delete-schedules`` deletes them too, after the tasks, many at once under Scheduler's request
rate (``scheduler_calls``, the rate from ``scheduler_rate``): an interrupted run loses nothing, since
a schedule left fires into a Cancelled task.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from rich.progress import Progress

from outreach import task_store
from outreach.email_schedules import delete_schedule
from outreach.task_model import Status
from outreach.task_store import OpenEmail
from outreach_operator import scheduler_calls, task_actions
from outreach_operator.cli.campaigns.scheduler_rate import scheduler_rate_of
from outreach_operator.cli.confirm import confirm_change
from outreach_operator.cli.jobs.progress import progress_bar
from outreach_operator.cli.operator import operator_name
from outreach_operator.cli.output import PartlyDone, Session, table


def cancel_campaign(
    s: Session,
    campaign_id: str,
    reason: str,
    operator: str | None,
    dry_run: bool,
    rate: float | None,
    *,
    delete_schedules: bool = False,
) -> None:
    """Cancel the campaign's Pending emails (list them with ``dry_run``); a claimed send goes on. With
    ``delete_schedules``, the cancelled emails' schedules are deleted afterwards."""
    s.targets.require("tasks_table", "--table")
    pending = _email_tasks(campaign_id, Status.PENDING)
    running = _email_tasks(campaign_id, Status.RUNNING)
    cancelled: list[str] = []
    moved_on: list[str] = []
    schedules_deleted = 0
    deleting: dict[str, Any] | None = None
    if not dry_run:
        if delete_schedules:
            group = s.targets.require("email_schedule_group", "--email-schedule-group")
            deleting = scheduler_rate_of(s, "DeleteSchedule", rate)
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
                    f"campaign cancel {campaign_id} (no schedule deleted: each fires into a Cancelled "
                    "task and sends nothing)",
                    cancelled,
                    [t.task_id for t in pending if t.task_id not in done],
                    exc,
                ) from exc
            moved_on = outcome.rejected  # claimed or done meanwhile: not interrupted
            bar.update(tasks_bar, total=len(pending), completed=len(pending))
            if deleting is not None:
                names = {t.task_id: t.schedule_name for t in pending}

                def delete(task_id: str) -> bool:
                    return delete_schedule(names[task_id], group)

                schedules_deleted = _delete_schedules(bar, campaign_id, cancelled, delete, deleting)
    report: dict[str, Any] = {
        "campaign_id": campaign_id,
        "dry_run": dry_run,
        "pending": [_email_view(t) for t in pending],
        "running_not_interrupted": [_email_view(t) for t in running],
        "cancelled": cancelled,
        "schedules_deleted": schedules_deleted,
        "schedules_left": 0 if deleting is not None else len(cancelled),
        "scheduler_rate": deleting,
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
        if report["schedules_left"]:
            console.print(
                f"{report['schedules_left']} schedules stay: each fires into a Cancelled task, sends "
                "nothing and deletes itself (--delete-schedules deletes them now)"
            )
        if moved_on:
            console.print(
                f"{len(moved_on)} emails were claimed or finished meanwhile and were left as they are"
            )

    s.emit(report, render)


def _delete_schedules(
    bar: Progress,
    campaign_id: str,
    cancelled: list[str],
    delete: Callable[[str], bool],
    rate: dict[str, Any],
) -> int:
    """The cancelled emails' schedules deleted under Scheduler's rate; how many existed."""
    schedules_bar = bar.add_task(f"schedules of {campaign_id} deleted", total=len(cancelled))
    deleted: list[str] = []
    existed_count = 0
    try:
        for task_id, existed in scheduler_calls.run_all(cancelled, delete, rate=rate["rate_per_second"]):
            deleted.append(task_id)
            existed_count += existed
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
    return existed_count


def _email_tasks(campaign_id: str, status: Status) -> list[OpenEmail]:
    """The campaign's email tasks in an open ``status``, the fields the cancel needs (its own keys of
    the ``campaign-open`` index, projected: no other campaign's email is read, nor any message)."""
    return list(task_store.open_emails(campaign_id, status))


def _email_view(task: OpenEmail) -> dict[str, Any]:
    return {
        "task_id": task.task_id,
        "step": task.step,
        "recipient": task.recipient,
        "send_at": task.send_at,
        "schedule_name": task.schedule_name,
    }
