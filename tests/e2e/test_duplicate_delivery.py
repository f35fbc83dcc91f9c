"""Duplicate delivery: the same task message arriving four times fetches the site once, stores once."""

from __future__ import annotations

import json
import time

from outreach_tools.localaws.faults import Faults
from tests.e2e.conftest import E2E, virtual_elapsed


def test_a_task_delivered_four_times_fetches_its_site_once_and_stores_one_result(
    e2e: E2E, faults: Faults
) -> None:
    # GIVEN a job of 3 sites, and the first task's {"task_id"} message sent 3 extra times
    started_wall, started_virtual = time.monotonic(), e2e.stack.clock.now()
    sites = e2e.pool.take(3, kinds=("normal",))
    job_id = "e2e-duplicates"
    task_ids = e2e.create_job(job_id, sites)
    target = sites[0]
    target_id = task_ids[target]
    sqs = e2e.stack.client("sqs")
    for _ in range(3):
        sqs.send_message(QueueUrl=e2e.scrape_queue_url, MessageBody=json.dumps({"task_id": target_id}))

    # WHEN the pipeline runs the job to its end
    counts = e2e.wait_terminal(job_id, len(sites))

    # THEN every task finished once
    assert counts.get("Finished") == len(sites)
    rows = e2e.task_rows(job_id)
    assert {row["status"] for row in rows.values()} == {"Finished"}
    assert int(rows[target_id]["attempts"]) == 1
    # AND the message reached the queue 4 times (1 dispatched + 3 duplicates), the others once
    assert faults.sends_of(e2e.scrape_queue_name, target_id) == 4
    assert all(faults.sends_of(e2e.scrape_queue_name, task_ids[s]) == 1 for s in sites[1:])
    # AND the site was crawled once: every page of it fetched exactly once, counted by the web farm
    prefix = f"/site-{target.number}/"
    pages = {path: n for path, n in e2e.stack.farm.hits.items() if path.startswith(prefix)}
    assert pages, "the site was never fetched"
    assert set(pages.values()) == {1}, pages
    # AND one result object was written per task, counted at S3
    puts = faults.puts_of(e2e.results_bucket, f"results/{job_id}/")
    assert len(puts) == len(sites)
    assert set(puts.values()) == {1}
    # AND the duplicates were acknowledged, not left to come back
    e2e.wait_until(lambda: _queued(e2e) == 0, timeout=30, what="scrape queue drained")
    e2e.record(
        "duplicate delivery x3",
        tasks=len(sites),
        deliveries_of_target=4,
        fetches_per_page=max(pages.values()),
        result_puts=sum(puts.values()),
        lost=len(sites) - counts.get("Finished", 0),
        wall_seconds=round(time.monotonic() - started_wall, 1),
        virtual_seconds=virtual_elapsed(e2e, started_virtual),
    )


def _queued(e2e: E2E) -> int:
    attributes = e2e.stack.client("sqs").get_queue_attributes(
        QueueUrl=e2e.scrape_queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]) + int(
        attributes["ApproximateNumberOfMessagesNotVisible"]
    )
