"""The ``outreach job`` group: each subcommand's arguments and options, its work in its own module."""

from __future__ import annotations

from pathlib import Path

import click

from outreach_operator.cli.jobs.cancel import cancel_job
from outreach_operator.cli.jobs.create import create_job
from outreach_operator.cli.jobs.export import export_results
from outreach_operator.cli.jobs.listing import list_recent_jobs
from outreach_operator.cli.jobs.status import job_status
from outreach_operator.cli.output import session


@click.group()
def job() -> None:
    """Scrape jobs: one task per site."""


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
    create_job(session(ctx), path, job_id, column, skip_invalid, operator, dry_run)


@job.command("status")
@click.argument("job_id")
@click.option("--watch", is_flag=True, help="Refresh until every task is terminal.")
@click.option("--interval", type=float, default=2.0, show_default=True, help="Seconds between readings.")
@click.option("--timeout", type=float, help="Give up watching after this many seconds (exit 1).")
@click.pass_context
def status(ctx: click.Context, job_id: str, watch: bool, interval: float, timeout: float | None) -> None:
    """Counts per status, progress, rate, time left and failures grouped by reason."""
    job_status(session(ctx), job_id, watch, interval, timeout)


@job.command("list")
@click.option("--limit", type=int, default=20, show_default=True, help="Most recent jobs to show.")
@click.pass_context
def list_jobs(ctx: click.Context, limit: int) -> None:
    """Recent jobs with their counts (the jobs index and each shown job's counters; no Scan)."""
    list_recent_jobs(session(ctx), limit)


@job.command("export")
@click.argument("job_id")
@click.option("--out", "out_path", required=True, type=click.Path(path_type=Path, dir_okay=False))
@click.option("--with-text", is_flag=True, help="Include the page text (jsonl only).")
@click.option("--force", is_flag=True, help="Overwrite OUT if it exists.")
@click.pass_context
def export(ctx: click.Context, job_id: str, out_path: Path, with_text: bool, force: bool) -> None:
    """Write the scraped results of the job's finished tasks to OUT (.jsonl or .csv; a CSV cell that a
    spreadsheet would evaluate as a formula gets a leading ')."""
    export_results(session(ctx), job_id, out_path, with_text, force)


@job.command("cancel")
@click.argument("job_id")
@click.option("--reason", default="cancelled by operator", show_default=True)
@click.option("--operator", help="Who cancels (default: OUTREACH_OPERATOR or the AWS identity).")
@click.option("--dry-run", is_flag=True, help="List the tasks that would be cancelled; change nothing.")
@click.pass_context
def cancel(ctx: click.Context, job_id: str, reason: str, operator: str | None, dry_run: bool) -> None:
    """Move every open task of the job to Cancelled: Pending ones, and Running scrape tasks; a Running
    email task (being sent) is left to its worker and counted as skipped."""
    cancel_job(session(ctx), job_id, reason, operator, dry_run)
