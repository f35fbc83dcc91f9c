"""The makespan benchmark's measurement at a tiny size on the end-to-end stack, so it runs in every test run.

``make bench`` brings up its own embedded AWS for the makespan (``makespan.run_jobs``); here the same
``measure_job`` (warm-up job, recorded invocations, the job, its phases) runs on the package's stack.
What only ``make bench`` runs: the stack of its own with every page slow, and the second job under
the seed's schedule.
"""

from __future__ import annotations

import pytest

from outreach_dev.bench import makespan
from tests.e2e.conftest import E2E

SITES = 12
WARM_SITES = 4


def test_the_makespan_measurement_of_a_small_job_with_one_transient_site_is_taken(e2e: E2E) -> None:
    # GIVEN a job of fast sites, the first of which fails every request of its first delivery
    sites = e2e.pool.take(SITES, kinds=("normal",))
    warm = e2e.pool.take(WARM_SITES, kinds=("normal",))
    farm, transient = e2e.stack.farm, sites[0].number
    # The outage's clock is the site's request count: down for one delivery's attempts, then up.
    farm.take_down(transient, until=makespan.FAILED_REQUESTS + 0.5, clock=lambda: farm.site_hits(transient))

    # WHEN the benchmark measures it
    job = makespan.measure_job(
        e2e.stack,
        "e2e-makespan",
        [e2e.url(site) for site in sites],
        warm_urls=[e2e.url(site) for site in warm],
        timeout=120,
        idle_skip=makespan.OUR_IDLE_SKIP,
    )

    # THEN every task and invocation is counted, the transient one retried once
    assert job.tasks == SITES
    assert job.retried == 1
    assert job.invocations == SITES + 1
    assert 1 <= job.concurrency <= e2e.stack.runtime.max_workers_per_function
    # ... and the figure is a measured one, its phases accounting for all the time over the limit
    assert job.mean_latency > 0
    assert 0 < job.efficiency <= 1
    assert job.phases.over_limit == pytest.approx(job.makespan - job.limit)
    # AND its timeline marks the one retry under the job its message's group names
    assert job.timeline is not None
    assert {name: len(starts) for name, starts in job.timeline.retries.items()} == {"e2e-makespan": 1}
    e2e.record(
        "makespan smoke",
        tasks=job.tasks,
        makespan_seconds=round(job.makespan, 1),
        limit_seconds=round(job.limit, 1),
        efficiency=round(job.efficiency, 3),
    )
