"""A progress bar on stderr for a command's long reads and writes (none with ``--json``)."""

from __future__ import annotations

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from outreach_operator.cli.output import Session


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
