"""The scraper's kill switch (`outreach scraper pause|resume`): reserved concurrency 0 stops every
invocation, the messages wait in the queue, and nothing is lost when it is restored.

Reserved concurrency 0 throttles every invocation of a function
(https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html); the SQS mapping's
throttled batches return to the queue after its visibility timeout, each receive counted
(https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html). The emulator reads the reservation
again while it runs, so PutFunctionConcurrency during a job takes effect as on AWS.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from embedded_aws.faults import Faults
from outreach_operator.cli.app import main
from outreach_operator.cli.scraper import PAUSED_FROM_TAG
from tests.e2e.conftest import E2E, virtual_elapsed

SITES = 5
PAUSED_AT_A_TIME = 2


def _queue_depth(e2e: E2E, url: str) -> tuple[int, int]:
    """(visible, in flight) messages of a queue."""
    attributes = e2e.stack.client("sqs").get_queue_attributes(
        QueueUrl=url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]), int(
        attributes["ApproximateNumberOfMessagesNotVisible"]
    )


def _outreach(e2e: E2E, *args: str) -> int:
    """The operator's ``outreach`` command, pointed at the embedded AWS and the applied scraper."""
    flags = ["--endpoint-url", e2e.stack.endpoint, "--region", e2e.stack.region]
    with e2e.stack.as_caller():
        return main([*flags, *args, "--function", e2e.scraper])


def _drain(e2e: E2E, visibility: int) -> None:
    """Wait until the scrape queue is empty, letting held messages return one visibility timeout later."""
    last_jump = [time.monotonic()]

    def empty() -> bool:
        visible, in_flight = _queue_depth(e2e, e2e.scrape_queue_url)
        if visible == 0 and in_flight == 0:
            return True
        # the jump waits while any invocation runs (a jump inside one would time it out)
        if (
            visible == 0
            and time.monotonic() - last_jump[0] > 2.0
            and e2e.stack.runtime.advance_clock_if_idle(visibility)
        ):
            last_jump[0] = time.monotonic()
        return False

    e2e.wait_until(
        empty,
        timeout=120,
        what="scrape queue drained",
        describe=lambda: _queue_depth(e2e, e2e.scrape_queue_url),
    )


@pytest.fixture
def two_at_a_time(e2e: E2E) -> Iterator[dict[str, Any]]:
    """The scraper limited to 2 invocations (reserved 2, mapping maximum 2); the applied values after."""
    lam = e2e.stack.client("lambda")
    mapping = e2e.scraper_mapping()
    reserved = lam.get_function_concurrency(FunctionName=e2e.scraper)["ReservedConcurrentExecutions"]
    maximum = mapping["ScalingConfig"]["MaximumConcurrency"]
    lam.put_function_concurrency(FunctionName=e2e.scraper, ReservedConcurrentExecutions=PAUSED_AT_A_TIME)
    lam.update_event_source_mapping(
        UUID=mapping["UUID"], ScalingConfig={"MaximumConcurrency": PAUSED_AT_A_TIME}
    )
    e2e.wait_for_scraper_poller()
    try:
        yield {"reserved": reserved, "maximum": maximum, "uuid": mapping["UUID"]}
    finally:
        arn = lam.get_function(FunctionName=e2e.scraper)["Configuration"]["FunctionArn"]
        lam.untag_resource(Resource=arn, TagKeys=[PAUSED_FROM_TAG])
        lam.put_function_concurrency(FunctionName=e2e.scraper, ReservedConcurrentExecutions=reserved)
        lam.update_event_source_mapping(UUID=mapping["UUID"], ScalingConfig={"MaximumConcurrency": maximum})
        e2e.wait_for_scraper_poller()


