"""DynamoDB stream consumers: Lambda event source mappings (and, through the same core, Pipes).

Per shard, records are read in order with the DynamoDB Streams API of the emulator and handled one
batch at a time (ParallelizationFactor 1), which gives the ordering AWS documents per shard.
Lambda's rules (https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html,
services-ddb-params.html, services-ddb-batchfailurereporting.html, services-dynamodb-errors.html):
- ``StartingPosition`` TRIM_HORIZON reads what the stream retains, LATEST only what arrives later;
- records that match no filter are dropped and the checkpoint moves past them;
- a batch is a complete success, or with ReportBatchItemFailures a partial success: Lambda
  checkpoints before the record with the lowest reported SequenceNumber and retries from it; an
  empty or null identifier, or one not in the batch, is a complete failure;
- on a function error with ``BisectBatchOnFunctionError`` the batch is split in two and each half
  retried; splitting does not consume the retry quota. With both settings, a partial response
  bisects at the returned sequence number (only the remaining records are retried);
- ``MaximumRetryAttempts`` and ``MaximumRecordAgeInSeconds`` (-1 = unlimited) bound the retries;
  on exhaustion the batch is discarded, the shard moves on, and an invocation record goes to the
  on-failure destination: metadata only for SQS/SNS, metadata plus the payload for S3.
"""

from __future__ import annotations

import abc
import base64
import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from outreach_tools.localaws.base import Journal, SourceStats, arn_parts, client, iso_timestamp
from outreach_tools.localaws.clock import VirtualClock
from outreach_tools.localaws.patterns import compile_filters, passes
from outreach_tools.localaws.runtime import FunctionRuntime

POLL_INTERVAL_REAL_SECONDS = 0.25  # Lambda polls each shard about four times per second


def _jsonable(value: Any) -> Any:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, datetime):
        return int(value.timestamp())
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v) for v in value]
    return value


def sequence_number(record: dict[str, Any]) -> str:
    return str(record["dynamodb"]["SequenceNumber"])


@dataclass
class Outcome:
    """How a delivery of a batch went."""

    ok: bool
    failed_from: int | None = None  # index of the first record to retry after a partial success
    error_type: str | None = None
    error_message: str | None = None
    response: dict[str, Any] | None = None
    request_id: str | None = None


@dataclass
class _Part:
    records: list[dict[str, Any]]
    retries: int = 0
    invocations: int = 0


