"""SQS event source mapping poller with Lambda's delivery semantics.

Behaviour (AWS Lambda developer guide, "Using Lambda with Amazon SQS",
https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html and its subpages):
- batches of up to ``BatchSize`` messages, gathered for up to ``MaximumBatchingWindowInSeconds``;
- at most ``ScalingConfig.MaximumConcurrency`` invocations in flight for the mapping
  (services-sqs-scaling.html). The mapping does not look at the function's reserved concurrency: an
  invocation beyond it is throttled (``ThrottledError``, 429), the function does not run, and the batch is
  left alone, so it becomes visible again after the visibility timeout, its receive counted by SQS
  towards ``maxReceiveCount`` (with-sqs.html: a throttled batch returns to the queue;
  services-sqs-configure.html: visibility timeout six times the function timeout so a throttled
  batch can be retried). Reserved concurrency 0 therefore stops every invocation while the messages
  stay in the queue. After a throttle the poller waits before its next receive, 1 s doubling up to
  60 s (Lambda backs off on throttles; its timings are undocumented);
- success deletes the batch; a function error or timeout deletes nothing, so every message returns
  after the queue's visibility timeout (services-sqs-errorhandling.html). The deletes are made by
  one thread of the mapping, in DeleteMessageBatch calls of up to ten, while the poller that
  invoked goes back to receiving: Lambda's pollers are "processes that are reading batches"
  (services-sqs-scaling.html), and when a handled batch's delete is made is not documented. A
  message counts as done (``records_done``) once its delete was made;
- with ``FunctionResponseTypes = [ReportBatchItemFailures]`` only the messages named in
  ``batchItemFailures`` return; an empty/null identifier or an unknown message id fails the whole
  batch. Without it the response is not read at all and the whole batch is deleted;
- messages that match no filter are deleted without invoking (invocation-eventfiltering.html);
- the queue's redrive policy is applied by SQS itself (the emulator moves a message to the DLQ on the
  receive after ``maxReceiveCount``); ChangeMessageVisibility made by the handler is honoured because
  nothing here overrides the visibility of a message it does not delete.
"""

from __future__ import annotations

import json
import queue
import threading
from typing import Any

from embedded_aws.applied_config import SqsMappingConfig
from embedded_aws.base import Journal, SourceStats, arn_parts, client
from embedded_aws.clock import VirtualClock
from embedded_aws.errors import ThrottledError
from embedded_aws.patterns import passes
from embedded_aws.runtime import FunctionRuntime, InvocationResult

THROTTLE_BACKOFF_FIRST = 1.0
THROTTLE_BACKOFF_MAX = 60.0


def _lambda_message_attributes(attributes: dict[str, Any]) -> dict[str, Any]:
    converted = {}
    for name, value in attributes.items():
        converted[name] = {
            "stringValue": value.get("StringValue"),
            "binaryValue": value.get("BinaryValue"),
            "stringListValues": value.get("StringListValues", []),
            "binaryListValues": value.get("BinaryListValues", []),
            "dataType": value.get("DataType"),
        }
    return converted


