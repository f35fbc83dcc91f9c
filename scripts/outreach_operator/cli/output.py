"""What a command prints and how it ends: a table for people, exact JSON with ``--json``, exit codes.

Exit codes: 0 the command did what it was asked; 1 it failed (AWS refused, a step broke halfway, a
change against prod was not confirmed); 2 bad input (a malformed file or flag, a missing environment,
an unknown id, credentials or a region that are not the environment's, a change the rules refuse,
a change against prod with nobody to confirm it); 3 a stop only the recipient can lift (``contacts
unblock`` of an address that unsubscribed or complained: nothing was changed). Human output goes to
stdout; progress bars, notes and prompts go to stderr, so ``--json`` output on stdout stays parseable.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import boto3
import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from outreach_operator.cli.targets import Targets

EXIT_DONE = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_RECIPIENTS_OWN_STOP = 3


class Failed(click.ClickException):
    """The command could not do what it was asked (exit 1)."""

    exit_code = EXIT_FAILED


class BadInput(click.ClickException):
    """The input cannot be used as given (exit 2)."""

    exit_code = EXIT_BAD_INPUT


class RecipientsOwnStop(click.ClickException):
    """An operator asked to lift a stop the recipient set (an unsubscribe or a complaint): refused,
    nothing changed (exit 3). Only the recipient's own later request could lift it, and nothing here
    records one."""

    exit_code = EXIT_RECIPIENTS_OWN_STOP


class PartlyDone(Failed):
    """A state-changing command stopped halfway: says what was done and what was not (exit 1)."""

    def __init__(self, what: str, done: Sequence[str], not_done: Sequence[str], cause: BaseException) -> None:
        super().__init__(
            f"{what} stopped after {len(done)} of {len(done) + len(not_done)}: {cause}\n"
            f"done: {', '.join(done) or '(none)'}\n"
            f"not done: {', '.join(not_done) or '(none)'}"
        )
        self.done = list(done)
        self.not_done = list(not_done)


@dataclass
class Session:
    """One invocation: where it points, how it prints."""

    targets: Targets
    as_json: bool = False
    # --yes: changes against prod go ahead without asking (see confirm.confirm_change).
    yes: bool = False
    out: Console = field(default_factory=lambda: Console(soft_wrap=True))
    err: Console = field(default_factory=lambda: Console(stderr=True, soft_wrap=True))
    _caller: dict[str, str] | None = field(default=None, init=False, repr=False)

    def caller(self) -> dict[str, str]:
        """Whose credentials these are (``account``, ``arn``): sts GetCallerIdentity, once a session."""
        if self._caller is None:
            identity = boto3.client("sts").get_caller_identity()
            self._caller = {"account": str(identity["Account"]), "arn": str(identity["Arn"])}
        return self._caller

    def region(self) -> str | None:
        """The region every client of this session uses: --region, else what boto3 finds."""
        return self.targets.region or boto3.Session().region_name

    def emit(self, data: Any, render: Callable[[Console], None]) -> None:
        """Print ``data`` as JSON with --json, else let ``render`` draw it for a person."""
        if self.as_json:
            click.echo(json.dumps(data, indent=2, sort_keys=True, default=str))
        else:
            render(self.out)

    def note(self, text: str) -> None:
        if not self.as_json:
            self.err.print(text)


def table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Table:
    """A table of ``rows``; every cell is plain text (a value from a file or a page that looks like
    rich markup, ``[bold]`` or ``[/x]``, is shown as it is, never styled or refused)."""
    grid = Table(title=Text(title), title_justify="left")
    for column in columns:
        grid.add_column(column, overflow="fold")
    for row in rows:
        grid.add_row(*(Text("" if cell is None else str(cell)) for cell in row))
    return grid


def session(ctx: click.Context) -> Session:
    found = ctx.find_object(Session)
    if found is None:
        raise BadInput("internal: no session (run through the outreach command)")
    return found
