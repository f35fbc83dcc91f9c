"""``job create``: validate a file of sites, then write one Pending task per distinct site, in chunks."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from outreach import errors, task_store
from outreach.errors import InvalidJobInputError
from outreach.task_ids import scrape_task_id, validate_job_id
from outreach.task_model import Kind
from outreach_operator.cli.jobs.progress import progress_bar
from outreach_operator.cli.operator import operator_name
from outreach_operator.cli.output import BadInput, PartlyDone, Session, table
from outreach_operator.cli.sites_file import SitesFile, SitesFileError, default_job_id, read_sites
from outreach_operator.task_queries import task_rows

# URLs per create_scrape_job call: 10 transactions of 90 tasks, one progress step.
CREATE_CHUNK = 900


def existing_task_ids(task_ids: Sequence[str]) -> set[str]:
    """Which of ``task_ids`` already have a row."""
    return set(task_rows(task_ids))


def create_job(
    s: Session,
    path: Path,
    job_id: str | None,
    column: str,
    skip_invalid: bool,
    operator: str | None,
    dry_run: bool,
) -> None:
    """Validate every line of ``path``; unless ``dry_run``, record the job and write its tasks."""
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
                result = task_store.create_scrape_job(job_id, chunk, job_sites=len(ids))
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