def test_reserved_concurrency_zero_halfway_through_a_job_stops_the_scraper_and_restoring_it_loses_nothing(
    e2e: E2E, faults: Faults, two_at_a_time: dict[str, Any]
) -> None:
    # GIVEN a job of 5 slow sites on a scraper running 2 at a time
    started_wall, started_virtual = time.monotonic(), e2e.stack.clock.now()
    lam = e2e.stack.client("lambda")
    runtime = e2e.stack.runtime
    sites = e2e.pool.take(SITES, kinds=("slow",))
    job_id = "e2e-kill-switch"
    task_ids = e2e.create_job(job_id, sites)
    dlq_url = str(e2e.stack.pipeline["scrape_dlq_url"])

    # WHEN the first task has finished, the operator pauses the scraper (reserved concurrency 0)
    e2e.wait_until(
        lambda: e2e.stack.job_counts(job_id).get("Finished", 0) >= 1, timeout=90, what="a task finished"
    )
    assert _outreach(e2e, "scraper", "pause") == 0
    assert lam.get_function_concurrency(FunctionName=e2e.scraper)["ReservedConcurrentExecutions"] == 0
    paused_at = e2e.stack.clock.now()
    throttles_before = e2e.sqs_poller_stats()["throttles"]

    # THEN once the invocations already running end, every remaining message is received and
    # throttled: none runs, none is deleted, none is dead-lettered
    def paused() -> bool:
        visible, in_flight = _queue_depth(e2e, e2e.scrape_queue_url)
        idle = runtime.stats_of(e2e.scraper).in_flight == 0
        return (
            idle
            and visible == 0
            and in_flight >= 1
            and e2e.sqs_poller_stats()["throttles"] > throttles_before
        )

    e2e.wait_until(
        paused,
        timeout=90,
        what="every remaining message throttled",
        describe=lambda: _queue_depth(e2e, e2e.scrape_queue_url),
    )
    invocations = runtime.stats_of(e2e.scraper).invocations
    open_tasks = [
        tid for tid, row in e2e.task_rows(job_id).items() if row["status"] not in ("Finished", "Failed")
    ]
    assert open_tasks, "the job ended before the switch: nothing was paused"
    waiting = _queue_depth(e2e, e2e.scrape_queue_url)[1]
    assert waiting >= len(open_tasks)

    # AND a visibility timeout later the messages come back, are throttled again, and still stay
    visibility = int(
        e2e.stack.client("sqs").get_queue_attributes(
            QueueUrl=e2e.scrape_queue_url, AttributeNames=["VisibilityTimeout"]
        )["Attributes"]["VisibilityTimeout"]
    )
    throttled_once = e2e.sqs_poller_stats()["throttles"]
    e2e.jump(visibility + 1)
    e2e.wait_until(
        lambda: e2e.sqs_poller_stats()["throttles"] >= throttled_once + len(open_tasks) and paused(),
        timeout=90,
        what="the returned messages throttled again",
    )
    assert runtime.stats_of(e2e.scraper).invocations == invocations
    rows = e2e.task_rows(job_id)
    assert all(rows[tid]["status"] == "Pending" for tid in open_tasks), {
        t: rows[t]["status"] for t in open_tasks
    }
    assert not any(tid in m["Body"] for m in e2e.stack.queue_messages(dlq_url) for tid in task_ids.values())

    # WHEN the operator resumes it: the reservation it had before the pause is restored
    assert _outreach(e2e, "scraper", "resume") == 0
    assert (
        lam.get_function_concurrency(FunctionName=e2e.scraper)["ReservedConcurrentExecutions"]
        == PAUSED_AT_A_TIME
    )
    resumed_at = e2e.stack.clock.now()

    # THEN the job resumes and every task finishes, each with one result
    counts = e2e.wait_terminal(job_id, SITES, timeout=240, idle_skip=1800, settle=1.0)
    assert counts.get("Finished") == SITES
    rows = e2e.task_rows(job_id)
    assert {row["status"] for row in rows.values()} == {"Finished"}
    puts = faults.puts_of(e2e.results_bucket, f"results/{job_id}/")
    assert len(puts) == SITES
    assert set(puts.values()) == {1}
    assert runtime.stats_of(e2e.scraper).invocations > invocations
    # AND the messages the pause held back (throttled, or re-sent by the reconciler meanwhile) come
    # back and are acknowledged as duplicates: the queue ends empty, nothing dead-lettered
    _drain(e2e, visibility)
    assert not any(tid in m["Body"] for m in e2e.stack.queue_messages(dlq_url) for tid in task_ids.values())
    e2e.record(
        "kill switch: reserved concurrency 0 halfway, then restored",
        tasks=SITES,
        paused_tasks=len(open_tasks),
        paused_virtual_seconds=round(resumed_at - paused_at),
        throttles=e2e.sqs_poller_stats()["throttles"] - throttles_before,
        lost=SITES - counts.get("Finished", 0),
        duplicates=sum(puts.values()) - SITES,
        wall_seconds=round(time.monotonic() - started_wall, 1),
        virtual_seconds=virtual_elapsed(e2e, started_virtual),
    )
