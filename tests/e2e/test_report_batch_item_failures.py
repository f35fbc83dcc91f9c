"""ReportBatchItemFailures on the scrape mapping decides whether a reported failure comes back.

The scraper reports a retryable failure in ``batchItemFailures`` (after releasing its claim and
shortening the message's visibility). With the applied mapping the message returns and the task
finishes; on a copy of the configuration without ReportBatchItemFailures Lambda does not read the
response, deletes the message with its batch, and the task is stuck Running with nothing left to
retry it: the seeds' bug. Only the scrape reconciler brings such a task back, once no message can.
`make checkov` rejects such a configuration: CKV_OUT_001 fails every
event source mapping without it (tests/policies/test_module_mutations.py,
``mapping_without_report_batch_item_failures``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from embedded_aws.applied_config import SqsMappingConfig
from embedded_aws.faults import Faults
from outreach.results import result_key
from tests.e2e.conftest import E2E, epoch, virtual_elapsed


def _refuse_first_result_write(e2e: E2E, faults: Faults, job_id: str, task_ids: list[str]) -> Faults:
    """S3 refuses the first result write of each task: a retryable failure inside the scraper."""
    faults.refuse_put({result_key(job_id, tid) for tid in task_ids}, times=1)
    return faults


def test_with_report_batch_item_failures_a_reported_failure_is_redelivered_and_finishes(
    e2e: E2E, faults: Faults
) -> None:
    # GIVEN the applied scrape mapping (ReportBatchItemFailures)
    assert e2e.scraper_mapping()["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    started_wall, started_virtual = time.monotonic(), e2e.stack.clock.now()
    sites = e2e.pool.take(4, kinds=("normal",))
    job_id = "e2e-rbif-applied"
    failing = [e2e.task_id(job_id, s) for s in sites[:2]]
    _refuse_first_result_write(e2e, faults, job_id, failing)
    before = e2e.sqs_poller_stats()

    # WHEN the result write of two tasks is refused once
    e2e.create_job(job_id, sites)
    counts = e2e.wait_terminal(job_id, len(sites), timeout=120, idle_skip=300)

    # THEN their failures were reported, the messages came back and every task finished once
    assert e2e.sqs_poller_stats()["reported_failures"] - before["reported_failures"] == len(failing)
    assert counts.get("Finished") == len(sites)
    rows = e2e.task_rows(job_id)
    assert [int(rows[tid]["attempts"]) for tid in failing] == [2, 2]
    puts = faults.puts_of(e2e.results_bucket, f"results/{job_id}/")
    assert len(puts) == len(sites)
    assert set(puts.values()) == {1}
    e2e.record(
        "reported failure, applied config",
        tasks=len(sites),
        reported_failures=len(failing),
        lost=len(sites) - counts.get("Finished", 0),
        wall_seconds=round(time.monotonic() - started_wall, 1),
        virtual_seconds=virtual_elapsed(e2e, started_virtual),
    )


@pytest.fixture
def without_report_batch_item_failures(e2e: E2E) -> Iterator[None]:
    """The applied scrape mapping changed through the Lambda API to FunctionResponseTypes = []."""
    mapping = e2e.scraper_mapping()
    lam = e2e.stack.client("lambda")
    lam.update_event_source_mapping(UUID=mapping["UUID"], FunctionResponseTypes=[])
    assert not e2e.wait_for_scraper_poller().report_failures
    yield
    lam.update_event_source_mapping(UUID=mapping["UUID"], FunctionResponseTypes=["ReportBatchItemFailures"])
    assert e2e.wait_for_scraper_poller() == SqsMappingConfig.from_mapping(mapping)


def test_without_report_batch_item_failures_reported_failures_are_lost_until_the_reconciler_requeues_them(
    e2e: E2E, faults: Faults, without_report_batch_item_failures: None
) -> None:
    # GIVEN the scrape mapping without ReportBatchItemFailures
    started_wall, started_virtual = time.monotonic(), e2e.stack.clock.now()
    sites = e2e.pool.take(4, kinds=("normal",))
    job_id = "e2e-rbif-removed"
    task_ids = [e2e.task_id(job_id, s) for s in sites]
    failing = task_ids[:2]
    _refuse_first_result_write(e2e, faults, job_id, failing)
    before = e2e.sqs_poller_stats()

    # WHEN the result write of two tasks is refused once, and more than a visibility timeout passes
    e2e.create_job(job_id, sites)
    e2e.wait_until(
        lambda: (
            e2e.stack.job_counts(job_id).get("Finished", 0) == 2
            and e2e.sqs_poller_stats()["ignored_reported_failures"] - before["ignored_reported_failures"] == 2
        ),
        timeout=60,
        what="two tasks finished and two reported failures ignored",
    )
    visibility = int(
        e2e.stack.client("sqs").get_queue_attributes(
            QueueUrl=e2e.scrape_queue_url, AttributeNames=["VisibilityTimeout"]
        )["Attributes"]["VisibilityTimeout"]
    )
    e2e.jump(visibility + 60)
    time.sleep(5.0)  # several receive rounds of the pollers

    # THEN the reported failures were deleted with their batch: nothing brings the tasks back
    ignored = e2e.stack.journal.entries("sqs.reported_failures_ignored")
    assert len(ignored) >= 2
    rows = e2e.task_rows(job_id)
    assert [rows[tid]["status"] for tid in failing] == ["Running", "Running"]
    assert [int(rows[tid]["attempts"]) for tid in failing] == [1, 1]
    for queue in (e2e.scrape_queue_url, str(e2e.stack.pipeline["scrape_dlq_url"])):
        bodies = [m["Body"] for m in e2e.stack.queue_messages(queue)]
        assert [b for b in bodies if any(tid in b for tid in failing)] == []
    # AND no result exists for them, while the other two finished
    puts = faults.puts_of(e2e.results_bucket, f"results/{job_id}/")
    assert sorted(puts) == sorted(result_key(job_id, tid) for tid in task_ids[2:])
    counts = e2e.stack.job_counts(job_id)
    assert counts.get("Running") == 2
    stuck_since = {tid: epoch(rows[tid]["updated_at"]) for tid in failing}

    # WHEN the scrape reconciler runs on its applied schedule
    bound = e2e.reconciler_bound()
    healed = e2e.wait_terminal(job_id, len(sites), timeout=180, idle_skip=bound.period)

    # THEN it re-queued both once no message could come back, and each finished on its second attempt
    rows = e2e.task_rows(job_id)
    assert healed.get("Finished") == len(sites)
    assert [int(rows[tid]["attempts"]) for tid in failing] == [2, 2]
    waited = [epoch(rows[tid]["updated_at"]) - stuck_since[tid] for tid in failing]
    assert all(bound.running_after <= w <= bound.b + bound.period for w in waited), (waited, bound)
    # AND exactly one result was stored per task
    puts = faults.puts_of(e2e.results_bucket, f"results/{job_id}/")
    assert sorted(puts) == sorted(result_key(job_id, tid) for tid in task_ids)
    assert set(puts.values()) == {1}
    e2e.record(
        "config without ReportBatchItemFailures",
        tasks=len(sites),
        reported_failures_ignored=2,
        stuck_running=counts.get("Running", 0),
        requeued_by_reconciler=len(failing),
        stuck_seconds=[round(w) for w in waited],
        bound_b_seconds=bound.b,
        lost=len(sites) - healed.get("Finished", 0),
        wall_seconds=round(time.monotonic() - started_wall, 1),
        virtual_seconds=virtual_elapsed(e2e, started_virtual),
    )
