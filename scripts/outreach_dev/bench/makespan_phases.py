"""Where a job's makespan goes beyond the limit N*t/C: before the first scrape, idle slots, retry tail.

The job runs from ``start`` (first task created) to ``end`` (last task terminal) on ``C`` scraper
slots. Three phases split that time: before the first scraper invocation (every slot idle: job
creation and dispatch), the work phase up to the end of the last first delivery, and the tail after
it (only redeliveries left: the job waits for retries). Each invocation is clipped to the job.

With B the clipped busy slot-time, ``C * makespan = B + idle``, and ``B = N*t + extra`` where the
extra is the work of the redeliveries beyond one invocation per task. So

    makespan - N*t/C = before + work_idle/C + tail_idle/C + extra/C

exactly; :class:`Phases` holds each term in seconds of makespan, beside the phases' own lengths.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    """One scraper invocation on the virtual clock, and the receive count of the message it handled."""

    begin: float
    end: float
    receive: int


@dataclass(frozen=True)
class Phases:
    """Seconds of makespan over the limit by cause, and the phases' lengths (all virtual seconds)."""

    before_first_scrape: float
    idle_while_working: float
    idle_in_retry_tail: float
    redelivery_work: float
    work_phase: float
    tail_phase: float

    @property
    def over_limit(self) -> float:
        return (
            self.before_first_scrape
            + self.idle_while_working
            + self.idle_in_retry_tail
            + self.redelivery_work
        )


def _busy(spans: Sequence[Span], low: float, high: float) -> float:
    return sum(max(0.0, min(high, s.end) - max(low, s.begin)) for s in spans)


def split(
    spans: Sequence[Span], *, start: float, end: float, tasks: int, mean_latency: float, concurrency: int
) -> Phases:
    """The makespan ``end - start`` over the limit ``tasks * mean_latency / concurrency``, by phase."""
    if not spans or end <= start or concurrency < 1:
        raise ValueError("phases need invocations inside a job of positive length on at least one slot")
    first = min(max(start, min(s.begin for s in spans)), end)
    first_deliveries = [s for s in spans if s.receive <= 1] or list(spans)
    work_end = min(max(first, max(s.end for s in first_deliveries)), end)
    work_busy = _busy(spans, first, work_end)
    tail_busy = _busy(spans, work_end, end)
    return Phases(
        before_first_scrape=first - start,
        idle_while_working=(concurrency * (work_end - first) - work_busy) / concurrency,
        idle_in_retry_tail=(concurrency * (end - work_end) - tail_busy) / concurrency,
        redelivery_work=(work_busy + tail_busy - tasks * mean_latency) / concurrency,
        work_phase=work_end - first,
        tail_phase=end - work_end,
    )
