"""DynamoDB throttling in the scraper: retried (by the SDK, then by SQS redelivery), never failed."""

from __future__ import annotations

import time

from embedded_aws.faults import Faults
from tests.e2e.conftest import E2E, virtual_elapsed

# The handlers' clients retry 5 times after the first attempt (botocore standard mode, max_attempts=5):
# 3 throttles are absorbed by the SDK, 6 in a row surface to the handler, whose message then comes back
# from SQS.
ABSORBED = 3
SURFACED = 6


def test_throttled_task_transactions_are_retried_and_every_task_finishes(e2e: E2E, faults: Faults) -> None:
    # GIVEN a job of 5 sites whose task transactions are throttled 3 times each
    # AND a 6th site whose transactions are throttled 6 times in a row (more than the SDK retries)
    started_wall, started_virtual = time.monotonic(), e2e.stack.clock.now()
    sites = e2e.pool.take(6, kinds=("normal",))
    job_id = "e2e-throttling"
    absorbed = {e2e.task_id(job_id, s) for s in sites[:5]}
    surfaced = e2e.task_id(job_id, sites[5])
    light = faults.throttle(absorbed, times=ABSORBED)
    heavy = faults.throttle({surfaced}, times=SURFACED)
    sqs_before = e2e.sqs_poller_stats()

    # WHEN the pipeline runs the job
    e2e.create_job(job_id, sites)
    counts = e2e.wait_terminal(job_id, len(sites), timeout=180, idle_skip=900, settle=1.0)

    # THEN the throttling really happened, as often as configured
    assert light.fired == ABSORBED * len(absorbed)
    assert heavy.fired == SURFACED
    # AND every task finished, none failed
    assert counts.get("Finished") == len(sites)
    assert counts.get("Failed", 0) == 0
    rows = e2e.task_rows(job_id)
    assert {row["status"] for row in rows.values()} == {"Finished"}
    # AND the task throttled past the SDK was retried by SQS (its batch item reported), not re-dispatched
    assert e2e.sqs_poller_stats()["reported_failures"] - sqs_before["reported_failures"] >= 1
    assert faults.sends_of(e2e.scrape_queue_name, surfaced) == 1
    assert int(rows[surfaced]["attempts"]) == 1  # the throttled claim never took effect
    # AND one result per task
    puts = faults.puts_of(e2e.results_bucket, f"results/{job_id}/")
    assert len(puts) == len(sites)
    assert set(puts.values()) == {1}
    e2e.record(
        "DynamoDB throttling in the scraper",
        tasks=len(sites),
        throttled_calls=light.fired + heavy.fired,
        failed=counts.get("Failed", 0),
        lost=len(sites) - counts.get("Finished", 0),
        duplicates=sum(puts.values()) - len(sites),
        wall_seconds=round(time.monotonic() - started_wall, 1),
        virtual_seconds=virtual_elapsed(e2e, started_virtual),
    )
