"""The ``outreach dlq`` group: each subcommand's arguments and options, its work in its own module."""

from __future__ import annotations

import click

from outreach_operator.cli.dlq.redrive import REDRIVEN, redrive_dlq
from outreach_operator.cli.dlq.replay import replay_dlq
from outreach_operator.cli.dlq.show import show_scrape_dlq
from outreach_operator.cli.output import session


@click.group()
def dlq() -> None:
    """Dead-letter queues."""


@dlq.command("show")
@click.argument("which", type=click.Choice(["scrape"]))
@click.option("--limit", type=int, default=100, show_default=True)
@click.pass_context
def show(ctx: click.Context, which: str, limit: int) -> None:
    """Messages of the scrape DLQ, left in place."""
    show_scrape_dlq(session(ctx), limit)


@dlq.command("redrive")
@click.argument("which", type=click.Choice(sorted(REDRIVEN)))
@click.option("--rate", type=click.IntRange(1, 500), help="Messages per second (default: SQS chooses).")
@click.option("--timeout", type=float, default=600.0, show_default=True, help="Seconds to follow the move.")
@click.option("--dry-run", is_flag=True, help="Show what would be moved; move nothing.")
@click.pass_context
def redrive(ctx: click.Context, which: str, rate: int | None, timeout: float, dry_run: bool) -> None:
    """Move a DLQ's messages back to its queue (StartMessageMoveTask): scrape or ses-events."""
    redrive_dlq(session(ctx), which, rate, timeout, dry_run)


@dlq.command("replay")
@click.argument("which", type=click.Choice(["pipe", "reconciler"]))
@click.option("--limit", type=int, default=100, show_default=True, help="Messages to replay in this run.")
@click.option(
    "--function", help="reconciler: invoke this one of the environment's reconcilers, not the message's."
)
@click.option(
    "--job",
    "jobs",
    multiple=True,
    help="pipe: re-dispatch only this job's Pending tasks (repeatable; required if a record names no job).",
)
@click.option("--dry-run", is_flag=True, help="Show what would be replayed; change nothing.")
@click.pass_context
def replay(
    ctx: click.Context, which: str, limit: int, function: str | None, jobs: tuple[str, ...], dry_run: bool
) -> None:
    """Replay a DLQ whose source is not a queue: re-dispatch or re-invoke what each message names."""
    replay_dlq(session(ctx), which, limit, function, jobs, dry_run)