class ShardConsumer:
    """Reads one shard in order and hands batches to ``deliver`` with the retry/bisect/discard rules."""

    def __init__(
        self,
        *,
        name: str,
        streams: Any,
        stream_arn: str,
        shard_id: str,
        starting_position: str,
        batch_size: int,
        window: float,
        filters: list[dict[str, Any]],
        bisect: bool,
        maximum_retry_attempts: int,
        maximum_record_age: int,
        clock: VirtualClock,
        stats: SourceStats,
        journal: Journal,
        deliver: Callable[[list[dict[str, Any]]], Outcome],
        discard: Callable[[list[dict[str, Any]], str, Outcome, int], None],
        stop: threading.Event,
        after_sequence_number: str | None = None,
    ) -> None:
        self.name = name
        self.streams = streams
        self.stream_arn = stream_arn
        self.shard_id = shard_id
        self.starting_position = starting_position
        self.batch_size = batch_size
        self.window = window
        self.filters = filters
        self.bisect = bisect
        self.maximum_retry_attempts = maximum_retry_attempts
        self.maximum_record_age = maximum_record_age
        self.clock = clock
        self.stats = stats
        self.journal = journal
        self.deliver = deliver
        self.discard = discard
        self.stop = stop
        self.checkpoint = after_sequence_number  # last sequence number done with (success or discard)
        self._iterator: str | None = None
        self._pending: list[dict[str, Any]] = []
        self._first_pending_seen: float | None = None

    def _open_iterator(self) -> str:
        if self.checkpoint is not None:
            response = self.streams.get_shard_iterator(
                StreamArn=self.stream_arn,
                ShardId=self.shard_id,
                ShardIteratorType="AFTER_SEQUENCE_NUMBER",
                SequenceNumber=self.checkpoint,
            )
        else:
            response = self.streams.get_shard_iterator(
                StreamArn=self.stream_arn, ShardId=self.shard_id, ShardIteratorType=self.starting_position
            )
        return str(response["ShardIterator"])

    def _read(self) -> None:
        if self._iterator is None:
            self._iterator = self._open_iterator()
        response = self.streams.get_records(ShardIterator=self._iterator, Limit=1000)
        self._iterator = response.get("NextShardIterator")
        for raw in response.get("Records", []):
            record = _jsonable(raw)
            record["eventSourceARN"] = self.stream_arn
            self.stats.add(records_in=1)
            if passes(self.filters, record):
                self._pending.append(record)
            else:
                # Dropped: never delivered; a later checkpoint moves past it (re-reads drop it again).
                self.stats.add(records_filtered_out=1)

    def run(self) -> None:
        while not self.stop.is_set():
            if len(self._pending) < self.batch_size:
                self._read()
            if not self._pending:
                self._first_pending_seen = None
                self.stop.wait(POLL_INTERVAL_REAL_SECONDS)
                continue
            if self._first_pending_seen is None:
                self._first_pending_seen = self.clock.now()
            waited = self.clock.now() - self._first_pending_seen
            if len(self._pending) < self.batch_size and waited < self.window:
                self.stop.wait(min(POLL_INTERVAL_REAL_SECONDS, self.clock.real_seconds(self.window - waited)))
                continue
            batch = self._take_batch()
            self._first_pending_seen = None
            self._process(batch)

    def _take_batch(self) -> list[dict[str, Any]]:
        batch, self._pending = self._pending[: self.batch_size], self._pending[self.batch_size :]
        return batch

    def _too_old(self, records: list[dict[str, Any]]) -> bool:
        if self.maximum_record_age < 0:
            return False
        oldest = min(float(r["dynamodb"].get("ApproximateCreationDateTime", 0)) for r in records)
        return self.clock.now() - oldest > self.maximum_record_age

    def _process(self, batch: list[dict[str, Any]]) -> None:
        queue: list[_Part] = [_Part(batch)]
        while queue and not self.stop.is_set():
            part = queue.pop(0)
            if self._too_old(part.records):
                self._give_up(part, "RecordAgeExceeded", Outcome(ok=False))
                continue
            self.stats.enter(len(part.records))
            try:
                outcome = self.deliver(part.records)
            finally:
                self.stats.leave()
            part.invocations += 1
            if outcome.ok and outcome.failed_from is None:
                self._done(part.records)
                self.stats.add(records_done=len(part.records))
                continue
            self.stats.add(function_errors=0 if outcome.ok else 1)
            if outcome.ok and outcome.failed_from is not None:
                # Partial success: everything before the lowest reported record is checkpointed.
                done, rest = part.records[: outcome.failed_from], part.records[outcome.failed_from :]
                self._done(done)
                self.stats.add(records_done=len(done), reported_failures=1)
                remaining = _Part(rest, part.retries, part.invocations)
            elif self.bisect and len(part.records) > 1:
                middle = len(part.records) // 2
                first = _Part(part.records[:middle], part.retries)
                second = _Part(part.records[middle:], part.retries)
                queue[:0] = [first, second]
                self.stats.add(bisections=1)
                continue
            else:
                remaining = _Part(part.records, part.retries, part.invocations)
            remaining.retries += 1
            if 0 <= self.maximum_retry_attempts < remaining.retries:
                self._give_up(remaining, "RetryAttemptsExhausted", outcome)
                continue
            self.stats.add(retries=1)
            queue.insert(0, remaining)

    def _done(self, records: list[dict[str, Any]]) -> None:
        if records:
            self.checkpoint = sequence_number(records[-1])

    def _give_up(self, part: _Part, condition: str, outcome: Outcome) -> None:
        # The effect (the on-failure record) comes before the counters that report it, so a reader
        # that sees the count also sees the record.
        self.discard(part.records, condition, outcome, part.invocations)
        self._done(part.records)
        self.journal.record(
            "stream.discarded",
            source=self.name,
            condition=condition,
            sequence_numbers=[sequence_number(r) for r in part.records],
        )
        self.stats.add(discarded_batches=1, discarded_records=len(part.records))


