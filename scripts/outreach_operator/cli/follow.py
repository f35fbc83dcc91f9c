"""Following a job: its counters read again and again, with progress, rate and time left.

``follow_job`` is the loop both ``outreach job status --watch`` and ``make local`` use: it reads the
job's exact counters (``task_store.job_counts``), hands each reading to a callback (the display), and
returns when every task is terminal, or when ``timeout`` seconds have passed. The rate is measured over
the readings of this run, so the estimate of the time left follows what the pipeline does now.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from outreach import task_store
from outreach.task_model import TERMINAL, Status
from outreach_operator.errors import FollowTimeoutError


@dataclass(frozen=True)
class JobProgress:
    job_id: str
    counts: Mapping[str, int]
    elapsed_seconds: float
    rate_per_second: float | None
    """Tasks reaching a terminal status per second since following began (None: not measurable yet)."""

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def terminal(self) -> int:
        return sum(self.counts.get(status.value, 0) for status in TERMINAL)

    @property
    def open(self) -> int:
        return self.total - self.terminal

    @property
    def is_done(self) -> bool:
        return self.total > 0 and self.open == 0

    @property
    def eta_seconds(self) -> float | None:
        if self.is_done:
            return 0.0
        if not self.rate_per_second:
            return None
        return self.open / self.rate_per_second

    def as_dict(self) -> dict[str, object]:
        return {
            "job_id": self.job_id,
            "counts": dict(self.counts),
            "total": self.total,
            "terminal": self.terminal,
            "open": self.open,
            "done": self.is_done,
            "rate_per_second": None if self.rate_per_second is None else round(self.rate_per_second, 3),
            "eta_seconds": None if self.eta_seconds is None else round(self.eta_seconds, 1),
        }


CountsReader = Callable[[str], Mapping[str, int]]


def follow_job(
    job_id: str,
    on_update: Callable[[JobProgress], None],
    *,
    interval: float = 2.0,
    timeout: float | None = None,
    read_counts: CountsReader | None = None,
    sleep: Callable[[float], None] = time.sleep,
    monotonic: Callable[[], float] = time.monotonic,
) -> JobProgress:
    """Report the job's progress every ``interval`` seconds until every task is terminal.

    Raises FollowTimeoutError (carrying the last reading) when ``timeout`` passes first.
    """
    read = read_counts or task_store.job_counts
    started = monotonic()
    first_terminal: int | None = None
    while True:
        counts = dict(read(job_id))
        now = monotonic()
        elapsed = now - started
        terminal = sum(counts.get(status.value, 0) for status in TERMINAL)
        if first_terminal is None:
            first_terminal = terminal
        rate = (terminal - first_terminal) / elapsed if elapsed > 0 and terminal > first_terminal else None
        progress = JobProgress(job_id=job_id, counts=counts, elapsed_seconds=elapsed, rate_per_second=rate)
        on_update(progress)
        # The counters are read with a Query, which sees a transaction half applied (read-committed,
        # https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-isolation):
        # a task moving between two counter items can be in neither. A done reading counts only when a
        # second one says the same.
        if progress.is_done and dict(read(job_id)) == counts:
            return progress
        if timeout is not None and elapsed >= timeout:
            raise FollowTimeoutError(progress, elapsed)
        sleep(interval)


def snapshot(job_id: str, read_counts: CountsReader = task_store.job_counts) -> JobProgress:
    """One reading, without a rate (one reading cannot measure one)."""
    return JobProgress(
        job_id=job_id, counts=dict(read_counts(job_id)), elapsed_seconds=0.0, rate_per_second=None
    )


def status_order() -> list[str]:
    return [status.value for status in Status]
