"""Faults between the tasks stream and the scrape queue, handled by the applied stream mapping.

- A poison record (its SendMessageBatch hangs past the dispatcher's timeout, every time) is isolated
  by bisect, retried up to the mapping's limit and written to the S3 failure bucket, whose
  notification reaches the alarm topic; every other record of its batch is dispatched exactly once,
  and the scrape reconciler sends the poison task's message once it stayed Pending past its threshold.
- SQS unavailable for a while (SendMessageBatch fails every entry) makes the dispatcher report the
  first unsent record; the mapping retries from it and, with an outage shorter than the retries
  allow, every task is dispatched exactly once and nothing reaches the failure bucket.
"""

from __future__ import annotations

import json
import time
from urllib.parse import unquote_plus

from embedded_aws.faults import Faults
from tests.e2e.conftest import E2E, epoch, virtual_elapsed

# The dispatcher sends a chunk once and resends failed entries twice before reporting the record.
SEND_CALLS_PER_INVOCATION = 3


def _s3_objects_notified(bodies: list[str]) -> set[tuple[str, str]]:
    """(bucket, key) of every S3 event notification among SNS-to-SQS message bodies."""
    found: set[tuple[str, str]] = set()
    for body in bodies:
        event = json.loads(json.loads(body)["Message"])
        for record in event.get("Records", []):
            s3 = record["s3"]
            found.add((s3["bucket"]["name"], unquote_plus(s3["object"]["key"])))
    return found


def _failure_records_holding(e2e: E2E, task_ids: set[str], keys: set[str]) -> list[str]:
    """The failure bucket's records (of ``keys``) whose batch holds one of ``task_ids``: a scenario's
    own, whatever another scenario's batches left there."""
    s3 = e2e.stack.client("s3")
    held = []
    for key in sorted(keys):
        record = json.loads(s3.get_object(Bucket=e2e.failure_bucket, Key=key)["Body"].read())
        records = json.loads(record["payload"])["Records"]
        if any(r["dynamodb"]["Keys"]["task_id"]["S"] in task_ids for r in records):
            held.append(key)
    return held


def _delta(after: dict[str, int], before: dict[str, int], name: str) -> int:
    return after[name] - before[name]


def test_a_poison_stream_record_is_isolated_by_bisect_alarmed_and_healed_by_the_reconciler(
    e2e: E2E, faults: Faults
) -> None:
    # GIVEN the applied stream mapping (bisect, retry limit, S3 on-failure destination)
    mapping = e2e.stream_mapping()
    assert mapping["BisectBatchOnFunctionError"] is True
    retries = int(mapping["MaximumRetryAttempts"])
    batch_size = int(mapping["BatchSize"])
    timeout = int(
        e2e.stack.client("lambda").get_function_configuration(FunctionName=e2e.dispatcher)["Timeout"]
    )
    bound = e2e.reconciler_bound()
    # AND someone listening on the alarm topic
    alarms = e2e.subscribe_to_alarms("poison")
    # AND a job of one stream batch whose 4th task's message hangs past the dispatcher's timeout
    started_wall, started_virtual = time.monotonic(), e2e.stack.clock.now()
    sites = e2e.pool.take(batch_size)
    job_id = "e2e-poison"
    poison = e2e.task_id(job_id, sites[3])
    stall = faults.stall_send(poison, e2e.stack.clock, hold_seconds=timeout + 1)
    failures_before = set(e2e.stack.objects(e2e.failure_bucket))
    stats_before = e2e.stream_poller_stats()
    actions_before = e2e.reconciler_actions()

    # WHEN the job is created
    task_ids = e2e.create_job(job_id, sites)
    e2e.wait_until(
        lambda: (
            len(set(e2e.stack.objects(e2e.failure_bucket)) - failures_before) >= 1
            and _delta(e2e.stream_poller_stats(), stats_before, "discarded_records") >= 1
        ),
        timeout=120,
        what="a failure record",
    )

    # THEN exactly one failure record was written, for the poison record alone, after the retry limit
    new_records = sorted(set(e2e.stack.objects(e2e.failure_bucket)) - failures_before)
    assert len(new_records) == 1
    body = e2e.stack.client("s3").get_object(Bucket=e2e.failure_bucket, Key=new_records[0])["Body"].read()
    record = json.loads(body)
    assert record["requestContext"]["condition"] == "RetryAttemptsExhausted"
    assert record["requestContext"]["approximateInvokeCount"] == retries + 1
    assert record["DDBStreamBatchInfo"]["batchSize"] == 1
    payload = json.loads(record["payload"])["Records"]
    assert [r["dynamodb"]["Keys"]["task_id"]["S"] for r in payload] == [poison]
    # AND the batch was split to get there
    stats_after = e2e.stream_poller_stats()
    assert _delta(stats_after, stats_before, "bisections") >= 1
    assert _delta(stats_after, stats_before, "discarded_records") == 1
    # AND the failure record raised the alarm: its notification reached the alarm topic
    e2e.wait_until(
        lambda: (e2e.failure_bucket, new_records[0]) in _s3_objects_notified(alarms()),
        timeout=30,
        what="the failure bucket's notification on the alarm topic",
        describe=alarms,
    )

    # WHEN the reconciler runs on its applied schedule
    counts = e2e.wait_terminal(job_id, len(sites), timeout=180, idle_skip=bound.period)

    # THEN every task is terminal: the others dispatched once by the stream, the poison task sent
    # once, by the reconciler, after it stayed Pending past the threshold
    rows = e2e.task_rows(job_id)
    assert all(row["status"] in ("Finished", "Failed") for row in rows.values())
    assert sum(counts.get(s, 0) for s in ("Finished", "Failed")) == len(sites)
    assert [faults.sends_of(e2e.scrape_queue_name, tid) for tid in task_ids.values()] == [1] * len(sites)
    assert int(rows[poison].get("redispatches", 0)) == 1
    assert e2e.reconciler_actions().get("redispatched", 0) - actions_before.get("redispatched", 0) == 1
    assert stall.fired >= retries + 1
    # AND within the documented bound B of its last change (plus one jump of the harness's clock)
    pending_for = epoch(rows[poison]["updated_at"]) - epoch(rows[poison]["created_at"])
    assert bound.pending_after <= pending_for <= bound.b + bound.period
    # AND at most one result per task
    puts = faults.puts_of(e2e.results_bucket, f"results/{job_id}/")
    assert set(puts.values()) <= {1}
    e2e.record(
        "poison stream record",
        tasks=len(sites),
        dispatched=len(sites) - 1,
        failure_records=len(new_records),
        poison_invocations=stall.fired,
        bisections=_delta(stats_after, stats_before, "bisections"),
        reconciler_redispatched=1,
        pending_seconds_before_redispatch=round(pending_for),
        bound_b_seconds=bound.b,
        lost=len(sites) - sum(counts.get(s, 0) for s in ("Finished", "Failed")),
        duplicates=sum(faults.sends_of(e2e.scrape_queue_name, tid) for tid in task_ids.values()) - len(sites),
        wall_seconds=round(time.monotonic() - started_wall, 1),
        virtual_seconds=virtual_elapsed(e2e, started_virtual),
    )


