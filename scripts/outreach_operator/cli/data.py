"""``outreach data erase``: delete one job's or one address's data wherever it is stored (GDPR Art. 17).

outreach --env prod data erase --address jane.doe@example.org --dry-run
outreach --env prod data erase --job sites-3f2a9c1b04de [--json]

What is searched, what is deleted and in which order: ``outreach_operator.erasure`` (inventory, deletion).
The report names every store with what was found and deleted there, what is kept on purpose (the SES
suppression list) and what was not checked (a store no target named); keep it (``--json``) as the
record of the request. Exit 0 done (also when nothing was stored), 1 stopped halfway (what was deleted
and what is left; running it again deletes what is left), 2 bad input or refused (open tasks).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from outreach import clock
from outreach_operator.cli.confirm import confirm_change
from outreach_operator.cli.operator import operator_name
from outreach_operator.cli.output import BadInput, PartlyDone, Session, session, table
from outreach_operator.erasure.deletion import Deleted, erase
from outreach_operator.erasure.inventory import Inventory, find
from outreach_operator.erasure.request import ErasureRequest
from outreach_operator.errors import ErasureStoppedError, InvalidRequestError

REMINDERS = (
    "exports: `outreach job export` writes local files only (nothing in S3); delete the exports you "
    "keep of this data yourself",
    "logs: the functions log an address only as its hash; they expire with the log groups' retention",
    "backups: the tasks table's point-in-time recovery can restore rows up to 35 days back, and its "
    "stream holds the deleted rows' last images for 24 hours",
)
_STORES = (
    ("table_rows", "table_rows", "tasks table rows"),
    ("email_schedules", "email_schedules", "email schedules"),
    ("result_versions", "result_versions", "result object versions"),
    ("failure_record_versions", "failure_record_versions", "stream failure record versions"),
)


class _Bar:
    """The erasure's progress (``Tracker``) as a rich progress bar on stderr."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress
        self._task: TaskID | None = None

    def start(self, what: str, total: int | None) -> None:
        if self._task is not None:
            self._progress.stop_task(self._task)
        self._task = self._progress.add_task(what, total=total)

    def advance(self, steps: int = 1) -> None:
        if self._task is not None:
            self._progress.advance(self._task, steps)


@contextmanager
def _progress(s: Session) -> Iterator[_Bar]:
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=s.err,
        disable=s.as_json,
    )
    with bar:
        yield _Bar(bar)


@click.group()
def data() -> None:
    """Personal data: erasure requests."""


def _request_view(request: ErasureRequest) -> dict[str, Any]:
    if request.job_id is not None:
        return {"job_id": request.job_id}
    return {"address": request.address, "address_hash": request.address_hash}


def _report(inventory: Inventory, *, dry_run: bool) -> dict[str, Any]:
    return {
        "request": _request_view(inventory.request),
        "dry_run": dry_run,
        "found": inventory.counts(),
        "deleted": None,
        "rows": [row.as_dict() for row in inventory.rows],
        "result_objects": sorted({v.key for v in inventory.results}),
        "failure_records": sorted({v.key for v in inventory.failure_records}),
        "blocking": [row.as_dict() for row in inventory.blocking],
        "kept": inventory.kept,
        "not_checked": inventory.not_checked,
        "read": inventory.read,
        "reminders": list(REMINDERS),
    }


def _deleted_view(deleted: Deleted) -> dict[str, Any]:
    return {
        **deleted.counts,
        "email_schedules_already_gone": deleted.schedules_already_gone,
        "changed_since_read": deleted.changed_since_read,
    }


def _render(console: Console, report: dict[str, Any]) -> None:
    request = report["request"]
    subject = (
        f"job {request['job_id']}"
        if "job_id" in request
        else f"address {request['address']} (logged as {request['address_hash']})"
    )
    found, deleted = report["found"], report["deleted"]
    if deleted is None:
        columns = ["store", "would delete" if report["dry_run"] else "found"]
        rows = [[label, found[key]] for key, _, label in _STORES]
    else:
        columns = ["store", "found", "deleted"]
        rows = [[label, found[key], deleted[done]] for key, done, label in _STORES]
    title = f"erasure of {subject}" + (" (dry run: nothing changed)" if report["dry_run"] else "")
    console.print(table(title, columns, rows))
    if report["blocking"]:
        console.print(
            table(
                "open tasks: nothing was deleted",
                ["task", "kind", "status"],
                [[r["task_id"], r["kind"], r["status"]] for r in report["blocking"]],
            )
        )
    for entry in report["kept"]:
        console.print(f"{entry['store']}: {entry['state']}")
    for entry in report["not_checked"]:
        console.print(f"not checked: {entry['store']} ({entry['why']})")
    for reminder in report["reminders"]:
        console.print(f"reminder: {reminder}")


