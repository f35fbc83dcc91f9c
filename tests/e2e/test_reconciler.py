"""The scrape reconciler, fired by its applied schedule, heals what SQS redelivery never reaches.

- A worker killed after claiming whose message is then lost leaves a Running task with no message
  anywhere; once it stayed unchanged past the applied threshold the reconciler re-queues it, the
  stream dispatches it again, and it finishes once, within the documented bound B.
- A site that is down for 30 minutes fails its first attempts and is scraped on a later one: the
  retry schedule spreads one message's receives over more than an hour.
"""

from __future__ import annotations

import time
from typing import Any

from embedded_aws.faults import Faults
from tests.e2e.conftest import E2E, epoch, virtual_elapsed
from tests.e2e.stacks import SECOND_STACK

pytestmark = SECOND_STACK


def test_a_worker_crash_whose_message_is_lost_is_requeued_by_the_reconciler_and_finishes_once(
    e2e: E2E, faults: Faults
) -> None:
    # GIVEN a job of 2 slow sites, held (no page answers until released), and the applied reconciler
    bound = e2e.reconciler_bound()
    started_wall, started_virtual = time.monotonic(), e2e.stack.clock.now()
    sites = e2e.pool.take(2, kinds=("slow",))
    job_id = "e2e-crash-lost"
    e2e.stack.farm.hold([s.number for s in sites])
    task_ids = e2e.create_job(job_id, sites)
    actions_before = e2e.reconciler_actions()

    # WHEN both workers are killed after claiming, and their messages are then lost
    def claimed_and_fetching() -> bool:
        rows = e2e.task_rows(job_id)
        running = len(rows) == len(sites) and all(row["status"] == "Running" for row in rows.values())
        fetching = all(e2e.stack.farm.site_hits(s.number) >= 1 for s in sites)
        return running and fetching and len(e2e.stack.runtime.in_flight_workers(e2e.scraper)) == len(sites)

    def state() -> object:
        return (
            [row["status"] for row in e2e.task_rows(job_id).values()],
            [e2e.stack.farm.site_hits(s.number) for s in sites],
            e2e.stack.runtime.in_flight_workers(e2e.scraper),
        )

    # the held pages keep both scrapers mid-fetch until they are killed, however slow the machine is
    try:
        e2e.wait_until(
            claimed_and_fetching, timeout=60, what="both tasks claimed and fetching", describe=state
        )
        assert e2e.stack.runtime.kill_in_flight(e2e.scraper) == len(sites)
    finally:
        e2e.stack.farm.release()
    e2e.stack.client("sqs").purge_queue(QueueUrl=e2e.scrape_queue_url)
    assert e2e.stack.queue_messages(e2e.scrape_queue_url) == []
    claimed = {tid: epoch(row["updated_at"]) for tid, row in e2e.task_rows(job_id).items()}

    # THEN the reconciler re-queues both once nothing can come back, and each finishes once
    counts = e2e.wait_terminal(job_id, len(sites), timeout=180, idle_skip=bound.period, settle=0.5)
    rows = e2e.task_rows(job_id)
    assert counts.get("Finished") == len(sites)
    assert {int(row["attempts"]) for row in rows.values()} == {2}
    waited = [epoch(rows[tid]["updated_at"]) - claimed[tid] for tid in task_ids.values()]
    assert all(bound.running_after <= w <= bound.b + bound.period for w in waited), (waited, bound)
    assert e2e.reconciler_actions().get("requeued", 0) - actions_before.get("requeued", 0) == len(sites)
    # AND the second message came from the stream (a re-queue is Running -> Pending), one per task
    assert [faults.sends_of(e2e.scrape_queue_name, tid) for tid in task_ids.values()] == [2, 2]
    puts = faults.puts_of(e2e.results_bucket, f"results/{job_id}/")
    assert len(puts) == len(sites) and set(puts.values()) == {1}
    e2e.record(
        "worker crash, message lost",
        tasks=len(sites),
        requeued_by_reconciler=len(sites),
        stuck_seconds=[round(w) for w in waited],
        bound_b_seconds=bound.b,
        result_puts=sum(puts.values()),
        lost=len(sites) - counts.get("Finished", 0),
        wall_seconds=round(time.monotonic() - started_wall, 1),
        virtual_seconds=virtual_elapsed(e2e, started_virtual),
    )


def test_a_site_down_for_30_minutes_is_scraped_on_a_later_attempt_not_given_up(e2e: E2E) -> None:
    # GIVEN a site that answers 503 to everything for the next 30 virtual minutes
    started_wall, started_virtual = time.monotonic(), e2e.stack.clock.now()
    (site,) = e2e.pool.take(1, kinds=("normal",))
    e2e.stack.farm.take_down(site.number, until=started_virtual + 1800, clock=e2e.stack.clock.now)
    job_id = "e2e-down-30-min"
    (task_id,) = e2e.create_job(job_id, [site]).values()

    # WHEN the job runs
    counts = e2e.wait_terminal(job_id, 1, timeout=180, idle_skip=300)

    # THEN the task finished on a later attempt of the same message, after the outage ended
    row = e2e.task_rows(job_id)[task_id]
    assert counts.get("Finished") == 1, row
    assert int(row["attempts"]) >= 2
    assert epoch(row["updated_at"]) >= started_virtual + 1800
    dead = e2e.stack.queue_messages(str(e2e.stack.pipeline["scrape_dlq_url"]))
    assert all(task_id not in m["Body"] for m in dead)
    e2e.record(
        "site down for 30 minutes",
        tasks=1,
        attempts=int(row["attempts"]),
        finished_after_seconds=round(epoch(row["updated_at"]) - started_virtual),
        wall_seconds=round(time.monotonic() - started_wall, 1),
        virtual_seconds=virtual_elapsed(e2e, started_virtual),
    )


def test_the_reconcilers_schedule_fires_at_once_after_apply_then_every_period(e2e: E2E) -> None:
    # GIVEN the applied reconciler schedule: Scheduler rate(5 minutes) without StartDate
    arn = str(e2e.stack.pipeline["scrape_reconciler_schedule_arn"])
    period = e2e.reconciler_bound().period
    journal = e2e.stack.journal

    def deliveries() -> list[dict[str, Any]]:
        return [e for e in journal.entries("schedule.delivered") if e["source"] == arn]

    def runs() -> int:
        return e2e.reconciler_actions()["runs"]

    # WHEN the reconciler has run once, and then the virtual clock is moved on by two periods
    e2e.wait_until(lambda: bool(deliveries()) and runs() >= 1, timeout=60, what="the first reconciler run")
    for count in (2, 3):
        e2e.jump(period)
        e2e.wait_until(
            lambda: len(deliveries()) >= count and runs() >= count,  # noqa: B023 - evaluated in the loop
            timeout=60,
            what=f"reconciler run {count}",
        )
    # THEN the first run was handed to Lambda in the tick that first read the applied schedule (at
    # once: schedule-types.html, rate-based schedules), and the next ones one period apart each
    first_read = next(e for e in journal.entries("schedule.read") if e["source"] == arn)
    first, *later = deliveries()
    assert first["scheduled_time"] == first_read["at"]
    assert first["at"] == first_read["at"]
    assert [d["scheduled_time"] - first["scheduled_time"] for d in later[:2]] == [period, 2 * period]
    assert all(d["at"] >= d["scheduled_time"] for d in later)
    e2e.record("reconciler schedule", period_seconds=period, runs=runs(), deliveries=len(deliveries()))
