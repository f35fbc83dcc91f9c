"""Asynchronous invocation: Lambda's event queue, its retries of function errors and its destinations.

Once Lambda has accepted an event (``submit``; a refusal is the caller's delivery failure, see
``schedules``), a function error is retried as the function's event invoke config says
(MaximumRetryAttempts 0-2, default 2, about 1 then 2 minutes apart; MaximumEventAgeInSeconds,
default 6 hours), then the invocation record goes to the on-failure destination, or the event to the
function's dead-letter queue
(https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html,
invocation-async-retain-records.html).

A throttled event (the function's reserved concurrency in use) is not a function error: it returns to
the queue and is tried again 1 s later, the wait doubling up to 5 minutes, for as long as the event is
younger than MaximumEventAgeInSeconds (invocation-async-error-handling.html). With reserved
concurrency 0 the event goes to the on-failure destination or dead-letter queue at once, without
retries, as AWS announced for August 2021 (the notice is quoted in
https://github.com/SummitRoute/aws_breaking_changes/issues/48; the developer guide pages above do not say it).

Delivery is at least once: "it's possible for it to receive the same event from Lambda multiple
times" (invocation-async-error-handling.html). The fault mode ``Faults.duplicate_async`` makes that
happen on purpose: one accepted event runs 2-3 times, the copies started together.
"""

from __future__ import annotations

import heapq
import itertools
import json
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from embedded_aws import faults
from embedded_aws.base import Journal, SourceStats, arn_parts, client, iso_timestamp, send_to_queue
from embedded_aws.clock import VirtualClock
from embedded_aws.errors import ThrottledError
from embedded_aws.runtime import FunctionRuntime, FunctionSpec

ASYNC_RETRY_DELAYS = (60.0, 120.0)  # Lambda waits about one minute, then two, between async attempts
DEFAULT_EVENT_AGE = 21_600
THROTTLE_FIRST_DELAY = 1.0  # after a throttle: 1 s, doubling ...
THROTTLE_MAX_DELAY = 300.0  # ... to at most 5 minutes
COPIES_START_TIMEOUT_REAL_SECONDS = 10.0


def throttle_retry_delay(throttles: int) -> float:
    """The wait before trying a throttled event again, after its ``throttles``-th throttle."""
    return float(min(THROTTLE_FIRST_DELAY * 2 ** max(throttles - 1, 0), THROTTLE_MAX_DELAY))


@dataclass(order=True)
class _Queued:
    due: float
    order: int
    function: str = field(compare=False)
    event: Any = field(compare=False)
    enqueued_at: float = field(compare=False)
    request_id: str = field(compare=False)
    attempts: int = field(default=0, compare=False)  # times the function ran
    throttles: int = field(default=0, compare=False)
    together: threading.Barrier | None = field(default=None, compare=False)  # copies start at once


