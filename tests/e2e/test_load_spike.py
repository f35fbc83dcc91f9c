"""Load spike: a burst of tasks never runs more scraper invocations than the mapping allows.

The short forms run in ``make test``; the full form (3,575 tasks, the seeds' largest job) is marked
``slow`` and runs in ``make chaos``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from embedded_aws.applied_config import SqsMappingConfig
from embedded_aws.faults import Faults
from embedded_aws.pipeline import TERMINAL
from embedded_aws.webfarm import DEFAULT_MIX
from tests.e2e.conftest import E2E, FAST_KINDS, virtual_elapsed

SHORT_SPIKE = 150
FULL_SPIKE = 3575
LOWERED_MAXIMUM = 4


def _limits(e2e: E2E) -> tuple[int, int]:
    """(MaximumConcurrency of the scrape mapping, reserved concurrency of the scraper), as applied."""
    mapping = e2e.scraper_mapping()
    maximum = int(mapping["ScalingConfig"]["MaximumConcurrency"])
    reserved = int(
        e2e.stack.client("lambda").get_function_concurrency(FunctionName=e2e.scraper)[
            "ReservedConcurrentExecutions"
        ]
    )
    return maximum, reserved


def _spike(e2e: E2E, faults: Faults, job_id: str, kinds: tuple[str, ...], count: int, timeout: float) -> None:
    started_wall, started_virtual = time.monotonic(), e2e.stack.clock.now()
    maximum, reserved = _limits(e2e)
    sites = e2e.pool.take(count, kinds=kinds)
    runtime = e2e.stack.runtime
    runtime.reset_peak(e2e.scraper)
    poller = e2e.scraper_poller()
    poller.stats.reset_peak()

    # WHEN all tasks are created at once
    task_ids = e2e.create_job(job_id, sites)
    counts = e2e.wait_terminal(job_id, len(sites), timeout=timeout, idle_skip=600, settle=2.0)

    # THEN in-flight invocations never exceeded the applied maximum concurrency nor the reserved one
    in_flight = runtime.stats[e2e.scraper].max_in_flight
    assert 1 <= poller.stats.max_in_flight <= maximum
    assert 1 <= in_flight <= min(maximum, reserved)
    # AND every task is terminal, with the outcome its site calls for, and none was lost
    rows = e2e.task_rows(job_id)
    assert len(rows) == len(sites)
    assert sum(counts.get(s, 0) for s in TERMINAL) == len(sites)
    wrong = {
        tid: rows[tid]["status"]
        for site, tid in task_ids.items()
        if rows[tid]["status"] != site.expected_status
    }
    assert wrong == {}
    # AND each finished task has one result, written once
    puts = faults.puts_of(e2e.results_bucket, f"results/{job_id}/")
    assert len(puts) == counts.get("Finished", 0)
    e2e.record(
        f"load spike {len(sites)}",
        tasks=len(sites),
        by_status={s: counts.get(s, 0) for s in TERMINAL},
        lost=len(sites) - sum(counts.get(s, 0) for s in TERMINAL),
        duplicates=sum(puts.values()) - len(puts),
        max_in_flight=in_flight,
        maximum_concurrency=maximum,
        reserved_concurrency=reserved,
        local_worker_cap=runtime.max_workers_per_function,
        wall_seconds=round(time.monotonic() - started_wall, 1),
        virtual_seconds=virtual_elapsed(e2e, started_virtual),
    )


def test_a_spike_of_tasks_stays_within_the_applied_maximum_concurrency_and_loses_none(
    e2e: E2E, faults: Faults
) -> None:
    # GIVEN the applied scrape mapping and a spike of short-running tasks
    _spike(e2e, faults, "e2e-spike-short", FAST_KINDS, SHORT_SPIKE, timeout=240)


@pytest.fixture
def lowered_maximum(e2e: E2E) -> Iterator[int]:
    """The scrape mapping's MaximumConcurrency lowered through the Lambda API, restored afterwards."""
    mapping = e2e.scraper_mapping()
    lam = e2e.stack.client("lambda")
    lam.update_event_source_mapping(
        UUID=mapping["UUID"], ScalingConfig={"MaximumConcurrency": LOWERED_MAXIMUM}
    )
    assert e2e.wait_for_scraper_poller().maximum_concurrency == LOWERED_MAXIMUM
    yield LOWERED_MAXIMUM
    lam.update_event_source_mapping(UUID=mapping["UUID"], ScalingConfig=mapping["ScalingConfig"])
    assert e2e.wait_for_scraper_poller() == SqsMappingConfig.from_mapping(mapping)


def test_a_lowered_maximum_concurrency_is_reached_and_never_exceeded(
    e2e: E2E, faults: Faults, lowered_maximum: int
) -> None:
    # GIVEN the scrape mapping's maximum concurrency changed to 4 (below the local worker cap)
    # AND a spike of 40 tasks
    _spike(e2e, faults, "e2e-spike-lowered", ("normal",), 40, timeout=180)
    # THEN the limit was the binding constraint: reached, never passed
    assert e2e.stack.runtime.stats[e2e.scraper].max_in_flight == lowered_maximum


@pytest.mark.slow
@pytest.mark.timeout(5400)
def test_a_spike_of_3575_tasks_stays_within_the_applied_maximum_concurrency_and_loses_none(
    e2e: E2E, faults: Faults
) -> None:
    # GIVEN the applied scrape mapping and the seeds' largest job, over every kind of web farm site
    kinds = tuple({"normal", *(kind for kind, _ in DEFAULT_MIX)})
    _spike(e2e, faults, "e2e-spike-full", kinds, FULL_SPIKE, timeout=5000)