def test_sqs_unavailable_during_dispatch_is_retried_from_the_failed_record_and_skips_nothing(
    e2e: E2E, faults: Faults
) -> None:
    # GIVEN the applied stream mapping's retry limit, and an SQS outage shorter than it allows:
    # each retry of a batch costs SEND_CALLS_PER_INVOCATION calls, the limit allows (retries + 1) of them
    mapping = e2e.stream_mapping()
    retries = int(mapping["MaximumRetryAttempts"])
    outage_calls = 2 * SEND_CALLS_PER_INVOCATION
    assert outage_calls < (retries + 1) * SEND_CALLS_PER_INVOCATION
    started_wall, started_virtual = time.monotonic(), e2e.stack.clock.now()
    sites = e2e.pool.take(20)
    job_id = "e2e-sqs-outage"
    outage = faults.sqs_outage(e2e.scrape_queue_name, calls=outage_calls)
    failures_before = set(e2e.stack.objects(e2e.failure_bucket))
    stats_before = e2e.stream_poller_stats()

    # WHEN the job is created while SendMessageBatch fails, and SQS then recovers
    task_ids = e2e.create_job(job_id, sites)
    counts = e2e.wait_terminal(job_id, len(sites), timeout=120)

    # THEN the outage really happened, and the mapping retried from the reported record
    assert outage.fired == outage_calls
    stats_after = e2e.stream_poller_stats()
    assert _delta(stats_after, stats_before, "reported_failures") == 2
    assert _delta(stats_after, stats_before, "retries") == 2
    # AND every task was dispatched exactly once (counted at SQS) and is terminal
    assert [faults.sends_of(e2e.scrape_queue_name, tid) for tid in task_ids.values()] == [1] * len(sites)
    assert sum(counts.get(s, 0) for s in ("Finished", "Failed")) == len(sites)
    # AND none of its records was discarded to the failure bucket
    new_records = set(e2e.stack.objects(e2e.failure_bucket)) - failures_before
    assert _failure_records_holding(e2e, set(task_ids.values()), new_records) == []
    e2e.record(
        "SQS unavailable during dispatch",
        tasks=len(sites),
        failed_send_calls=outage.fired,
        stream_retries=_delta(stats_after, stats_before, "retries"),
        failure_records=0,
        lost=len(sites) - sum(counts.get(s, 0) for s in ("Finished", "Failed")),
        duplicates=0,
        wall_seconds=round(time.monotonic() - started_wall, 1),
        virtual_seconds=virtual_elapsed(e2e, started_virtual),
    )