class AsyncInvoker:
    """Lambda's internal queue: accepts events, runs them, retries errors, routes exhausted ones."""

    def __init__(
        self,
        runtime: FunctionRuntime,
        clock: VirtualClock,
        endpoint: str,
        *,
        journal: Journal | None = None,
        workers: int = 4,
    ) -> None:
        self.runtime = runtime
        self.clock = clock
        self.endpoint = endpoint
        self.journal = journal or Journal()
        self.stats = SourceStats()
        # The functions' own Region: their event invoke config and dead-letter queue are read there.
        self._lambda = client("lambda", endpoint, runtime.region)
        self._heap: list[_Queued] = []
        self._order = itertools.count()
        self._cv = threading.Condition()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._run, name=f"async-{i}", daemon=True) for i in range(workers)
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self._cv:
            self._cv.notify_all()
        for thread in self._threads:
            if thread.is_alive():
                thread.join(timeout=30)

    def pending(self) -> int:
        with self._cv:
            return len(self._heap)

    def submit(self, function: str, event: Any) -> str:
        """InvokeAsync: raises FunctionNotFoundError when Lambda would refuse the event (delivery failure)."""
        spec = self.runtime.spec(function, fresh=True)
        request_id = str(uuid.uuid4())
        now = self.clock.now()
        active = faults.active()
        copies = 1 if active is None else active.async_deliveries(spec.name)
        together = threading.Barrier(copies) if copies > 1 else None
        with self._cv:
            for _ in range(copies):
                queued = _Queued(now, next(self._order), function, event, now, request_id, together=together)
                heapq.heappush(self._heap, queued)
            self._cv.notify_all()
        if copies > 1:
            self.journal.record("async.duplicated", function=spec.name, request_id=request_id, copies=copies)
        return request_id

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._cv:
                if not self._heap or self._heap[0].due > self.clock.now():
                    wait = 0.05
                    if self._heap:
                        wait = min(wait, self.clock.real_seconds(self._heap[0].due - self.clock.now()))
                    self._cv.wait(max(wait, 0.001))
                    continue
                item = heapq.heappop(self._heap)
            try:
                self._attempt(item)
            except Exception as exc:  # keep the queue alive; the event is reported, not dropped silently
                self.journal.record("async.internal_error", function=item.function, error=repr(exc))

    def _config(self, function: str) -> dict[str, Any]:
        try:
            config: dict[str, Any] = self._lambda.get_function_event_invoke_config(FunctionName=function)
        except self._lambda.exceptions.ResourceNotFoundException:
            return {}
        return config

    def _attempt(self, item: _Queued) -> None:
        config = self._config(item.function)
        max_retries = int(config.get("MaximumRetryAttempts", 2))
        max_age = int(config.get("MaximumEventAgeInSeconds", DEFAULT_EVENT_AGE))
        if self.clock.now() - item.enqueued_at > max_age:
            self._exhausted(item, config, "EventAgeExceeded", None)
            return
        self._start_together(item)
        self.stats.enter(1)
        try:
            result = self.runtime.invoke(item.function, item.event)
        except ThrottledError as throttle:
            self._throttled(item, config, throttle, max_age)
            return
        finally:
            self.stats.leave()
        item.attempts += 1
        if result.ok:
            # What the function returned, as its CloudWatch log would show (reports read it).
            self.journal.record(
                "async.succeeded", function=item.function, payload=result.payload, request_id=item.request_id
            )
            self.stats.add(records_done=1)
            return
        self.stats.add(function_errors=1)
        retries_done = item.attempts - 1
        if retries_done >= max_retries:
            self._exhausted(item, config, "RetriesExhausted", result.error_payload())
            return
        delay = ASYNC_RETRY_DELAYS[min(retries_done, len(ASYNC_RETRY_DELAYS) - 1)]
        if self.clock.now() + delay - item.enqueued_at > max_age:
            self._exhausted(item, config, "EventAgeExceeded", result.error_payload())
            return
        self.stats.add(retries=1)
        item.due = self.clock.now() + delay
        with self._cv:
            heapq.heappush(self._heap, item)
            self._cv.notify()

    def _start_together(self, item: _Queued) -> None:
        """Copies of a duplicated delivery wait for each other, so they run concurrently."""
        together, item.together = item.together, None
        if together is None:
            return
        try:
            together.wait(timeout=COPIES_START_TIMEOUT_REAL_SECONDS)
        except threading.BrokenBarrierError:
            # Fewer async workers were free than copies: they run as they come, still each once.
            self.journal.record(
                "async.copies_not_concurrent", function=item.function, request_id=item.request_id
            )

    def _throttled(
        self, item: _Queued, config: dict[str, Any], throttle: ThrottledError, max_age: int
    ) -> None:
        """A 429: back to the queue with a growing wait, or, with reserved concurrency 0, out at once."""
        item.throttles += 1
        self.stats.add(invocations=-1, throttles=1)  # Lambda counts no invocation for a throttle
        self.journal.record(
            "async.throttled",
            function=item.function,
            reserved=throttle.reserved,
            throttles=item.throttles,
            at=self.clock.now(),
        )
        error = {"errorType": ThrottledError.error_type, "errorMessage": str(throttle)}
        if throttle.reserved == 0:
            self._exhausted(item, config, "RetriesExhausted", error, status=ThrottledError.status_code)
            return
        delay = throttle_retry_delay(item.throttles)
        if self.clock.now() + delay - item.enqueued_at > max_age:
            self._exhausted(item, config, "EventAgeExceeded", error, status=ThrottledError.status_code)
            return
        item.due = self.clock.now() + delay
        with self._cv:
            heapq.heappush(self._heap, item)
            self._cv.notify()

    def _exhausted(
        self,
        item: _Queued,
        config: dict[str, Any],
        condition: str,
        error: dict[str, Any] | None,
        *,
        status: int = 200,
    ) -> None:
        """Hand the event on: its invocation record to the on-failure destination, else the event to
        the dead-letter queue. ``status`` is the invocation's HTTP status: 200 when the function ran and
        failed, 429 when Lambda throttled it."""
        spec = self.runtime.spec(item.function)
        record = {
            "version": "1.0",
            "timestamp": iso_timestamp(self.clock.now()),
            "requestContext": {
                "requestId": item.request_id,
                "functionArn": f"{spec.arn}:$LATEST",
                "condition": condition,
                "approximateInvokeCount": item.attempts,
            },
            "requestPayload": item.event,
            "responseContext": {
                "statusCode": status,
                "executedVersion": "$LATEST",
                **({"functionError": "Unhandled"} if status == 200 else {}),
            },
            "responsePayload": error,
        }
        destination = ((config.get("DestinationConfig") or {}).get("OnFailure") or {}).get("Destination")
        self.journal.record(
            "async.exhausted", function=spec.name, condition=condition, destination=destination, error=error
        )
        if destination:
            self._send_record(destination, record, spec)
            # Counted after the record is written, so a reader that sees the count sees the record.
            self.stats.add(discarded_records=1)
            return
        dead_letter = self._lambda.get_function_configuration(FunctionName=spec.name).get(
            "DeadLetterConfig", {}
        )
        target = dead_letter.get("TargetArn")
        if target:
            # ErrorCode is a Number: the HTTP status code of the invocation (200 for a function error).
            attributes: dict[str, str | int] = {
                "RequestID": item.request_id,
                "ErrorCode": status,
                "ErrorMessage": ((error or {}).get("errorMessage") or condition)[:1024],
            }
            send_to_queue(self.endpoint, target, json.dumps(item.event), attributes)
        self.stats.add(discarded_records=1)

    def _send_record(self, destination: str, record: dict[str, Any], spec: FunctionSpec) -> None:
        """Send the invocation record in each destination type's documented form
        (invocation-async-retain-records.html: S3 key with a date path, EventBridge source ``aws.lambda``).
        """
        service, region, _, resource = arn_parts(destination)
        body = json.dumps(record)
        if service == "sqs":
            send_to_queue(self.endpoint, destination, body, {})
        elif service == "sns":
            client("sns", self.endpoint, region).publish(TopicArn=destination, Message=body)
        elif service == "s3":
            key = failure_record_key(spec.name, self.clock.now())
            client("s3", self.endpoint, region).put_object(Bucket=resource, Key=key, Body=body.encode())
        elif service == "lambda":
            self.submit(destination, record)
        elif service == "events":
            client("events", self.endpoint, region).put_events(
                Entries=[
                    {
                        "Source": "aws.lambda",
                        "DetailType": "Lambda Function Invocation Result - Failure",
                        "Detail": body,
                        "Resources": [f"{spec.arn}:$LATEST", destination],
                        "EventBusName": destination,
                    }
                ]
            )


def failure_record_key(function: str, now: float) -> str:
    """``aws/lambda/async/<function-name>/YYYY/MM/DD/YYYY-MM-DDTHH.MM.SS-<uuid>``, Lambda's S3 object name."""
    moment = datetime.fromtimestamp(now, tz=UTC)
    return f"aws/lambda/async/{function}/{moment:%Y/%m/%d/%Y-%m-%dT%H.%M.%S}-{uuid.uuid4()}"
