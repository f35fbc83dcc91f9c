"""EventBridge Pipes with a DynamoDB stream source and an SQS target, as DescribePipe reports them.

Behaviour (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-pipes-dynamodb.html,
eb-pipes-event-filtering.html, eb-pipes-input-transformation.html, eb-pipes-batching-concurrency.html):
records are filtered with the pipe's FilterCriteria, each remaining record is shaped by the target's
InputTemplate and sent to the queue; a failed batch is retried (MaximumRetryAttempts,
MaximumRecordAgeInSeconds; -1 = unlimited), split in two on failure with
OnPartialBatchItemFailure = AUTOMATIC_BISECT, and finally described in a message to the pipe's
DeadLetterConfig queue (metadata, not the records), while the shard moves on.

A target that partly fails has only the remainder retried ("Partial batch failure",
eb-pipes-batching-concurrency.html): the records whose SendMessageBatch entries came back in
``Failed`` go again, the sent ones are not sent twice. A call that fails as a whole fails every record
of its chunk. (A Lambda target's ``batchItemFailures`` is the same rule for functions; pipes here only
have SQS targets.)
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from embedded_aws.applied_config import PipeConfig
from embedded_aws.base import Journal, arn_parts, client, iso_timestamp
from embedded_aws.clock import VirtualClock
from embedded_aws.stream_shards import Outcome, StreamSource

_PLACEHOLDER = re.compile(r"<\$\.([A-Za-z0-9_.\-\[\]]+)>")


def _lookup(record: Any, path: str) -> Any:
    value = record
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return None
    return value


def render_template(template: str, record: dict[str, Any]) -> str:
    """Fill ``<$.json.path>`` placeholders: inside quotes as text, outside quotes as JSON values."""
    out: list[str] = []
    position = 0
    for match in _PLACEHOLDER.finditer(template):
        before = template[position : match.start()]
        out.append(before)
        quoted = "".join(out).replace('\\"', "").count('"') % 2 == 1
        value = _lookup(record, match.group(1))
        if quoted:
            text = value if isinstance(value, str) else json.dumps(value)
            out.append(json.dumps(text)[1:-1])
        else:
            out.append(json.dumps(value))
        position = match.end()
    out.append(template[position:])
    return "".join(out)


class PipePoller(StreamSource):
    """One pipe: DynamoDB stream -> (filter) -> input template -> SQS queue."""

    def __init__(
        self,
        config: PipeConfig,
        clock: VirtualClock,
        endpoint: str,
        *,
        journal: Journal | None = None,
        checkpoints: dict[str, str] | None = None,
    ) -> None:
        super().__init__(
            name=config.name,
            endpoint=endpoint,
            stream_arn=config.stream_arn,
            settings=config.read,
            clock=clock,
            journal=journal,
            checkpoints=checkpoints,
        )
        self.config = config
        _, region, account, queue = arn_parts(config.target)
        self._sqs = client("sqs", endpoint, region)
        self.target_url: str = self._sqs.get_queue_url(QueueName=queue, QueueOwnerAWSAccountId=account)[
            "QueueUrl"
        ]

    def _body(self, record: dict[str, Any]) -> str:
        template = self.config.template
        return render_template(template, record) if template else json.dumps(record)

    def _send(self, bodies: list[str]) -> dict[int, str]:
        """SendMessageBatch in chunks of 10; the index of each body that did not reach the queue, with why."""
        failed: dict[int, str] = {}
        for start in range(0, len(bodies), 10):
            chunk = bodies[start : start + 10]
            try:
                response = self._sqs.send_message_batch(
                    QueueUrl=self.target_url,
                    Entries=[{"Id": str(i), "MessageBody": body} for i, body in enumerate(chunk)],
                )
            except Exception as exc:  # the whole call failed: every record of the chunk goes again
                failed.update({start + i: f"{type(exc).__name__}: {exc}" for i in range(len(chunk))})
                continue
            for entry in response.get("Failed", []):
                failed[start + int(entry["Id"])] = f"{entry.get('Code')}: {entry.get('Message')}"
        return failed

    def _deliver(self, records: list[dict[str, Any]]) -> Outcome:
        failed = self._send([self._body(r) for r in records])
        if not failed:
            return Outcome(ok=True)
        reasons = sorted(set(failed.values()))
        if len(failed) == len(records):
            return Outcome(ok=False, error_type="SendMessageBatchFailed", error_message="; ".join(reasons))
        self.journal.record(
            "pipe.partial_failure", source=self.name, failed=len(failed), sent=len(records) - len(failed)
        )
        return Outcome(
            ok=True,
            failed_items=tuple(sorted(failed)),
            error_type="SendMessageBatchFailed",
            error_message="; ".join(reasons),
        )

    def _discard(
        self, shard_id: str, records: list[dict[str, Any]], condition: str, outcome: Outcome, invocations: int
    ) -> None:
        record = {
            "context": {
                "pipeArn": self.config.arn,
                "condition": condition,
                "errorType": outcome.error_type,
                "errorMessage": outcome.error_message,
                "approximateInvokeCount": invocations,
                "requestId": str(uuid.uuid4()),
            },
            "timestamp": iso_timestamp(self.clock.now()),
            "DDBStreamBatchInfo": self.batch_info(shard_id, records),
        }
        dead_letter = self.config.dead_letter
        if dead_letter is None:
            self.journal.record("pipe.discarded_without_dlq", source=self.name, record=record)
            return
        service, region, account, resource = arn_parts(dead_letter)
        if service == "sqs":
            url = self._sqs.get_queue_url(QueueName=resource, QueueOwnerAWSAccountId=account)["QueueUrl"]
            self._sqs.send_message(QueueUrl=url, MessageBody=json.dumps(record))
        else:
            client("sns", self.endpoint, region).publish(TopicArn=dead_letter, Message=json.dumps(record))
        self.journal.record("pipe.dead_lettered", source=self.name, destination=dead_letter)
