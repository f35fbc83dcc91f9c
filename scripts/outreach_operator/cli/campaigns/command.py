"""The ``outreach campaign`` group: each subcommand's arguments and options, its work in its own module."""

from __future__ import annotations

from pathlib import Path

import click

from outreach_operator.cli.campaigns.cancel import cancel_campaign
from outreach_operator.cli.campaigns.check import check_campaign
from outreach_operator.cli.campaigns.schedule import schedule_campaign
from outreach_operator.cli.campaigns.status import campaign_status
from outreach_operator.cli.output import session

SCHEDULER_RATE = click.option(
    "--scheduler-rate",
    type=click.FloatRange(min=1.0, max=100_000.0),
    default=None,
    help="Scheduler requests a second at most. Default: 80% of the account's Create/DeleteSchedule "
    "quota read from Service Quotas, else of the Region's documented default (1,000 or 250).",
)


@click.group()
def campaign() -> None:
    """Email campaigns: one task and one one-time schedule per recipient and step."""


@campaign.command("schedule")
@click.option(
    "--campaign", "campaign_path", required=True, type=click.Path(path_type=Path, dir_okay=False, exists=True)
)
@click.option(
    "--recipients",
    "recipients_path",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="CSV with a header row and an email column; other columns are placeholders.",
)
@click.option("--from-job", help="Recipients from this finished scrape job's results.")
@click.option("--start", help="First send time (ISO-8601; no offset = the window's zone). Default: now.")
@click.option("--skip-invalid", is_flag=True, help="Schedule the valid rows and list the skipped ones.")
@click.option("--operator", help="Who schedules (default: OUTREACH_OPERATOR or the AWS identity).")
@click.option("--dry-run", is_flag=True, help="Show the plan per day and step; write nothing.")
@SCHEDULER_RATE
@click.pass_context
def schedule(
    ctx: click.Context,
    campaign_path: Path,
    recipients_path: Path | None,
    from_job: str | None,
    start: str | None,
    skip_invalid: bool,
    operator: str | None,
    dry_run: bool,
    scheduler_rate: float | None,
) -> None:
    """Plan every step for every recipient, then write the tasks and their one-time schedules."""
    schedule_campaign(
        session(ctx),
        campaign_path,
        recipients_path,
        from_job,
        start,
        skip_invalid,
        operator,
        dry_run,
        scheduler_rate,
    )


@campaign.command("check")
@click.argument("campaign_path", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.pass_context
def check(ctx: click.Context, campaign_path: Path) -> None:
    """Run the campaign lint (unsubscribe link, postal address, data source, subjects) on a file:
    each rule's verdict and source; exit 2 when one refuses it, as campaign schedule would."""
    check_campaign(session(ctx), campaign_path)


@campaign.command("status")
@click.argument("campaign_id")
@click.pass_context
def status(ctx: click.Context, campaign_id: str) -> None:
    """Per step: planned, statuses, sent, what SES said (delivered, bounced, complained, unsubscribed),
    what came back by mail (replied, auto replied, forwarded), and why emails failed or were cancelled
    (from the counter shards and the campaign-open index, never a Scan)."""
    campaign_status(session(ctx), campaign_id)


@campaign.command("cancel")
@click.argument("campaign_id")
@click.option("--reason", default="campaign cancelled by operator", show_default=True)
@click.option("--operator", help="Who cancels (default: OUTREACH_OPERATOR or the AWS identity).")
@click.option("--dry-run", is_flag=True, help="List the emails that would be cancelled; change nothing.")
@click.option(
    "--delete-schedules",
    is_flag=True,
    help="Also delete the cancelled emails' schedules (each fires into a Cancelled task, sends nothing "
    "and deletes itself otherwise).",
)
@SCHEDULER_RATE
@click.pass_context
def cancel(
    ctx: click.Context,
    campaign_id: str,
    reason: str,
    operator: str | None,
    dry_run: bool,
    delete_schedules: bool,
    scheduler_rate: float | None,
) -> None:
    """Cancel every Pending email of the campaign; a claimed send goes on. Its schedules stay (each
    fires into a Cancelled task, sends nothing and deletes itself) unless --delete-schedules."""
    cancel_campaign(
        session(ctx),
        campaign_id,
        reason,
        operator,
        dry_run,
        scheduler_rate,
        delete_schedules=delete_schedules,
    )
