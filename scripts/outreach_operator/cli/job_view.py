"""How a job's state looks to a person: counts per status, a progress bar, rate, time left, failures."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from outreach_operator.cli.follow import JobProgress, status_order


@dataclass(frozen=True)
class FailureGroup:
    reason: str
    count: int
    example_url: str | None
    example_task: str | None
    """The first task that failed for the reason and is still Failed (``None``: every example a shard
    kept was requeued since)."""

    def as_dict(self) -> dict[str, object]:
        return {
            "reason": self.reason,
            "count": self.count,
            "example_url": self.example_url,
            "example_task": self.example_task,
        }


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def progress_renderable(progress: JobProgress) -> RenderableType:
    counts = Table.grid(padding=(0, 2))
    for status in status_order():
        counts.add_column(status)
    counts.add_row(*(f"{status} {progress.counts.get(status, 0):,}" for status in status_order()))
    bar = ProgressBar(total=max(progress.total, 1), completed=progress.terminal, width=50)
    rate = "unknown" if progress.rate_per_second is None else f"{progress.rate_per_second:.2f} tasks/s"
    line = Text(
        f"{progress.terminal:,}/{progress.total:,} terminal  rate {rate}  "
        f"time left {_duration(progress.eta_seconds)}"
    )
    return Group(Text(f"job {progress.job_id}", style="bold"), counts, bar, line)


def failures_renderable(groups: Sequence[FailureGroup]) -> RenderableType:
    grid = Table(title="failures by reason", title_justify="left")
    for column in ("reason", "tasks", "example url"):
        grid.add_column(column, overflow="fold")
    for group in groups:
        grid.add_row(
            group.reason, f"{group.count:,}", group.example_url or group.example_task or "(requeued)"
        )
    return grid


@contextmanager
def live_progress(console: Console) -> Iterator[Live]:
    """A display redrawn in place for each reading of ``follow_job`` (``make local`` uses it too)."""
    with Live(console=console, auto_refresh=False, transient=False) as live:
        yield live


def show_progress(live: Live, progress: JobProgress) -> None:
    live.update(progress_renderable(progress), refresh=True)
