"""``outreach job``: create a job from a file of sites, follow it, list, export and cancel jobs.

``create`` records the job as a ``scrape`` job: an id already recorded as a campaign (an email job) is
refused (``errors.JobKindConflictError``, exit 2) before anything is written. ``cancel`` never cancels an
email task that is Running (its worker may be sending it); it says how many it left.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from rich.console import Console, Group
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from outreach import clients, clock, config, errors, task_store
from outreach.errors import InvalidJobInputError
from outreach.task_ids import scrape_task_id, validate_job_id
from outreach.task_model import Kind, Status, Task
from outreach_operator.cli.confirm import confirm_change
from outreach_operator.cli.follow import JobProgress, follow_job, snapshot
from outreach_operator.cli.job_view import (
    FailureGroup,
    failures_renderable,
    live_progress,
    progress_renderable,
    show_progress,
)
from outreach_operator.cli.operator import operator_name
from outreach_operator.cli.output import BadInput, Failed, PartlyDone, Session, session, table
from outreach_operator.cli.sites_file import SitesFile, SitesFileError, default_job_id, read_sites
from outreach_operator.cli.spreadsheet_cells import QUOTING as CSV_QUOTING
from outreach_operator.cli.spreadsheet_cells import text_cell
from outreach_operator.errors import FollowTimeoutError

# URLs per create_scrape_job call: 10 transactions of 90 tasks, one progress step.
CREATE_CHUNK = 900
_BATCH_GET_LIMIT = 100


def progress_bar(s: Session) -> Progress:
    """A progress bar on stderr (none with --json)."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=s.err,
        disable=s.as_json,
        transient=False,
    )


@click.group()
def job() -> None:
    """Scrape jobs: one task per site."""


# ---- create -----------------------------------------------------------------------------------


def task_rows(task_ids: Sequence[str], attributes: Sequence[str] = ()) -> dict[str, dict[str, Any]]:
    """The rows of ``task_ids`` that exist, with ``task_id`` and ``attributes`` only, as DynamoDB
    attribute values (BatchGetItem, 100 keys a call, consistent reads)."""
    table_name = config.tasks_table()
    names = {f"#a{i}": name for i, name in enumerate(["task_id", *attributes])}
    found: dict[str, dict[str, Any]] = {}
    for start in range(0, len(task_ids), _BATCH_GET_LIMIT):
        keys: list[dict[str, Any]] = [
            {"task_id": {"S": tid}} for tid in task_ids[start : start + _BATCH_GET_LIMIT]
        ]
        while keys:
            response = clients.dynamodb().batch_get_item(
                RequestItems={
                    table_name: {
                        "Keys": keys,
                        "ProjectionExpression": ", ".join(names),
                        "ExpressionAttributeNames": names,
                        "ConsistentRead": True,
                    }
                }
            )
            for item in response.get("Responses", {}).get(table_name, []):
                found[item["task_id"]["S"]] = dict(item)
            unprocessed = response.get("UnprocessedKeys", {})
            keys = list(unprocessed[table_name]["Keys"]) if table_name in unprocessed else []
    return found


def existing_task_ids(task_ids: Sequence[str]) -> set[str]:
    """Which of ``task_ids`` already have a row."""
    return set(task_rows(task_ids))


def _bad_lines_report(sites: SitesFile) -> list[dict[str, Any]]:
    return [{"line": bad.line, "value": bad.value, "reason": bad.reason} for bad in sites.invalid]


def _render_invalid(console: Console, rows: list[dict[str, Any]], title: str) -> None:
    console.print(
        table(title, ["line", "value", "reason"], [[r["line"], r["value"], r["reason"]] for r in rows])
    )


def _read(path: Path, column: str) -> SitesFile:
    try:
        return read_sites(path, column=column)
    except SitesFileError as exc:
        raise BadInput(str(exc)) from exc


