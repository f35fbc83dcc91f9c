"""Stream consumer: every scrape task that became Pending becomes one SQS message. It scrapes nothing.

Records are handled in the order the shard delivered them. At the first record that cannot be handled
(unparseable, or its message could not be sent) the handler stops and returns that record's sequence
number: Lambda checkpoints there and retries from it, so nothing after it has been sent yet and nothing
before it is sent twice by this invocation. Powertools' BatchProcessor is not used for this because it
carries on past a failed stream record and reports every failure, which lets later records' side
effects run before the earlier failure is retried.
https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-batchfailurereporting.html

Each message carries the task's tenant as its message group, the tenant SQS fair queues share the
queue by: the ``message_group`` of the record's new image, or its job for a row written before rows
named one (:mod:`outreach.scrape_tenants`, :mod:`outreach.scrape_messages`). A scrape task whose record
names no job, or a tenant that is not one of its job's, is an unparseable record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext
from botocore.exceptions import BotoCoreError, ClientError

from outreach import clients, config
from outreach.errors import MalformedFieldError, StreamBatchError, UnparseableRecordError
from outreach.observability import MetricUnit, logger, metrics
from outreach.scrape_messages import scrape_batch_entry
from outreach.scrape_tenants import row_tenant
from outreach.stream_records import parse_task_change, sequence_number

SEND_BATCH_LIMIT = 10
# Entries SQS rejected with a retryable (sender-fault false) error are resent this many times before
# the record is handed back to the stream's retry.
_SEND_RETRIES = 2


@dataclass(frozen=True)
class _Dispatch:
    sequence_number: str
    task_id: str
    message_group: str


def _send(dispatches: Sequence[_Dispatch]) -> str | None:
    """Send one message per dispatch; return the sequence number of the first unsent one, if any."""
    queue_url = config.scrape_queue_url()
    for start in range(0, len(dispatches), SEND_BATCH_LIMIT):
        chunk = list(dispatches[start : start + SEND_BATCH_LIMIT])
        unsent = _send_chunk(queue_url, chunk)
        if unsent is not None:
            return unsent
    return None


def _send_chunk(queue_url: str, chunk: list[_Dispatch]) -> str | None:
    entries = {str(i): dispatch for i, dispatch in enumerate(chunk)}
    for _ in range(_SEND_RETRIES + 1):
        try:
            response = clients.sqs().send_message_batch(
                QueueUrl=queue_url,
                Entries=[
                    scrape_batch_entry(entry_id, dispatch.task_id, dispatch.message_group)
                    for entry_id, dispatch in entries.items()
                ],
            )
        except (ClientError, BotoCoreError):  # outcome: the chunk's first record is reported
            logger.exception(
                "SendMessageBatch failed", extra={"first_sequence_number": chunk[0].sequence_number}
            )
            return _first(entries)
        metrics.add_metric(
            name="TasksDispatched", unit=MetricUnit.Count, value=len(response.get("Successful", []))
        )
        failed = response.get("Failed", [])
        if not failed:
            return None
        for failure in failed:
            logger.warning(
                "SQS rejected a dispatch",
                extra={
                    "task_id": entries[failure["Id"]].task_id,
                    "code": failure.get("Code"),
                    "sender_fault": failure.get("SenderFault"),
                },
            )
        entries = {failure["Id"]: entries[failure["Id"]] for failure in failed}
        if any(failure.get("SenderFault") for failure in failed):
            break
    return _first(entries)


def _first(entries: Mapping[str, _Dispatch]) -> str:
    """The earliest record (in shard order) among unsent entries; entry ids are chunk positions."""
    return entries[min(entries, key=int)].sequence_number


def _failure(sequence: str) -> dict[str, list[dict[str, str]]]:
    metrics.add_metric(name="StreamRecordsReturned", unit=MetricUnit.Count, value=1)
    return {"batchItemFailures": [{"itemIdentifier": sequence}]}


def _dispatchable(record: Mapping[str, Any]) -> _Dispatch | None:
    """The message to send for the record, if its task became Pending; a scrape task that became Pending
    must name its job, and may name one of its job's tenants (the message group)."""
    change = parse_task_change(record)
    if not change.scrape_task_became_pending:
        return None
    if not change.job_id:
        raise UnparseableRecordError("scrape task without job_id")
    try:
        group = row_tenant(change.message_group, change.job_id)
    except MalformedFieldError as exc:
        raise UnparseableRecordError(str(exc)) from exc
    return _Dispatch(sequence_number=change.sequence_number, task_id=change.task_id, message_group=group)


def dispatch_records(records: Sequence[Mapping[str, Any]]) -> dict[str, list[dict[str, str]]]:
    pending: list[_Dispatch] = []
    for record in records:
        seq = sequence_number(record)
        if seq is None:
            # Lambda treats an empty itemIdentifier as a failure of the whole batch; raising says the
            # same thing explicitly, and bisect narrows the batch down to this record.
            raise StreamBatchError(f"stream record without SequenceNumber: eventID={record.get('eventID')!r}")
        try:
            dispatch = _dispatchable(record)
        except UnparseableRecordError as exc:
            logger.error("unparseable stream record", extra={"sequence_number": seq, "reason": str(exc)})
            unsent = _send(pending)
            return _failure(unsent if unsent is not None else seq)
        if dispatch is not None:
            pending.append(dispatch)
        else:
            metrics.add_metric(name="StreamRecordsIgnored", unit=MetricUnit.Count, value=1)
    unsent = _send(pending)
    if unsent is not None:
        return _failure(unsent)
    return {"batchItemFailures": []}


@metrics.log_metrics
@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, list[dict[str, str]]]:
    config.for_dispatcher()
    records = event.get("Records")
    if not isinstance(records, list):
        raise StreamBatchError("event has no Records list")
    return dispatch_records(records)
