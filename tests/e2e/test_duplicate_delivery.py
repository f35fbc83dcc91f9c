"""Duplicate delivery: the same task message arriving four times fetches the site once, stores once."""

from __future__ import annotations

import json
import time

from embedded_aws.faults import Faults
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


def test_the_reconcilers_event_delivered_three_times_at_once_requeues_a_stuck_task_only_once(
    e2e: E2E, faults: Faults
) -> None:
    # GIVEN a job of 1 slow site whose worker is killed after claiming and whose message is lost,
    # and every reconciler event from now on delivered 3 times, the copies running together
    bound = e2e.reconciler_bound()
    started_wall, started_virtual = time.monotonic(), e2e.stack.clock.now()
    (site,) = e2e.pool.take(1, kinds=("slow",))
    job_id = "e2e-duplicate-reconciler"
    e2e.stack.farm.hold([site.number])  # no page answers until released: the worker stays mid-fetch
    (task_id,) = e2e.create_job(job_id, [site]).values()
    actions_before = e2e.reconciler_actions()
    duplicated = faults.duplicate_async(e2e.reconciler, deliveries=3, events=1_000)

    def claimed_and_fetching() -> bool:
        row = e2e.task_rows(job_id).get(task_id)
        fetching = e2e.stack.farm.site_hits(site.number) >= 1
        return bool(
            row
            and row["status"] == "Running"
            and fetching
            and e2e.stack.runtime.in_flight_workers(e2e.scraper)
        )

    try:
        e2e.wait_until(claimed_and_fetching, timeout=60, what="the task claimed and fetching")
        assert e2e.stack.runtime.kill_in_flight(e2e.scraper) >= 1
    finally:
        e2e.stack.farm.release()
    e2e.stack.client("sqs").purge_queue(QueueUrl=e2e.scrape_queue_url)

    # WHEN the reconciler's runs, each delivered 3 times, find the stuck task
    counts = e2e.wait_terminal(job_id, 1, timeout=180, idle_skip=bound.period, settle=0.5)

    # THEN the task was re-queued once, sent once more, scraped once more, and stored once
    assert counts.get("Finished") == 1
    row = e2e.task_rows(job_id)[task_id]
    assert int(row["attempts"]) == 2
    actions = e2e.reconciler_actions()
    assert actions.get("requeued", 0) - actions_before.get("requeued", 0) == 1
    assert faults.sends_of(e2e.scrape_queue_name, task_id) == 2
    puts = faults.puts_of(e2e.results_bucket, f"results/{job_id}/")
    assert list(puts.values()) == [1]
    # AND the run that re-queued it really ran 3 times: its 2 copies changed nothing
    runs = [
        e
        for e in e2e.stack.journal.entries("async.succeeded")
        if e["function"].rsplit(":", 1)[-1] == e2e.reconciler and isinstance(e["payload"], dict)
    ]
    requeuing = {e["request_id"] for e in runs if e["payload"]["actions"].get("requeued", 0) >= 1}
    assert len(requeuing) == 1, requeuing
    copies = [e["payload"]["actions"] for e in runs if e["request_id"] in requeuing]
    assert len(copies) == 3, copies
    assert sorted(c.get("requeued", 0) for c in copies) == [0, 0, 1]
    assert duplicated.fired >= 1
    e2e.record(
        "reconciler event delivered 3 times at once",
        tasks=1,
        deliveries_per_event=3,
        duplicated_events=duplicated.fired,
        requeued=1,
        result_puts=sum(puts.values()),
        wall_seconds=round(time.monotonic() - started_wall, 1),
        virtual_seconds=virtual_elapsed(e2e, started_virtual),
    )
