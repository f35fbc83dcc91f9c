"""AWS calls per task, by phase, service and operation: a job created, dispatched, scraped and reconciled.

Everything runs in-process on moto, the handlers called the way their event sources call them, the
calls counted with botocore's event hooks (:mod:`call_counter`). The baseline dispatcher
(:mod:`baseline_dispatcher`, one SendMessage per record) dispatches the same stream records in the
same run. The scrape retry path is a site that is down for its first delivery and up for the second.
Handler wall times are kept for the cost model's GB-seconds.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import boto3

from embedded_aws.webfarm import WebFarm
from outreach import config, dispatcher, scraper, task_store
from outreach.reconcilers import scrape as reconciler
from outreach_dev.bench import baseline_dispatcher
from outreach_dev.bench.call_counter import CallCount, call_count
from outreach_dev.bench.lambda_context import BenchContext
from outreach_dev.bench.report import MeasurementError
from outreach_dev.bench.sandbox import REGION, Sandbox, sandbox

# The stream event source mapping's batch size (modules/stream-dispatch, stream.batch_size default).
STREAM_BATCH_SIZE = 10


@dataclass
class Phase:
    """Calls of one phase: per operation, DynamoDB units, tasks it covered, handler seconds."""

    tasks: int
    calls: Counter[str]
    write_units: float
    read_units: float
    items_written: int = 0
    handler_seconds: list[float] = field(default_factory=list)
    invocations: int = 0

    @classmethod
    def of(cls, count: CallCount, tasks: int) -> Phase:
        return cls(tasks, Counter(count.calls), count.write_units, count.read_units, count.items_written)

    def per_task(self) -> dict[str, float]:
        return {key: value / self.tasks for key, value in sorted(self.calls.items())}

    def service_per_task(self, service: str) -> float:
        return sum(v for k, v in self.calls.items() if k.split(":", 1)[0] == service) / self.tasks

    def as_dict(self) -> dict[str, Any]:
        return {
            "tasks": self.tasks,
            "calls": dict(sorted(self.calls.items())),
            "calls_per_task": self.per_task(),
            "dynamodb_items_written_per_task": self.items_written / self.tasks,
            "dynamodb_write_units_per_task": self.write_units / self.tasks,
            "dynamodb_read_units_per_task": self.read_units / self.tasks,
            "invocations": self.invocations,
            "handler_seconds_total": sum(self.handler_seconds),
        }


@dataclass
class JobCalls:
    phases: dict[str, Phase]
    stream_records_per_task: float
    dispatch_seconds_per_record: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "phases": {name: phase.as_dict() for name, phase in self.phases.items()},
            "stream_records_per_task": self.stream_records_per_task,
            "dispatch_seconds_per_record": self.dispatch_seconds_per_record,
        }


def _counted(action: Callable[[], Any], tasks: int) -> tuple[Phase, Any]:
    with call_count() as count, count.counting():
        result = action()
    return Phase.of(count, tasks), result


def _dispatch(handler: Callable[[dict[str, Any], Any], Any], records: list[dict[str, Any]]) -> Phase:
    seconds: list[float] = []

    def run() -> None:
        for start in range(0, len(records), STREAM_BATCH_SIZE):
            began = time.perf_counter()
            response = handler({"Records": records[start : start + STREAM_BATCH_SIZE]}, BenchContext())
            seconds.append(time.perf_counter() - began)
            if response.get("batchItemFailures"):
                raise MeasurementError(f"dispatch reported failures: {response['batchItemFailures'][:3]}")

    phase, _ = _counted(run, len(records))
    phase.handler_seconds, phase.invocations = seconds, len(seconds)
    return phase


def _deliver_all(box: Sandbox, expected: int, *, hide_failed: bool) -> tuple[Phase, list[str]]:
    """Hand every visible scrape message to the scraper, one per invocation (batch size 1); return
    the phase and the receipt handles of the messages the scraper handed back for a retry."""
    seconds: list[float] = []
    failures: list[str] = []

    def run() -> None:
        while len(seconds) < expected:
            event = box.receive_sqs_event()
            if not event["Records"]:
                raise MeasurementError(f"only {len(seconds)} of {expected} scrape messages arrived")
            began = time.perf_counter()
            response = scraper.lambda_handler(event, BenchContext())
            seconds.append(time.perf_counter() - began)
            if response.get("batchItemFailures"):
                failures.extend(record["receiptHandle"] for record in event["Records"])
            else:
                # What the SQS event source mapping does with a message the function handled.
                _delete_handled(box, event)

    phase, _ = _counted(run, expected)
    phase.handler_seconds, phase.invocations = seconds, len(seconds)
    phase.calls["sqs:DeleteMessage (event source mapping)"] = len(seconds) - len(failures)
    phase.calls["sqs:ReceiveMessage (event source mapping)"] = len(seconds)
    if len(failures) != (expected if hide_failed else 0):
        wanted = "all" if hide_failed else "none"
        raise MeasurementError(f"{len(failures)} of {expected} deliveries failed; expected {wanted}")
    return phase, failures


def _delete_handled(box: Sandbox, event: Mapping[str, Any]) -> None:
    sqs = boto3.client("sqs", region_name=REGION)
    for record in event["Records"]:
        sqs.delete_message(QueueUrl=box.queue_url, ReceiptHandle=record["receiptHandle"])


def _receive_counted_out(phase: Phase) -> None:
    """The bench's own receives and deletes stand for the event source mapping's: count them once."""
    for key in ("sqs:ReceiveMessage", "sqs:DeleteMessage"):
        phase.calls.pop(key, None)


def measure(tasks: int, retry_tasks: int) -> JobCalls:
    """Create, dispatch, scrape and reconcile a job of ``tasks`` sites; ``retry_tasks`` more fail once."""
    env = {
        "SCRAPER_ALLOW_LOOPBACK": "1",
        "SCRAPER_CONNECT_TIMEOUT_SECONDS": "2",
        "SCRAPER_READ_TIMEOUT_SECONDS": "5",
    }
    outage_clock = [0.0]
    with sandbox("bench-calls", extra_env=env) as box, WebFarm(tasks + retry_tasks, mix=()) as farm:
        urls = farm.urls()
        began = time.perf_counter()
        creation, created = _counted(lambda: task_store.create_scrape_job("bench-job", urls[:tasks]), tasks)
        creation.handler_seconds = [time.perf_counter() - began]
        if len(created.created) != tasks:
            raise MeasurementError(f"job creation created {len(created.created)} of {tasks} tasks")
        records = box.stream_records()
        inserts = _inserts_of(records, set(created.created))
        if len(inserts) != tasks:
            raise MeasurementError(f"the stream holds {len(inserts)} task inserts, expected {tasks}")
        baseline = _dispatch(baseline_dispatcher.lambda_handler, inserts)
        boto3.client("sqs", region_name=REGION).purge_queue(QueueUrl=box.queue_url)
        ours = _dispatch(dispatcher.lambda_handler, inserts)
        happy, _ = _deliver_all(box, tasks, hide_failed=False)
        _receive_counted_out(happy)
        stream_after_job = len(box.stream_records())

        # The retry path: sites down for the first delivery, up for the second.
        for number in range(tasks, tasks + retry_tasks):
            farm.take_down(number, until=1.0, clock=lambda: outage_clock[0])
        retry_created = task_store.create_scrape_job("bench-retry", urls[tasks:]).created
        _dispatch(
            dispatcher.lambda_handler,
            _inserts_of(box.stream_records()[stream_after_job:], set(retry_created)),
        )
        first, hidden = _deliver_all(box, retry_tasks, hide_failed=True)
        # The retry schedule hid each message; the bench lets that time pass at once.
        sqs = boto3.client("sqs", region_name=REGION)
        for handle in hidden:
            sqs.change_message_visibility(QueueUrl=box.queue_url, ReceiptHandle=handle, VisibilityTimeout=0)
        outage_clock[0] = 2.0
        second, _ = _deliver_all(box, retry_tasks, hide_failed=False)
        retry = _merge(first, second)
        _receive_counted_out(retry)

        box.advance(config.ReconcilerSettings.from_env().running_after_seconds + 1)
        settings = config.ReconcilerSettings.from_env()
        began = time.perf_counter()
        reconcile, _ = _counted(lambda: reconciler.reconcile(settings, lambda: 60.0), tasks + retry_tasks)
        reconcile.handler_seconds, reconcile.invocations = [time.perf_counter() - began], 1
        all_records = len(box.stream_records())
    return JobCalls(
        phases={
            "job creation": creation,
            "dispatch (ours)": ours,
            "dispatch (baseline)": baseline,
            "scrape happy path": happy,
            "scrape retry path": retry,
            "reconciler run": reconcile,
        },
        stream_records_per_task=all_records / (tasks + retry_tasks),
        dispatch_seconds_per_record=sum(ours.handler_seconds) / tasks,
    )


def _inserts_of(records: list[dict[str, Any]], task_ids: set[str]) -> list[dict[str, Any]]:
    """The stream records that inserted these tasks (the job's counter rows are left out)."""
    return [
        record
        for record in records
        if record.get("eventName") == "INSERT"
        and record["dynamodb"].get("Keys", {}).get("task_id", {}).get("S") in task_ids
    ]


def _merge(first: Phase, second: Phase) -> Phase:
    merged = Phase(
        first.tasks,
        first.calls + second.calls,
        first.write_units + second.write_units,
        first.read_units + second.read_units,
        first.items_written + second.items_written,
        first.handler_seconds + second.handler_seconds,
        first.invocations + second.invocations,
    )
    return merged
