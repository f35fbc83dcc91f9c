"""Lambda event source mappings on a DynamoDB stream: invoke the function, read its partial response.

Lambda's rules on top of the shard reading of ``stream_shards``
(https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html, services-ddb-params.html,
services-ddb-batchfailurereporting.html, services-dynamodb-errors.html):
- a batch is a complete success, or with ReportBatchItemFailures a partial success: Lambda
  checkpoints before the record with the lowest reported SequenceNumber and retries from it; an
  empty or null identifier, or one not in the batch, is a complete failure;
- on a function error with ``BisectBatchOnFunctionError`` the batch is split in two and each half
  retried. With both settings, a partial response bisects at the returned sequence number (only the
  remaining records are retried);
- a throttled invocation (the function's reserved concurrency in use, 0 included) is retried until
  it runs or the records are too old, without using up the retry attempts (``stream_shards``);
- a discarded batch sends an invocation record to the on-failure destination: metadata only for
  SQS/SNS, metadata plus the payload for S3.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

from embedded_aws.applied_config import StreamMappingConfig
from embedded_aws.base import Journal, arn_parts, client, iso_timestamp, send_to_queue
from embedded_aws.clock import VirtualClock
from embedded_aws.errors import ThrottledError
from embedded_aws.runtime import FunctionRuntime
from embedded_aws.stream_shards import Outcome, StreamSource, sequence_number


class StreamMappingPoller(StreamSource):
    """A Lambda event source mapping on a DynamoDB stream."""

    def __init__(
        self,
        config: StreamMappingConfig,
        runtime: FunctionRuntime,
        clock: VirtualClock,
        endpoint: str,
        *,
        journal: Journal | None = None,
        checkpoints: dict[str, str] | None = None,
    ) -> None:
        super().__init__(
            name=config.uuid,
            endpoint=endpoint,
            stream_arn=config.stream_arn,
            settings=config.read,
            clock=clock,
            journal=journal,
            checkpoints=checkpoints,
        )
        self.config = config
        self.runtime = runtime

    def _deliver(self, records: list[dict[str, Any]]) -> Outcome:
        try:
            result = self.runtime.invoke(self.config.function, {"Records": records})
        except ThrottledError as throttle:
            self.journal.record("stream.throttled", source=self.name, reserved=throttle.reserved)
            return Outcome(
                ok=False, throttled=True, error_type=ThrottledError.error_type, error_message=str(throttle)
            )
        if not result.ok:
            return Outcome(
                ok=False,
                error_type=result.error_type,
                error_message=result.error_message,
                request_id=result.request_id,
            )
        if not self.config.report_failures:
            return Outcome(ok=True, request_id=result.request_id)
        failed_from = self._failed_from(records, result.payload)
        if failed_from == -1:
            self.journal.record("stream.invalid_batch_response", source=self.name, payload=result.payload)
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
                "functionArn": self.config.function,
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
        destination = self.config.on_failure
        if destination is None:
            self.journal.record("stream.discarded_without_destination", source=self.name, record=record)
            return
        service, region, _, resource = arn_parts(destination)
        if service == "s3":
            record["payload"] = json.dumps({"Records": records})
            stamp = datetime.fromtimestamp(now, tz=UTC)
            prefix = f"aws/lambda/{self.config.uuid}/{shard_id}/{stamp:%Y/%m/%d}"
            key = f"{prefix}/{stamp:%Y-%m-%dT%H.%M.%S}-{uuid.uuid4()}"
            client("s3", self.endpoint, self.region).put_object(
                Bucket=resource, Key=key, Body=json.dumps(record).encode(), ContentType="application/json"
            )
            self.journal.record("stream.on_failure_s3", source=self.name, bucket=resource, key=key)
        elif service == "sqs":
            send_to_queue(self.endpoint, destination, json.dumps(record), {})
            self.journal.record("stream.on_failure_sqs", source=self.name, queue=resource)
        elif service == "sns":
            client("sns", self.endpoint, region).publish(TopicArn=destination, Message=json.dumps(record))
            self.journal.record("stream.on_failure_sns", source=self.name, topic=destination)
        else:
            self.journal.record("stream.on_failure_unsupported", source=self.name, destination=destination)