def _refusal(inventory: Inventory) -> str:
    open_tasks = ", ".join(f"{r.task_id} ({r.status})" for r in inventory.blocking[:5])
    more = f" and {len(inventory.blocking) - 5} more" if len(inventory.blocking) > 5 else ""
    if inventory.request.job_id is not None:
        job = inventory.request.job_id
        how = (
            f"cancel it first (`outreach job cancel {job}` or `outreach campaign cancel {job}`) "
            "and wait until no task is Running"
        )
    else:
        how = "a worker holds them now, or a scrape of their site is still open: re-run when they are done"
    count = len(inventory.blocking)
    return f"{inventory.request.subject} has {count} open tasks ({open_tasks}{more}): {how}; nothing deleted"


def _stopped(report: dict[str, Any], stopped: ErasureStoppedError) -> PartlyDone:
    done = [f"{label}: {stopped.deleted.counts[key]}" for _, key, label in _STORES]
    left = [f"{label}: {stopped.left[key]}" for _, key, label in _STORES if stopped.left[key]]
    report.update(deleted=_deleted_view(stopped.deleted), left=stopped.left)
    return PartlyDone(
        f"erasure of {report['request'].get('job_id') or report['request']['address_hash']}",
        done,
        [*left, "(run the same command again: it finds only what is left)"],
        stopped.cause,
    )


@data.command("erase")
@click.option("--job", "job_id", help="Erase this job or campaign: its rows, results and failure records.")
@click.option(
    "--address", help="Erase this e-mail address: its email tasks and the sites' results naming it."
)
@click.option(
    "--operator", help="Who erases (default: OUTREACH_OPERATOR or the AWS identity); in the report."
)
@click.option("--dry-run", is_flag=True, help="List what would be deleted, per store; change nothing.")
@click.pass_context
def erase_command(
    ctx: click.Context, job_id: str | None, address: str | None, operator: str | None, dry_run: bool
) -> None:
    """Delete one job's or one address's data from the tasks table, the results bucket, the stream
    failure records and the email schedules (an address stays on SES's suppression list)."""
    s = session(ctx)
    try:
        request = ErasureRequest.of(job_id, address)
    except InvalidRequestError as exc:
        raise BadInput(str(exc)) from exc
    table_name = s.targets.require("tasks_table", "--table")
    results_bucket = s.targets.require("results_bucket", "--results-bucket")
    failure_bucket = s.targets.failure_bucket
    with _progress(s) as bar:
        inventory = find(
            request,
            table=table_name,
            results_bucket=results_bucket,
            failure_bucket=failure_bucket,
            tracker=bar,
        )
    report = _report(inventory, dry_run=dry_run)
    if inventory.blocking:
        s.emit(report, lambda c: _render(c, report))
        raise BadInput(_refusal(inventory))
    group = s.targets.email_schedule_group
    if inventory.schedules and group is None and not dry_run:
        group = s.targets.require("email_schedule_group", "--email-schedule-group")
    if dry_run or inventory.empty:
        if not dry_run:
            report["deleted"] = _deleted_view(Deleted())
        s.emit(report, lambda c: _render(c, report))
        return
    counts = inventory.counts()
    confirm_change(
        s,
        f"erase {request.subject}: {counts['table_rows']} rows, {counts['result_objects']} results, "
        f"{counts['failure_records']} failure records, {counts['email_schedules']} schedules",
    )
    report.update(erased_by=operator_name(operator), erased_at=clock.iso())
    try:
        with _progress(s) as bar:
            deleted = erase(
                inventory,
                table=table_name,
                results_bucket=results_bucket,
                failure_bucket=failure_bucket,
                schedule_group=group,
                tracker=bar,
            )
    except ErasureStoppedError as stopped:
        partly = _stopped(report, stopped)
        s.emit(report, lambda c: _render(c, report))
        raise partly from stopped.cause
    report["deleted"] = _deleted_view(deleted)
    s.emit(report, lambda c: _render(c, report))
