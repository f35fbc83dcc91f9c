"""Worker crash after claim: the process dies mid-task; redelivery heals it and it finishes once."""

from __future__ import annotations

import time

from embedded_aws.faults import Faults
from tests.e2e.conftest import E2E, virtual_elapsed
from tests.e2e.stacks import SECOND_STACK

pytestmark = SECOND_STACK


def test_a_scraper_killed_mid_task_is_healed_by_redelivery_and_finishes_once(
    e2e: E2E, faults: Faults
) -> None:
    # GIVEN a job of 2 slow sites (every page answers after 1.5 s), held: no page answers until released
    started_wall, started_virtual = time.monotonic(), e2e.stack.clock.now()
    sites = e2e.pool.take(2, kinds=("slow",))
    job_id = "e2e-crash"
    e2e.stack.farm.hold([s.number for s in sites])
    task_ids = e2e.create_job(job_id, sites)
    crashes_before = e2e.stack.runtime.stats_of(e2e.scraper).crashes

    # WHEN both scraper workers are killed after claiming their task, while fetching the site
    def claimed_and_fetching() -> bool:
        rows = e2e.task_rows(job_id)
        running = all(row["status"] == "Running" for row in rows.values()) and len(rows) == len(sites)
        fetching = all(e2e.stack.farm.site_hits(s.number) >= 1 for s in sites)
        return running and fetching and len(e2e.stack.runtime.in_flight_workers(e2e.scraper)) == len(sites)

    def state() -> object:
        return (
            [row["status"] for row in e2e.task_rows(job_id).values()],
            [e2e.stack.farm.site_hits(s.number) for s in sites],
            e2e.stack.runtime.in_flight_workers(e2e.scraper),
        )

    e2e.wait_until(claimed_and_fetching, timeout=60, what="both tasks claimed and fetching", describe=state)
    killed_at = e2e.stack.clock.now()
    try:
        assert e2e.stack.runtime.kill_in_flight(e2e.scraper) == len(sites)
    finally:
        e2e.stack.farm.release()
    visibility = int(
        e2e.stack.client("sqs").get_queue_attributes(
            QueueUrl=e2e.scrape_queue_url, AttributeNames=["VisibilityTimeout"]
        )["Attributes"]["VisibilityTimeout"]
    )
    counts = e2e.wait_terminal(job_id, len(sites), timeout=120, idle_skip=900, settle=0.5)

    # THEN both tasks finished, each on its second attempt, after the visibility timeout
    assert counts.get("Finished") == len(sites)
    assert counts.get("Running", 0) == 0
    rows = e2e.task_rows(job_id)
    assert {row["status"] for row in rows.values()} == {"Finished"}
    assert {int(row["attempts"]) for row in rows.values()} == {2}
    assert e2e.stack.clock.now() - killed_at >= visibility
    assert e2e.stack.runtime.stats_of(e2e.scraper).crashes - crashes_before == len(sites)
    # AND healing was the same message redelivered, not a second dispatch
    assert all(faults.sends_of(e2e.scrape_queue_name, tid) == 1 for tid in task_ids.values())
    # AND exactly one result object per task was written (counted at S3)
    puts = faults.puts_of(e2e.results_bucket, f"results/{job_id}/")
    assert len(puts) == len(sites)
    assert set(puts.values()) == {1}
    # AND each home page was fetched by the killed attempt and once more by the healing one
    homes = [e2e.stack.farm.hits[f"/site-{s.number}/"] for s in sites]
    assert homes == [2] * len(sites)
    e2e.record(
        "worker crash after claim",
        tasks=len(sites),
        killed=len(sites),
        result_puts=sum(puts.values()),
        duplicates=sum(puts.values()) - len(sites),
        lost=len(sites) - counts.get("Finished", 0),
        wall_seconds=round(time.monotonic() - started_wall, 1),
        virtual_seconds=virtual_elapsed(e2e, started_virtual),
    )