@job.command("create")
@click.option("--file", "path", required=True, type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--job-id", help="Default: the file's name and a hash of its content (same file, same job).")
@click.option("--column", default="url", show_default=True, help="CSV column holding the URL.")
@click.option("--skip-invalid", is_flag=True, help="Write the valid lines and list the skipped ones.")
@click.option("--operator", help="Who creates the job (default: OUTREACH_OPERATOR or the AWS identity).")
@click.option("--dry-run", is_flag=True, help="Show what would be created; write nothing.")
@click.pass_context
def create(
    ctx: click.Context,
    path: Path,
    job_id: str | None,
    column: str,
    skip_invalid: bool,
    operator: str | None,
    dry_run: bool,
) -> None:
    """Validate every line of FILE, then write one Pending task per distinct site."""
    s = session(ctx)
    s.targets.require("tasks_table", "--table")
    sites = _read(path, column)
    invalid = _bad_lines_report(sites)
    if invalid and not skip_invalid:
        s.emit(
            {"file": str(path), "invalid": invalid, "written": 0},
            lambda c: _render_invalid(c, invalid, f"{len(invalid)} invalid lines in {path}"),
        )
        raise BadInput(
            f"{len(invalid)} invalid lines in {path}; nothing written (fix them or --skip-invalid)"
        )
    chosen = job_id or default_job_id(sites)
    try:
        validate_job_id(chosen)
    except InvalidJobInputError as exc:
        raise BadInput(str(exc)) from exc
    if not sites.urls:
        raise BadInput(f"{path}: no valid URL to create a job from")
    ids = [scrape_task_id(chosen, url) for url in sites.urls]
    report: dict[str, Any] = {
        "job_id": chosen,
        "file": str(path),
        "lines": sites.lines,
        "tasks": len(ids),
        "duplicates_in_file": sites.duplicates,
        "skipped_invalid": invalid,
        "dry_run": dry_run,
    }
    try:
        if dry_run:
            task_store.check_job_kind(chosen, Kind.SCRAPE)
            existing = existing_task_ids(ids)
            report.update(created=0, would_create=len(ids) - len(existing), existing=len(existing))
        else:
            report.update(_write_job(s, chosen, sites, ids, operator))
    except errors.JobKindConflictError as exc:
        raise BadInput(f"{exc}; nothing written") from exc
    s.emit(report, lambda c: _render_created(c, report))


def _write_job(
    s: Session, job_id: str, sites: SitesFile, ids: Sequence[str], operator: str | None
) -> dict[str, int]:
    task_store.record_job(
        job_id,
        kind=Kind.SCRAPE,
        source=f"{sites.path.name} sha256:{sites.sha256}",
        tasks=len(ids),
        created_by=operator_name(operator),
    )
    created = existing = 0
    with progress_bar(s) as bar:
        step = bar.add_task(f"job {job_id}", total=len(sites.urls))
        for start in range(0, len(sites.urls), CREATE_CHUNK):
            chunk = sites.urls[start : start + CREATE_CHUNK]
            try:
                result = task_store.create_scrape_job(job_id, chunk)
            except Exception as exc:
                raise PartlyDone(
                    f"job create {job_id}",
                    [f"distinct sites 1-{start} written ({created} new, {existing} existing)"],
                    [
                        f"distinct sites {start + 1}-{len(sites.urls)} "
                        "(re-run the same command: it writes only what is missing)"
                    ],
                    exc,
                ) from exc
            created += len(result.created)
            existing += len(result.existing)
            bar.advance(step, len(chunk))
    return {"created": created, "existing": existing}


def _render_created(console: Console, report: dict[str, Any]) -> None:
    if report["skipped_invalid"]:
        _render_invalid(
            console, report["skipped_invalid"], f"skipped {len(report['skipped_invalid'])} invalid lines"
        )
    if report["dry_run"]:
        console.print(
            f"dry run: job {report['job_id']} would get {report['would_create']:,} new tasks "
            f"({report['existing']:,} already exist); nothing written"
        )
        return
    console.print(
        f"job {report['job_id']}: {report['tasks']:,} tasks ({report['created']:,} created, "
        f"{report['existing']:,} already there, {report['duplicates_in_file']:,} duplicate lines)"
    )


# ---- status -----------------------------------------------------------------------------------


def failure_groups(job_id: str) -> list[FailureGroup]:
    """The job's Failed tasks grouped by the reason before the detail, largest group first."""
    failed = task_store.job_tasks_with_status(job_id, Status.FAILED)
    counts: Counter[str] = Counter()
    example: dict[str, Task] = {}
    for task in sorted(failed, key=lambda t: t.task_id):
        reason = (task.failure_reason or "unknown").split(":", 1)[0].strip() or "unknown"
        counts[reason] += 1
        example.setdefault(reason, task)
    return [
        FailureGroup(reason=r, count=n, example_url=example[r].url, example_task=example[r].task_id)
        for r, n in counts.most_common()
    ]


def _lifetime_rate(job_id: str, progress: JobProgress) -> JobProgress:
    row = task_store.get_job(job_id)
    if row is None or "created_at" not in row or not progress.terminal:
        return progress
    started = datetime.fromisoformat(str(row["created_at"]).replace("Z", "+00:00"))
    if started.tzinfo is None:
        started = started.replace(tzinfo=UTC)
    elapsed = clock.now() - started.timestamp()
    if elapsed <= 0:
        return progress
    return JobProgress(
        job_id=job_id,
        counts=progress.counts,
        elapsed_seconds=elapsed,
        rate_per_second=progress.terminal / elapsed,
    )


@job.command("status")
@click.argument("job_id")
@click.option("--watch", is_flag=True, help="Refresh until every task is terminal.")
@click.option("--interval", type=float, default=2.0, show_default=True, help="Seconds between readings.")
@click.option("--timeout", type=float, help="Give up watching after this many seconds (exit 1).")
@click.pass_context
def status(ctx: click.Context, job_id: str, watch: bool, interval: float, timeout: float | None) -> None:
    """Counts per status, progress, rate, time left and failures grouped by reason."""
    s = session(ctx)
    s.targets.require("tasks_table", "--table")
    progress = _lifetime_rate(job_id, snapshot(job_id))
    if progress.total == 0 and task_store.get_job(job_id) is None:
        raise BadInput(f"no job {job_id!r} in {s.targets.tasks_table}")
    if watch and not progress.is_done:
        progress = watch_job(s, job_id, interval=interval, timeout=timeout)
    groups = failure_groups(job_id) if progress.counts.get(Status.FAILED.value, 0) else []
    data = {**progress.as_dict(), "failures": [g.as_dict() for g in groups]}

    def render(console: Console) -> None:
        if not watch:
            console.print(progress_renderable(progress))
        if groups:
            console.print(failures_renderable(groups))

    s.emit(data, render)


def watch_job(s: Session, job_id: str, *, interval: float, timeout: float | None) -> JobProgress:
    """Follow the job with a live display (silent with --json); the final reading is returned."""
    try:
        if s.as_json:
            return follow_job(job_id, lambda _: None, interval=interval, timeout=timeout)
        with live_progress(s.out) as live:
            return follow_job(job_id, lambda p: show_progress(live, p), interval=interval, timeout=timeout)
    except FollowTimeoutError as exc:
        raise Failed(str(exc)) from exc


# ---- list -------------------------------------------------------------------------------------


@job.command("list")
@click.option("--limit", type=int, default=20, show_default=True, help="Most recent jobs to show.")
@click.pass_context
def list_jobs(ctx: click.Context, limit: int) -> None:
    """Recent jobs with their counts (reads the whole table: a Scan)."""
    s = session(ctx)
    s.targets.require("tasks_table", "--table")
    jobs = sorted(
        task_store.list_jobs(), key=lambda j: (str(j.get("created_at", "")), j["job_id"]), reverse=True
    )
    shown = jobs[:limit]
    for entry in shown:
        entry["total"] = sum(int(entry[st.value]) for st in Status)
    columns = ["job_id", "created_at", "created_by", "total", *(st.value for st in Status)]
    s.emit(
        shown,
        lambda c: c.print(
            table(f"{len(shown)} of {len(jobs)} jobs", columns, [[j.get(k) for k in columns] for j in shown])
        ),
    )


# ---- export -----------------------------------------------------------------------------------

_CSV_COLUMNS = (
    "task_id",
    "result_key",
    "final_url",
    "title",
    "description",
    "language",
    "emails",
    "phones",
    "social_links",
    "pages",
)


def result_task_id(job_id: str, key: str) -> str:
    """The task id a result key was written for (``outreach.results.result_key`` in reverse)."""
    digest = key.rsplit("/", 1)[-1].removesuffix(".json").rsplit("_", 1)[-1]
    return f"scrape#{job_id}#{digest}"


def _export_row(job_id: str, key: str, document: dict[str, Any], with_text: bool) -> dict[str, Any]:
    row: dict[str, Any] = {"task_id": result_task_id(job_id, key), "result_key": key}
    row.update({k: v for k, v in document.items() if k != "pages" and (with_text or k != "text")})
    row["pages"] = len(document.get("pages", []))
    return row


def _csv_cell(value: Any) -> str:
    """The CSV cell of a result field, never one a spreadsheet evaluates (``spreadsheet_cells``)."""
    if isinstance(value, list):
        return text_cell(";".join(_csv_item(v) for v in value))
    if isinstance(value, dict):
        return text_cell(json.dumps(value, sort_keys=True))
    return "" if value is None else text_cell(str(value))


def _csv_item(value: Any) -> str:
    """An e-mail as its address, a phone as its E.164 number (`` (fax)`` for a fax), else JSON or text."""
    if isinstance(value, dict):
        if "address" in value:
            return str(value["address"])
        if "e164" in value:
            return f"{value['e164']} (fax)" if value.get("kind") == "fax" else str(value["e164"])
        return json.dumps(value, sort_keys=True)
    return str(value)


def result_keys(bucket: str, job_id: str) -> list[str]:
    """The keys of the job's results in ``bucket`` (one per finished task), sorted."""
    prefix = f"results/{job_id}/"
    return sorted(
        obj["Key"]
        for page in clients.s3().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        for obj in page.get("Contents", [])
    )


def result_documents(bucket: str, keys: Sequence[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(key, result document)`` for each of ``keys``, read one at a time."""
    for key in keys:
        yield key, json.loads(clients.s3().get_object(Bucket=bucket, Key=key)["Body"].read())


@job.command("export")
@click.argument("job_id")
@click.option("--out", "out_path", required=True, type=click.Path(path_type=Path, dir_okay=False))
@click.option("--with-text", is_flag=True, help="Include the page text (jsonl only).")
@click.option("--force", is_flag=True, help="Overwrite OUT if it exists.")
@click.pass_context
def export(ctx: click.Context, job_id: str, out_path: Path, with_text: bool, force: bool) -> None:
    """Write the scraped results of the job's finished tasks to OUT (.jsonl or .csv; a CSV cell that a
    spreadsheet would evaluate as a formula gets a leading ')."""
    s = session(ctx)
    bucket = s.targets.require("results_bucket", "--results-bucket")
    suffix = out_path.suffix.lower()
    if suffix not in {".jsonl", ".csv"}:
        raise BadInput(f"--out must end in .jsonl or .csv, not {out_path.name!r}")
    keys = result_keys(bucket, job_id)
    written = 0
    try:
        out = out_path.open("w" if force else "x", encoding="utf-8", newline="")
    except FileExistsError as exc:
        raise BadInput(f"{out_path} exists: give --force to overwrite it") from exc
    with out as handle, progress_bar(s) as bar:
        step = bar.add_task(f"export {job_id}", total=len(keys))
        writer = (
            csv.DictWriter(handle, fieldnames=_CSV_COLUMNS, extrasaction="ignore", quoting=CSV_QUOTING)
            if suffix == ".csv"
            else None
        )
        if writer is not None:
            writer.writeheader()
        for key, document in result_documents(bucket, keys):
            row = _export_row(job_id, key, document, with_text and writer is None)
            if writer is not None:
                writer.writerow({k: _csv_cell(row.get(k)) for k in _CSV_COLUMNS})
            else:
                handle.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
            written += 1
            bar.advance(step)
    finished = task_store.job_counts(job_id)[Status.FINISHED.value] if s.targets.tasks_table else None
    report = {"job_id": job_id, "out": str(out_path), "exported": written, "finished_tasks": finished}
    s.emit(
        report,
        lambda c: c.print(
            f"exported {written:,} results of job {job_id} to {out_path}"
            + ("" if finished is None else f" (the job counts {finished:,} finished tasks)")
        ),
    )


# ---- cancel -----------------------------------------------------------------------------------


def _being_sent(task: Task) -> bool:
    """An email task a worker has claimed: it may be going out now, so it is never cancelled."""
    return task.kind == Kind.EMAIL.value and task.status is Status.RUNNING


@job.command("cancel")
@click.argument("job_id")
@click.option("--reason", default="cancelled by operator", show_default=True)
@click.option("--operator", help="Who cancels (default: OUTREACH_OPERATOR or the AWS identity).")
@click.option("--dry-run", is_flag=True, help="List the tasks that would be cancelled; change nothing.")
@click.pass_context
def cancel(ctx: click.Context, job_id: str, reason: str, operator: str | None, dry_run: bool) -> None:
    """Move every open task of the job to Cancelled: Pending ones, and Running scrape tasks; a Running
    email task (being sent) is left to its worker and counted as skipped."""
    s = session(ctx)
    s.targets.require("tasks_table", "--table")
    found = [
        *task_store.job_tasks_with_status(job_id, Status.PENDING),
        *task_store.job_tasks_with_status(job_id, Status.RUNNING),
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
                task_store.operator_cancel(task, reason=f"{reason} (by {who})")
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