class SqsMappingPoller:
    """Polls one queue for one event source mapping and invokes its function."""

    def __init__(
        self,
        config: SqsMappingConfig,
        runtime: FunctionRuntime,
        clock: VirtualClock,
        endpoint: str,
        *,
        journal: Journal | None = None,
        receive_wait_seconds: int = 1,
    ) -> None:
        self.config = config
        self.runtime = runtime
        self.clock = clock
        self.journal = journal or Journal()
        self.stats = SourceStats()
        _, region, account, queue_name = arn_parts(config.queue_arn)
        self.region = region
        self._sqs = client("sqs", endpoint, region)
        self.queue_url: str = self._sqs.get_queue_url(QueueName=queue_name, QueueOwnerAWSAccountId=account)[
            "QueueUrl"
        ]
        # One poller per invocation the mapping may have in flight, never more than this machine's
        # workers; the function's reservation is not consulted (it throttles instead).
        local_cap = runtime.max_workers_per_function
        self.pollers = min(config.maximum_concurrency or local_cap, local_cap)
        self.receive_wait_seconds = receive_wait_seconds
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        # Handled records waiting for their delete; None tells the deleting thread to finish.
        self._handled: queue.Queue[list[dict[str, Any]] | None] = queue.Queue()
        self._deleter: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> None:
        self._deleter = threading.Thread(
            target=self._delete_handled, name=f"sqs-{self.config.uuid[:8]}-delete", daemon=True
        )
        self._deleter.start()
        for index in range(max(self.pollers, 1)):
            thread = threading.Thread(
                target=self._run, name=f"sqs-{self.config.uuid[:8]}-{index}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)
        if self._deleter is not None:
            self._handled.put(None)
            self._deleter.join(timeout=30)

    # -- polling -----------------------------------------------------------------------------------
    def _run(self) -> None:
        throttles_in_a_row = 0
        while not self._stop.is_set():
            try:
                batch = self._collect()
                if not batch:
                    continue
                if self._deliver(batch):
                    throttles_in_a_row = 0
                    continue
                throttles_in_a_row += 1
                backoff = THROTTLE_BACKOFF_FIRST * 2 ** (throttles_in_a_row - 1)
                self.clock.sleep(min(backoff, THROTTLE_BACKOFF_MAX), stop=self._stop)
            except Exception as exc:  # the emulator went away or refused a call: log and keep polling
                if self._stop.is_set():
                    return
                self.journal.record("sqs.poller_error", mapping=self.config.uuid, error=repr(exc))
                self._stop.wait(0.5)

    def _receive(self, count: int) -> list[dict[str, Any]]:
        response = self._sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=max(1, min(10, count)),
            WaitTimeSeconds=self.receive_wait_seconds,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
        )
        messages: list[dict[str, Any]] = response.get("Messages", [])
        return messages

    def _collect(self) -> list[dict[str, Any]]:
        batch_size, window = self.config.batch_size, self.config.window
        batch = self._receive(batch_size)
        if not batch or window <= 0 or len(batch) >= batch_size:
            return batch
        window_ends = self.clock.now() + window
        while len(batch) < batch_size and self.clock.now() < window_ends and not self._stop.is_set():
            batch.extend(self._receive(batch_size - len(batch)))
        return batch

    def _record(self, message: dict[str, Any]) -> dict[str, Any]:
        return {
            "messageId": message["MessageId"],
            "receiptHandle": message["ReceiptHandle"],
            "body": message["Body"],
            "attributes": message.get("Attributes", {}),
            "messageAttributes": _lambda_message_attributes(message.get("MessageAttributes", {})),
            "md5OfBody": message.get("MD5OfBody"),
            "eventSource": "aws:sqs",
            "eventSourceARN": self.config.queue_arn,
            "awsRegion": self.region,
        }

    def _matches(self, record: dict[str, Any]) -> bool:
        if not self.config.filters:
            return True
        candidate = dict(record)
        try:
            candidate["body"] = json.loads(record["body"])
        except ValueError:
            candidate["body"] = record["body"]
        return passes(self.config.filters, candidate)

    def _deliver(self, messages: list[dict[str, Any]]) -> bool:
        """Invoke the function with the batch; False when Lambda throttled it (the batch stays)."""
        records = [self._record(m) for m in messages]
        selected = [r for r in records if self._matches(r)]
        dropped = [r for r in records if r not in selected]
        self.stats.add(records_in=len(records), records_filtered_out=len(dropped))
        if dropped:
            self._delete(dropped)
        if not selected:
            return True
        self.stats.enter(len(selected))
        try:
            result = self.runtime.invoke(self.config.function, {"Records": selected})
        except ThrottledError as throttle:
            # Not deleted, not made visible: back after the visibility timeout, the receive counted.
            # Lambda counts no invocation for a throttled request.
            self.stats.add(invocations=-1, throttles=1, records_returned=len(selected))
            self.journal.record(
                "sqs.throttled",
                mapping=self.config.uuid,
                messages=[r["messageId"] for r in selected],
                reserved=throttle.reserved,
            )
            return False
        finally:
            self.stats.leave()
        self._settle(selected, result)
        return True

    def _settle(self, records: list[dict[str, Any]], result: InvocationResult) -> None:
        if not result.ok:
            self.stats.add(function_errors=1, records_returned=len(records))
            self.journal.record(
                "sqs.function_error",
                mapping=self.config.uuid,
                messages=[r["messageId"] for r in records],
                error=result.error_type,
                message=result.error_message,
            )
            return
        failures = self._reported_failures(result.payload)
        if not self.config.report_failures:
            if failures:
                # The mapping does not read the response: these messages are deleted all the same.
                self.stats.add(ignored_reported_failures=len(failures))
                self.journal.record(
                    "sqs.reported_failures_ignored", mapping=self.config.uuid, messages=sorted(failures)
                )
            self._handled.put(records)
            return
        ids = {r["messageId"] for r in records}
        if failures is None or not failures <= ids:
            # Unparseable response, null/empty identifier or an id not in the batch: whole batch fails.
            self.stats.add(function_errors=1, records_returned=len(records))
            self.journal.record(
                "sqs.invalid_batch_response", mapping=self.config.uuid, payload=result.payload
            )
            return
        done = [r for r in records if r["messageId"] not in failures]
        self.stats.add(records_returned=len(failures), reported_failures=len(failures))
        if done:
            self._handled.put(done)

    @staticmethod
    def _reported_failures(payload: Any) -> set[str] | None:
        """Message ids in batchItemFailures; None when the response is not a valid partial response."""
        if payload is None:
            return set()
        if not isinstance(payload, dict):
            return None
        items = payload.get("batchItemFailures")
        if items is None:
            return set()
        if not isinstance(items, list):
            return None
        ids: set[str] = set()
        for item in items:
            identifier = item.get("itemIdentifier") if isinstance(item, dict) else None
            if not isinstance(identifier, str) or not identifier:
                return None
            ids.add(identifier)
        return ids

    def _delete_handled(self) -> None:
        """Delete handled records as they come, up to ten per call, until ``stop`` has been called."""
        finishing = False
        while not finishing:
            first = self._handled.get()
            if first is None:
                return
            records = list(first)
            while len(records) < 10:
                try:
                    more = self._handled.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    finishing = True
                    break
                records.extend(more)
            try:
                self._delete(records)
            except Exception as exc:  # the emulator went away or refused: the messages come back later
                self.journal.record("sqs.poller_error", mapping=self.config.uuid, error=repr(exc))
                continue
            self.stats.add(records_done=len(records))

    def _delete(self, records: list[dict[str, Any]]) -> None:
        for start in range(0, len(records), 10):
            chunk = records[start : start + 10]
            response = self._sqs.delete_message_batch(
                QueueUrl=self.queue_url,
                Entries=[{"Id": str(i), "ReceiptHandle": r["receiptHandle"]} for i, r in enumerate(chunk)],
            )
            for failure in response.get("Failed", []):
                self.journal.record("sqs.delete_failed", mapping=self.config.uuid, failure=failure)
