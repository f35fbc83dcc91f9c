"""``outreach scraper pause|resume|status``: the scraper's kill switch, its reserved concurrency.

Reserved concurrency 0 throttles every invocation of a function
(https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html): the scrape queue's
messages stay in the queue, each throttled receive counted towards its ``maxReceiveCount``
(https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html), so a pause longer than
``maxReceiveCount`` visibility timeouts moves messages to the DLQ (``outreach dlq redrive scrape``
brings them back). ``pause`` tags the function with the reservation it had, which ``resume`` restores.
The next ``terraform apply`` also restores the configured reservation.
"""

from __future__ import annotations

from typing import Any

import boto3
import click
from rich.console import Console

from outreach_operator.cli.output import BadInput, Session

PAUSED_FROM_TAG = "outreach-paused-from"
UNRESERVED = "unreserved"  # the tag's value when the function had no reservation before the pause


class _Switch:
    """The function's reservation and the tag that remembers it."""

    def __init__(self, function: str) -> None:
        self.lam = boto3.client("lambda")
        self.function = function
        self.arn: str = self.lam.get_function(FunctionName=function)["Configuration"]["FunctionArn"]

    def reserved(self) -> int | None:
        value = self.lam.get_function_concurrency(FunctionName=self.function).get(
            "ReservedConcurrentExecutions"
        )
        return None if value is None else int(value)

    def paused_from(self) -> str | None:
        tags: dict[str, str] = self.lam.list_tags(Resource=self.arn).get("Tags", {})
        return tags.get(PAUSED_FROM_TAG)

    def state(self) -> dict[str, Any]:
        reserved = self.reserved()
        return {"function": self.function, "reserved_concurrency": reserved, "paused": reserved == 0}


def _function(s: Session, override: str | None) -> str:
    return override or s.targets.require("scraper_function", "--function")


def _render(verb: str, report: dict[str, Any]) -> Any:
    def render(console: Console) -> None:
        before, after = report.get("before"), report.get("after")
        prefix = "dry run: would " if report.get("dry_run") else ""
        console.print(
            f"{prefix}{verb} {report['function']}: reserved concurrency {_shown(before)} -> {_shown(after)}"
        )

    return render


def _shown(value: int | None) -> str:
    return UNRESERVED if value is None else str(value)


@click.group()
def scraper() -> None:
    """Stop and restart the scraper (its reserved concurrency), e.g. while a site is being harmed."""


@scraper.command()
@click.option("--function", "function_name", help="Scraper function (default: the environment's).")
@click.pass_context
def status(ctx: click.Context, function_name: str | None) -> None:
    """Show the scraper's reserved concurrency and whether it is paused."""
    s: Session = ctx.obj
    switch = _Switch(_function(s, function_name))
    report = {**switch.state(), "paused_from": switch.paused_from()}
    s.emit(
        report,
        lambda c: c.print(
            f"{report['function']}: reserved concurrency {_shown(report['reserved_concurrency'])}"
            + (" (paused)" if report["paused"] else "")
        ),
    )


@scraper.command()
@click.option("--function", "function_name", help="Scraper function (default: the environment's).")
@click.option("--dry-run", is_flag=True, help="Show what would change; change nothing.")
@click.pass_context
def pause(ctx: click.Context, function_name: str | None, dry_run: bool) -> None:
    """Set reserved concurrency 0: no scraper invocation starts; running ones finish."""
    s: Session = ctx.obj
    switch = _Switch(_function(s, function_name))
    before = switch.reserved()
    report = {"function": switch.function, "before": before, "after": 0, "dry_run": dry_run}
    if before == 0:
        raise BadInput(f"{switch.function} is already paused (reserved concurrency 0)")
    if not dry_run:
        # The tag first: a pause whose tag was not written is not made.
        switch.lam.tag_resource(Resource=switch.arn, Tags={PAUSED_FROM_TAG: _shown(before)})
        switch.lam.put_function_concurrency(FunctionName=switch.function, ReservedConcurrentExecutions=0)
    s.emit(report, _render("pause", report))


@scraper.command()
@click.option("--function", "function_name", help="Scraper function (default: the environment's).")
@click.option(
    "--reserved", type=click.IntRange(min=1), help="Reservation to set (default: the one before the pause)."
)
@click.option("--dry-run", is_flag=True, help="Show what would change; change nothing.")
@click.pass_context
def resume(ctx: click.Context, function_name: str | None, reserved: int | None, dry_run: bool) -> None:
    """Restore the reservation the scraper had before ``pause`` (or ``--reserved``)."""
    s: Session = ctx.obj
    switch = _Switch(_function(s, function_name))
    before = switch.reserved()
    if before != 0:
        raise BadInput(f"{switch.function} is not paused (reserved concurrency {_shown(before)})")
    remembered = switch.paused_from()
    if reserved is None and remembered is None:
        raise BadInput(f"{switch.function} has no {PAUSED_FROM_TAG} tag: pass --reserved N")
    after = reserved if reserved is not None else (None if remembered == UNRESERVED else int(str(remembered)))
    report = {"function": switch.function, "before": before, "after": after, "dry_run": dry_run}
    if not dry_run:
        if after is None:
            switch.lam.delete_function_concurrency(FunctionName=switch.function)
        else:
            switch.lam.put_function_concurrency(
                FunctionName=switch.function, ReservedConcurrentExecutions=after
            )
        switch.lam.untag_resource(Resource=switch.arn, TagKeys=[PAUSED_FROM_TAG])
    s.emit(report, _render("resume", report))
