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

The SQS target's ``SqsQueueParameters.MessageGroupId`` is sent with every message. It may be a dynamic
path parameter, a whole value of the form ``$.a.b`` replaced by the record's value at that path
("Dynamic path parameters", https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-pipes-event-target.html);
the scrape pipe names the task's tenant this way (its row's ``message_group``), the tenant of SQS
fair queues. Unconfirmed: the API reference
calls the field "the FIFO message group ID"
(https://docs.aws.amazon.com/eventbridge/latest/pipes-reference/API_PipeTargetSqsQueueParameters.html)
and does not say a pipe passes it to a standard queue, which EventBridge rules' SqsParameters do for
"an Amazon SQS fair or FIFO queue" (https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_SqsParameters.html);
also unconfirmed is what a pipe does with a path the record does not have: here that record fails
at the target, like a refused entry, so it is retried and finally described in the pipe's DLQ.
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

    def _entry(self, record: dict[str, Any]) -> dict[str, str]:
        """The message for one record: its body and, with ``MessageGroupId`` set, its group.

        Raises KeyError naming a dynamic path the record does not hold as a string.
        """
        template = self.config.template
        entry = {"MessageBody": render_template(template, record) if template else json.dumps(record)}
        group = self.config.message_group
        if group is not None and group.startswith("$."):
            value = _lookup(record, group[2:])
            if not isinstance(value, str):
                raise KeyError(f"MessageGroupId path {group} is not a string in the record")
            group = value
        if group is not None:
            entry["MessageGroupId"] = group
        return entry

    def _send(self, records: list[dict[str, Any]]) -> dict[int, str]:
        """SendMessageBatch in chunks of 10; the index of each record not sent to the queue, with why."""
        failed: dict[int, str] = {}
        entries: dict[int, dict[str, str]] = {}
        for index, record in enumerate(records):
            try:
                entries[index] = self._entry(record)
            except KeyError as exc:  # outcome: the record fails at the target (see the module docstring)
                failed[index] = f"InvalidParameter: {exc.args[0]}"
        indexes = sorted(entries)
        for start in range(0, len(indexes), 10):
            chunk = indexes[start : start + 10]
            try:
                response = self._sqs.send_message_batch(
                    QueueUrl=self.target_url,
                    Entries=[{"Id": str(i), **entries[i]} for i in chunk],
                )
            except Exception as exc:  # the whole call failed: every record of the chunk goes again
                failed.update({i: f"{type(exc).__name__}: {exc}" for i in chunk})
                continue
            for entry in response.get("Failed", []):
                failed[int(entry["Id"])] = f"{entry.get('Code')}: {entry.get('Message')}"
        return failed

    def _deliver(self, records: list[dict[str, Any]]) -> Outcome:
        failed = self._send(records)
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