class StreamSource(abc.ABC):
    """Common shard management for a Lambda stream mapping or a pipe with a DynamoDB stream source."""

    def __init__(
        self,
        *,
        name: str,
        endpoint: str,
        stream_arn: str,
        starting_position: str,
        clock: VirtualClock,
        journal: Journal | None,
        checkpoints: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.stream_arn = stream_arn
        self.region = arn_parts(stream_arn)[1]
        self.starting_position = starting_position
        self.clock = clock
        self.journal = journal or Journal()
        self.stats = SourceStats()
        self.endpoint = endpoint
        self._streams = client("dynamodbstreams", endpoint, self.region)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.consumers: dict[str, ShardConsumer] = {}
        self._initial_checkpoints = dict(checkpoints or {})

    def checkpoints(self) -> dict[str, str]:
        return {shard: c.checkpoint for shard, c in self.consumers.items() if c.checkpoint is not None}

    # Set by each source from its applied configuration.
    batch_size: int
    window: float
    filters: Any
    bisect: bool
    maximum_retry_attempts: int
    maximum_record_age: int

    @abc.abstractmethod
    def _deliver(self, records: list[dict[str, Any]]) -> Outcome:
        """Hand one batch to the target (function or queue) and say how it went."""

    @abc.abstractmethod
    def _discard(
        self, shard_id: str, records: list[dict[str, Any]], condition: str, outcome: Outcome, invocations: int
    ) -> None:
        """Send records that exhausted retries or age to the on-failure destination."""

    def _consumer(self, shard_id: str) -> ShardConsumer:
        return ShardConsumer(
            name=self.name,
            streams=self._streams,
            stream_arn=self.stream_arn,
            shard_id=shard_id,
            starting_position=self.starting_position,
            batch_size=self.batch_size,
            window=self.window,
            filters=self.filters,
            bisect=self.bisect,
            maximum_retry_attempts=self.maximum_retry_attempts,
            maximum_record_age=self.maximum_record_age,
            clock=self.clock,
            stats=self.stats,
            journal=self.journal,
            deliver=self._deliver,
            discard=lambda records, condition, outcome, invocations: self._discard(
                shard_id, records, condition, outcome, invocations
            ),
            stop=self._stop,
            after_sequence_number=self._initial_checkpoints.get(shard_id),
        )

    def start(self) -> None:
        description = self._streams.describe_stream(StreamArn=self.stream_arn)["StreamDescription"]
        for shard in description.get("Shards", []):
            consumer = self._consumer(shard["ShardId"])
            self.consumers[shard["ShardId"]] = consumer
            thread = threading.Thread(
                target=self._run, args=(consumer,), name=f"shard-{self.name}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def _run(self, consumer: ShardConsumer) -> None:
        while not self._stop.is_set():
            try:
                consumer.run()
            except Exception as exc:  # the emulator refused a call: keep the shard, try again shortly
                if self._stop.is_set():
                    return
                self.journal.record("stream.poller_error", source=self.name, error=repr(exc))
                self._stop.wait(0.5)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)

    def batch_info(self, shard_id: str, records: list[dict[str, Any]]) -> dict[str, Any]:
        times = [float(r["dynamodb"].get("ApproximateCreationDateTime", 0)) for r in records]
        return {
            "shardId": shard_id,
            "startSequenceNumber": sequence_number(records[0]),
            "endSequenceNumber": sequence_number(records[-1]),
            "approximateArrivalOfFirstRecord": iso_timestamp(min(times)),
            "approximateArrivalOfLastRecord": iso_timestamp(max(times)),
            "batchSize": len(records),
            "streamArn": self.stream_arn,
        }


class StreamMappingPoller(StreamSource):
    """A Lambda event source mapping on a DynamoDB stream."""

    def __init__(
        self,
        mapping: dict[str, Any],
        runtime: FunctionRuntime,
        clock: VirtualClock,
        endpoint: str,
        *,
        journal: Journal | None = None,
        checkpoints: dict[str, str] | None = None,
    ) -> None:
        super().__init__(
            name=mapping["UUID"],
            endpoint=endpoint,
            stream_arn=mapping["EventSourceArn"],
            starting_position=mapping.get("StartingPosition") or "TRIM_HORIZON",
            clock=clock,
            journal=journal,
            checkpoints=checkpoints,
        )
        self.mapping = mapping
        self.uuid: str = mapping["UUID"]
        self.runtime = runtime
        self.function: str = mapping["FunctionArn"]
        self.batch_size = int(mapping.get("BatchSize") or 100)
        self.window = float(mapping.get("MaximumBatchingWindowInSeconds") or 0)
        self.filters = compile_filters(mapping.get("FilterCriteria"))
        self.bisect = bool(mapping.get("BisectBatchOnFunctionError"))
        retries = mapping.get("MaximumRetryAttempts")
        age = mapping.get("MaximumRecordAgeInSeconds")
        self.maximum_retry_attempts = -1 if retries is None else int(retries)
        self.maximum_record_age = -1 if age is None else int(age)
        self.report_failures = "ReportBatchItemFailures" in (mapping.get("FunctionResponseTypes") or [])
        destination = ((mapping.get("DestinationConfig") or {}).get("OnFailure") or {}).get("Destination")
        self.on_failure: str | None = destination or None

    def _deliver(self, records: list[dict[str, Any]]) -> Outcome:
        result = self.runtime.invoke(self.function, {"Records": records})
        if not result.ok:
            return Outcome(
                ok=False,
                error_type=result.error_type,
                error_message=result.error_message,
                request_id=result.request_id,
            )
        if not self.report_failures:
            return Outcome(ok=True, request_id=result.request_id)
        failed_from = self._failed_from(records, result.payload)
        if failed_from == -1:
            self.journal.record("stream.invalid_batch_response", source=self.uuid, payload=result.payload)
            return Outcome(
                ok=False,
                error_type="InvalidBatchItemFailures",
                error_message=json.dumps(result.payload)[:500],
                request_id=result.request_id,
            )
        return Outcome(
            ok=True, failed_from=failed_from, response=result.payload, request_id=result.request_id
        )

    @staticmethod
    def _failed_from(records: list[dict[str, Any]], payload: Any) -> int | None:
        """Index of the lowest reported record; None for complete success; -1 for an invalid response."""
        if payload is None:
            return None
        if not isinstance(payload, dict):
            return -1
        items = payload.get("batchItemFailures")
        if items is None or items == []:
            return None
        if not isinstance(items, list):
            return -1
        positions = {sequence_number(r): i for i, r in enumerate(records)}
        found = []
        for item in items:
            identifier = item.get("itemIdentifier") if isinstance(item, dict) else None
            if not isinstance(identifier, str) or identifier not in positions:
                return -1
            found.append(positions[identifier])
        return min(found)

    def _discard(
        self,
        shard_id: str,
        records: list[dict[str, Any]],
        condition: str,
        outcome: Outcome,
        invocations: int,
    ) -> None:
        """Send the invocation record of a discarded batch to the on-failure destination."""
        now = self.clock.now()
        record: dict[str, Any] = {
            "requestContext": {
                "requestId": outcome.request_id or str(uuid.uuid4()),
                "functionArn": self.function,
                "condition": condition,
                "approximateInvokeCount": invocations,
            },
            "responseContext": {
                "statusCode": 200,
                "executedVersion": "$LATEST",
                "functionError": "Unhandled" if not outcome.ok else "",
            },
            "version": "1.0",
            "timestamp": iso_timestamp(now),
            "DDBStreamBatchInfo": self.batch_info(shard_id, records),
        }
        if self.on_failure is None:
            self.journal.record("stream.discarded_without_destination", source=self.uuid, record=record)
            return
        service, region, _, resource = arn_parts(self.on_failure)
        if service == "s3":
            record["payload"] = json.dumps({"Records": records})
            stamp = datetime.fromtimestamp(now, tz=UTC)
            key = (
                f"aws/lambda/{self.uuid}/{shard_id}/{stamp:%Y/%m/%d}/{stamp:%Y-%m-%dT%H.%M.%S}-{uuid.uuid4()}"
            )
            client("s3", self.endpoint, self.region).put_object(
                Bucket=resource, Key=key, Body=json.dumps(record).encode(), ContentType="application/json"
            )
            self.journal.record("stream.on_failure_s3", source=self.uuid, bucket=resource, key=key)
        elif service == "sqs":
            sqs = client("sqs", self.endpoint, region)
            url = sqs.get_queue_url(QueueName=resource)["QueueUrl"]
            sqs.send_message(QueueUrl=url, MessageBody=json.dumps(record))
            self.journal.record("stream.on_failure_sqs", source=self.uuid, queue=resource)
        elif service == "sns":
            client("sns", self.endpoint, region).publish(TopicArn=self.on_failure, Message=json.dumps(record))
            self.journal.record("stream.on_failure_sns", source=self.uuid, topic=self.on_failure)
        else:
            self.journal.record(
                "stream.on_failure_unsupported", source=self.uuid, destination=self.on_failure
            )
