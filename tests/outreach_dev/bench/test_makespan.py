"""Rules of the makespan figure: the limit is N*t/C, the figure the limit over the measured makespan."""

from __future__ import annotations

import pytest

from outreach_dev.bench.makespan import Makespan
from outreach_dev.bench.makespan_phases import Phases

# The phases do not enter the figure; these jobs only need some.
NO_PHASES = Phases(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


def test_the_limit_is_tasks_times_mean_latency_over_concurrency() -> None:
    job = Makespan(
        tasks=1_000,
        makespan=4_000.0,
        mean_latency=48.0,
        concurrency=16,
        invocations=1_050,
        retried=50,
        phases=NO_PHASES,
    )
    assert job.limit == pytest.approx(3_000.0)
    assert job.efficiency == pytest.approx(0.75)


def test_a_job_that_waits_out_a_long_retry_scores_far_below_the_same_work_without_the_wait() -> None:
    quick = Makespan(
        tasks=40,
        makespan=300.0,
        mean_latency=40.0,
        concurrency=16,
        invocations=42,
        retried=2,
        phases=NO_PHASES,
    )
    slow = Makespan(
        tasks=40,
        makespan=5_600.0,
        mean_latency=40.0,
        concurrency=16,
        invocations=42,
        retried=2,
        phases=NO_PHASES,
    )
    assert quick.limit == slow.limit
    assert slow.efficiency < quick.efficiency / 10
