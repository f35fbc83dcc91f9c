"""What a command prints and how it ends: a table for people, exact JSON with ``--json``, exit codes.

Exit codes: 0 the command did what it was asked; 1 it failed (AWS refused, a step broke halfway);
2 bad input (a malformed file or flag, a missing environment, an unknown id). Human output goes to
stdout; progress bars and notes go to stderr, so ``--json`` output on stdout stays parseable.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from outreach_tools.cli.targets import Targets

EXIT_DONE = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


class Failed(click.ClickException):
    """The command could not do what it was asked (exit 1)."""

    exit_code = EXIT_FAILED


class BadInput(click.ClickException):
    """The input cannot be used as given (exit 2)."""

    exit_code = EXIT_BAD_INPUT


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
    out: Console = field(default_factory=lambda: Console(soft_wrap=True))
    err: Console = field(default_factory=lambda: Console(stderr=True, soft_wrap=True))

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
    grid = Table(title=title, title_justify="left")
    for column in columns:
        grid.add_column(column, overflow="fold")
    for row in rows:
        grid.add_row(*("" if cell is None else str(cell) for cell in row))
    return grid


def session(ctx: click.Context) -> Session:
    found = ctx.find_object(Session)
    if found is None:
        raise BadInput("internal: no session (run through the outreach command)")
    return found
