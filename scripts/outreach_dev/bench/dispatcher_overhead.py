"""Dispatcher handler time per record, ours vs the Powertools BatchProcessor baseline, median of repeats.

Both handlers get the same stream batches (INSERTs of Pending scrape tasks, Lambda's batch size) on
moto in-process, so there is no network: what differs is the handler's own work and the number of
SQS calls it makes (one SendMessageBatch per ten records against one SendMessage per record). Two
figures: the time outside AWS calls (the handler's own overhead: parsing, batching, Powertools) and
the time in all, moto answering in-process included.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import boto3

from outreach import dispatcher, task_store
from outreach_dev.bench import baseline_dispatcher
from outreach_dev.bench.call_counter import call_count
from outreach_dev.bench.calls_per_task import STREAM_BATCH_SIZE
from outreach_dev.bench.lambda_context import BenchContext
from outreach_dev.bench.report import Figure, MeasurementError, Section
from outreach_dev.bench.sandbox import REGION, sandbox

Handler = Callable[[dict[str, Any], Any], Any]


def _per_record(handler: Handler, records: list[dict[str, Any]], run: int) -> tuple[float, float]:
    """(seconds per record in all, seconds per record outside AWS calls) of one pass over ``records``.

    Each pass sends to a queue of its own: moto's SendMessage slows down as a queue fills up.
    """
    queue = boto3.client("sqs", region_name=REGION).create_queue(QueueName=f"bench-overhead-{run}")[
        "QueueUrl"
    ]
    os.environ["SCRAPE_QUEUE_URL"] = queue
    with call_count() as count, count.counting():
        began = time.perf_counter()
        for start in range(0, len(records), STREAM_BATCH_SIZE):
            response = handler({"Records": records[start : start + STREAM_BATCH_SIZE]}, BenchContext())
            if response.get("batchItemFailures"):
                raise MeasurementError(f"dispatch reported failures: {response['batchItemFailures'][:3]}")
        elapsed = time.perf_counter() - began
    return elapsed / len(records), (elapsed - count.seconds_in_calls) / len(records)


def run(records_per_run: int, repeats: int) -> Section:
    with sandbox("bench-dispatch") as box:
        created = task_store.create_scrape_job(
            "bench-dispatch", [f"https://d{i}.example" for i in range(records_per_run)]
        )
        ids = set(created.created)
        records = [
            r
            for r in box.stream_records()
            if r.get("eventName") == "INSERT" and r["dynamodb"]["Keys"]["task_id"]["S"] in ids
        ]
        if len(records) != records_per_run:
            raise MeasurementError(f"{len(records)} stream inserts for {records_per_run} tasks")
        ours: list[tuple[float, float]] = []
        baseline: list[tuple[float, float]] = []
        # Alternate the two so drift on a shared machine falls on both alike; the first pair warms up.
        for run in range(repeats + 1):
            ours.append(_per_record(dispatcher.lambda_handler, records, 2 * run))
            baseline.append(_per_record(baseline_dispatcher.lambda_handler, records, 2 * run + 1))
    ours, baseline = ours[1:], baseline[1:]
    section = Section(
        "dispatcher overhead",
        details={
            "records_per_run": records_per_run,
            "repeats": repeats,
            "ours_seconds_per_record": ours,
            "baseline_seconds_per_record": baseline,
        },
    )
    for index, label in ((1, "outside AWS calls"), (0, "in all, moto in-process")):
        section.add(
            Figure(
                f"handler time per record, {label}, median (us)",
                statistics.median(r[index] for r in ours) * 1e6,
                "us",
                baseline=statistics.median(r[index] for r in baseline) * 1e6,
            )
        )
    return section
