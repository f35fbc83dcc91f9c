"""Reading a DynamoDB stream shard by shard, in order, with the stream sources' retry rules.

The core shared by Lambda's stream event source mappings (``stream_poller``) and EventBridge Pipes
(``pipes``). Per shard, records are read in order with the DynamoDB Streams API of the emulator and
handled one batch at a time (ParallelizationFactor 1), which gives the ordering AWS documents per
shard. The rules, common to both services
(https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html, services-ddb-params.html,
services-dynamodb-errors.html; https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-pipes-dynamodb.html):
- ``StartingPosition`` TRIM_HORIZON reads what the stream retains, LATEST only what arrives later;
- records that match no filter are dropped and the checkpoint moves past them;
- a partial success checkpoints before the first failed record and retries from it;
- a failed batch with bisection is split in two and each half retried; splitting does not consume
  the retry quota;
- ``MaximumRetryAttempts`` and ``MaximumRecordAgeInSeconds`` (-1 = unlimited) bound the retries; on
  exhaustion the batch is handed to the source's discard (its on-failure destination) and the shard
  moves on;
- a throttled delivery (the function did not run) is tried again after a wait (1 s doubling up to
  60 s, undocumented timings) until it runs or its records are too old; it does not use up
  ``MaximumRetryAttempts`` (services-dynamodb-errors.html speaks of function errors; that throttles
  are outside the retry count is unconfirmed);
- a target that reports some items failed (``failed_items``: a pipe's SQS target answering
  SendMessageBatch with ``Failed`` entries) has only those items retried
  (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-pipes-batching-concurrency.html,
  "Partial batch failure"); the checkpoint stays before the first of them.
"""

from __future__ import annotations

import abc
import base64
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from embedded_aws.applied_config import StreamReadSettings
from embedded_aws.base import Journal, SourceStats, arn_parts, client, iso_timestamp
from embedded_aws.clock import VirtualClock
from embedded_aws.patterns import passes

POLL_INTERVAL_REAL_SECONDS = 0.25  # Lambda polls each shard about four times per second
THROTTLE_BACKOFF_FIRST = 1.0
THROTTLE_BACKOFF_MAX = 60.0


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
    failed_items: tuple[int, ...] | None = None  # indices of the only records to retry (pipe targets)
    throttled: bool = False  # the function did not run: retried without using up the retry quota
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
        settings: StreamReadSettings,
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
        self.settings = settings
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
                StreamArn=self.stream_arn,
                ShardId=self.shard_id,
                ShardIteratorType=self.settings.starting_position,
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
            if passes(self.settings.filters, record):
                self._pending.append(record)
            else:
                # Dropped: never delivered; a later checkpoint moves past it (re-reads drop it again).
                self.stats.add(records_filtered_out=1)

    def run(self) -> None:
        batch_size, window = self.settings.batch_size, self.settings.window
        while not self.stop.is_set():
            if len(self._pending) < batch_size:
                self._read()
            if not self._pending:
                self._first_pending_seen = None
                self.stop.wait(POLL_INTERVAL_REAL_SECONDS)
                continue
            if self._first_pending_seen is None:
                self._first_pending_seen = self.clock.now()
            waited = self.clock.now() - self._first_pending_seen
            if len(self._pending) < batch_size and waited < window:
                self.stop.wait(min(POLL_INTERVAL_REAL_SECONDS, self.clock.real_seconds(window - waited)))
                continue
            batch = self._take_batch()
            self._first_pending_seen = None
            self._process(batch)

    def _take_batch(self) -> list[dict[str, Any]]:
        size = self.settings.batch_size
        batch, self._pending = self._pending[:size], self._pending[size:]
        return batch

    def _too_old(self, records: list[dict[str, Any]]) -> bool:
        maximum_age = self.settings.maximum_record_age
        if maximum_age < 0:  # unlimited
            return False
        oldest = min(float(r["dynamodb"].get("ApproximateCreationDateTime", 0)) for r in records)
        return self.clock.now() - oldest > maximum_age

    def _process(self, batch: list[dict[str, Any]]) -> None:
        queue: list[_Part] = [_Part(batch)]
        throttles_in_a_row = 0
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
            if outcome.throttled:
                throttles_in_a_row += 1
                self.stats.add(invocations=-1, throttles=1)
                backoff = THROTTLE_BACKOFF_FIRST * 2 ** (throttles_in_a_row - 1)
                self.clock.sleep(min(backoff, THROTTLE_BACKOFF_MAX), stop=self.stop)
                queue.insert(0, part)
                continue
            throttles_in_a_row = 0
            part.invocations += 1
            if outcome.ok and outcome.failed_items is not None:
                # Only the failed items go again; the checkpoint stays before the first of them.
                failed = set(outcome.failed_items)
                done = [r for i, r in enumerate(part.records) if i not in failed]
                self._done(part.records[: min(failed)])
                self.stats.add(records_done=len(done), reported_failures=len(failed))
                remaining = _Part([part.records[i] for i in sorted(failed)], part.retries, part.invocations)
                remaining.retries += 1
                if 0 <= self.settings.maximum_retry_attempts < remaining.retries:
                    self._give_up(remaining, "RetryAttemptsExhausted", outcome)
                    continue
                self.stats.add(retries=1)
                queue.insert(0, remaining)
                continue
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
            elif self.settings.bisect and len(part.records) > 1:
                middle = len(part.records) // 2
                first = _Part(part.records[:middle], part.retries)
                second = _Part(part.records[middle:], part.retries)
                queue[:0] = [first, second]
                self.stats.add(bisections=1)
                continue
            else:
                remaining = _Part(part.records, part.retries, part.invocations)
            remaining.retries += 1
            if 0 <= self.settings.maximum_retry_attempts < remaining.retries:
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
        settings: StreamReadSettings,
        clock: VirtualClock,
        journal: Journal | None,
        checkpoints: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.stream_arn = stream_arn
        self.region = arn_parts(stream_arn)[1]
        self.settings = settings
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
            settings=self.settings,
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
