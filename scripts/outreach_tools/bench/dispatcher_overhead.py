"""Dispatcher handler time per record, ours vs the Powertools BatchProcessor baseline, median of repeats.

Both handlers get the same stream batches (INSERTs of Pending scrape tasks, Lambda's batch size) on
moto in-process, so there is no network: what differs is the handler's own work and the number of
SQS calls it makes (one SendMessageBatch per ten records against one SendMessage per record).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from outreach import dispatcher, task_store
from outreach_tools.bench import baseline_dispatcher
from outreach_tools.bench.calls_per_task import STREAM_BATCH_SIZE
from outreach_tools.bench.lambda_context import BenchContext
from outreach_tools.bench.report import Figure, MeasurementError, Section
from outreach_tools.bench.sandbox import sandbox

Handler = Callable[[dict[str, Any], Any], Any]


def _seconds_per_record(handler: Handler, records: list[dict[str, Any]]) -> float:
    began = time.perf_counter()
    for start in range(0, len(records), STREAM_BATCH_SIZE):
        response = handler({"Records": records[start : start + STREAM_BATCH_SIZE]}, BenchContext())
        if response.get("batchItemFailures"):
            raise MeasurementError(f"dispatch reported failures: {response['batchItemFailures'][:3]}")
    return (time.perf_counter() - began) / len(records)


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
        ours: list[float] = []
        baseline: list[float] = []
        # Alternate the two so drift on a shared machine falls on both alike; the first pair warms up.
        for _ in range(repeats + 1):
            ours.append(_seconds_per_record(dispatcher.lambda_handler, records))
            baseline.append(_seconds_per_record(baseline_dispatcher.lambda_handler, records))
    ours, baseline = ours[1:], baseline[1:]
    section = Section(
        "dispatcher overhead",
        details={
            "records_per_run": records_per_run,
            "repeats": repeats,
            "ours_seconds": ours,
            "baseline_seconds": baseline,
        },
    )
    median_ours, median_base = statistics.median(ours), statistics.median(baseline)
    section.add(
        Figure("handler time per record, median (us)", median_ours * 1e6, "us", baseline=median_base * 1e6)
    )
    return section
