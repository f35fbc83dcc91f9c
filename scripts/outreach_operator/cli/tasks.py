"""``outreach task``: show one task, and an operator's requeue of terminal or stuck tasks.

An email task is requeued only from Failed or Cancelled with a reason that proves it was not sent
(``task_actions.requeue_refusal``, which the store's write enforces too): never Running (``--force``
takes over scrape tasks only), never Finished, never ``delivery_unknown``.
"""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console

from outreach import clients, clock, config, task_store
from outreach.task_model import Status, Task
from outreach_operator import task_actions
from outreach_operator.cli.confirm import confirm_change
from outreach_operator.cli.operator import operator_name
from outreach_operator.cli.output import BadInput, PartlyDone, session, table


@click.group()
def task() -> None:
    """Single tasks."""


def _row(task_id: str) -> dict[str, Any]:
    """The task's whole row, as stored (every attribute, not only the ones Task models)."""
    item = (
        clients.dynamodb()
        .get_item(TableName=config.tasks_table(), Key={"task_id": {"S": task_id}}, ConsistentRead=True)
        .get("Item")
    )
    if item is None:
        raise BadInput(f"no task {task_id!r} in {config.tasks_table()}")
    return task_store.from_item(item)


@task.command("show")
@click.argument("task_id")
@click.pass_context
def show(ctx: click.Context, task_id: str) -> None:
    """Every attribute of one task."""
    s = session(ctx)
    s.targets.require("tasks_table", "--table")
    row = _row(task_id)
    s.emit(row, lambda c: c.print(table(task_id, ["attribute", "value"], sorted(row.items()))))


def _refusal(task: Task, *, force: bool) -> str | None:
    """Why a task is not requeued; None when it is. The store's rules (an email that may have been
    sent) come first: ``--force`` does not reach them."""
    if task.status is Status.PENDING:
        return "already Pending"
    never = task_actions.requeue_refusal(task)
    if never is not None:
        return never
    if task.status is Status.RUNNING and task.lease_is_live(clock.now()) and not force:
        assert task.lease is not None
        return f"held by a live delivery until {task.lease.expires_at} (use --force to take it over)"
    return None


def _listed(task_ids: list[str]) -> str:
    shown = ", ".join(task_ids[:3]) + (f" and {len(task_ids) - 3} more" if len(task_ids) > 3 else "")
    return f"{len(task_ids)} tasks ({shown})"


@task.command("requeue")
@click.argument("task_ids", nargs=-1, required=True)
@click.option("--reason", required=True, help="Why (recorded on each task).")
@click.option("--operator", help="Who (default: OUTREACH_OPERATOR or the AWS identity).")
@click.option(
    "--force", is_flag=True, help="Also take over Running scrape tasks with a live lease (never email tasks)."
)
@click.option("--dry-run", is_flag=True, help="Show what would be requeued; change nothing.")
@click.pass_context
def requeue(
    ctx: click.Context,
    task_ids: tuple[str, ...],
    reason: str,
    operator: str | None,
    force: bool,
    dry_run: bool,
) -> None:
    """Put terminal or stuck tasks back to Pending; the stream dispatches them again."""
    s = session(ctx)
    s.targets.require("tasks_table", "--table")
    if not reason.strip():
        raise BadInput("--reason must say why")
    tasks: list[Task] = []
    for task_id in task_ids:
        found = task_store.get_task(task_id)
        if found is None:
            raise BadInput(f"no task {task_id!r} in {config.tasks_table()}")
        tasks.append(found)
    refused = {t.task_id: r for t in tasks if (r := _refusal(t, force=force))}
    chosen = [t for t in tasks if t.task_id not in refused]
    done: list[str] = []
    if not dry_run and chosen:
        confirm_change(s, f"requeue {_listed([t.task_id for t in chosen])}")
        who = operator_name(operator)
        for index, item in enumerate(chosen):
            try:
                task_actions.operator_requeue(item, by=who, reason=reason)
            except Exception as exc:
                raise PartlyDone("task requeue", done, [t.task_id for t in chosen[index:]], exc) from exc
            done.append(item.task_id)
            s.note(f"requeued {item.task_id} ({item.status.value} -> Pending) by {who}: {reason}")
    report = {
        "dry_run": dry_run,
        "requeue": [{"task_id": t.task_id, "from": t.status.value} for t in chosen],
        "requeued": done,
        "refused": [{"task_id": k, "why": v} for k, v in refused.items()],
    }

    def render(console: Console) -> None:
        verb = "would requeue" if dry_run else "requeued"
        console.print(
            table(
                f"{verb} {len(chosen)} tasks", ["task", "from"], [[t.task_id, t.status.value] for t in chosen]
            )
        )
        if refused:
            console.print(table("left as they are", ["task", "why"], list(refused.items())))

    s.emit(report, render)
    if refused and not chosen:
        raise BadInput("nothing to requeue")
