"""SQS consumer: one scrape task per message, classified exactly once per delivery.

Per message:
- unreadable (not JSON, no task_id, unknown or non-scrape task): copied to the scrape DLQ with a
  reason and acknowledged: no retry can fix it, nothing is lost, and the DLQ alarm fires;
- task already Finished, Failed or Cancelled: acknowledged, no work (duplicate delivery);
- claim refused because another live delivery holds the task: acknowledged, no work;
- FatalScrapeError: task -> Failed with the reason, acknowledged;
- anything else: the message's visibility is set by the retry schedule, the retry is recorded on the
  task (its error kept, its lease ended: ``task_store.record_retry``), and the message is reported in
  batchItemFailures so SQS delivers it again (DLQ after maxReceiveCount; the scrape reconciler then
  re-queues the task, or fails it once its attempts are used up).
"""

from __future__ import annotations

import json
import time
from enum import StrEnum
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from outreach import clients, config, errors, task_store
from outreach.errors import FatalScrapeError, RetryableScrapeError, ScrapeError, UnreadableMessageError
from outreach.observability import MetricUnit, logger, metrics
from outreach.results import store_result
from outreach.scraping import scrape_site
from outreach.task_model import Kind, Task

# Time kept back from the Lambda deadline for writing the result and the task row.
_WRITE_RESERVE_SECONDS = 20.0


class Outcome(StrEnum):
    FINISHED = "Finished"
    FAILED = "Failed"
    DUPLICATE = "Duplicate"
    BUSY = "Busy"
    UNREADABLE = "Unreadable"


def read_task_id(body: str) -> str:
    """The task id of a message body; any body that cannot be parsed is unreadable, with its reason."""
    try:
        payload = json.loads(body)
    except (json.JSONDecodeError, TypeError) as exc:
        raise UnreadableMessageError("body_not_json") from exc
    except RecursionError as exc:
        raise UnreadableMessageError("body_nested_too_deep") from exc
    except Exception as exc:
        raise UnreadableMessageError(f"body_unparseable: {type(exc).__name__}") from exc
    if not isinstance(payload, dict):
        raise UnreadableMessageError("body_not_object")
    task_id = payload.get("task_id")
    if not isinstance(task_id, str) or not task_id.strip():
        raise UnreadableMessageError("missing_task_id")
    return task_id


def send_to_dlq(record: SQSRecord, reason: str) -> None:
    """Park an unreadable message in the scrape DLQ with why, so a person sees it (DLQ alarm)."""
    clients.sqs().send_message(
        QueueUrl=config.scrape_dlq_url(),
        MessageBody=record.body if record.body else "<empty>",
        MessageAttributes={
            "reason": {"DataType": "String", "StringValue": reason},
            "source_message_id": {"DataType": "String", "StringValue": record.message_id},
            "receive_count": {"DataType": "Number", "StringValue": str(_receive_count(record))},
        },
    )


def _receive_count(record: SQSRecord) -> int:
    try:
        return max(1, int(record.attributes.approximate_receive_count))
    except (KeyError, TypeError, ValueError):  # outcome: a missing count is the first receive
        return 1


def _deadline(context: LambdaContext) -> float:
    remaining = context.get_remaining_time_in_millis() / 1000.0
    return time.monotonic() + max(1.0, remaining - _WRITE_RESERVE_SECONDS)


def _lease_seconds(context: LambdaContext) -> int:
    return int(context.get_remaining_time_in_millis() / 1000) + config.claim_lease_margin_seconds()


def _error_text(exc: BaseException) -> str:
    """``reason: detail`` of a classified failure; the class and message of an unknown one."""
    if isinstance(exc, ScrapeError):
        return str(exc)
    return f"unexpected_error: {type(exc).__name__}: {exc}"


def _prepare_redelivery(record: SQSRecord, claimed: Task | None, exc: BaseException) -> None:
    """Before reporting a retryable failure: set when the message comes back and hand the claim back.

    The retry schedule gives the visibility for this receive (a site's ``Retry-After`` is honoured
    within the schedule). The visibility change comes first: the claim needs no release for this
    message's next receive to take it again (see ``task_store.claim``), so recording the retry only
    helps a duplicate message and keeps the error on the task.
    """
    retry_after = exc.retry_after if isinstance(exc, RetryableScrapeError) else None
    visibility = config.RetrySchedule.from_env().for_receive(_receive_count(record), retry_after)
    clients.sqs().change_message_visibility(
        QueueUrl=config.scrape_queue_url(), ReceiptHandle=record.receipt_handle, VisibilityTimeout=visibility
    )
    logger.info("retry scheduled", extra={"visibility_seconds": visibility, "error": _error_text(exc)})
    if claimed is not None:
        task_store.record_retry(claimed, error=_error_text(exc))


def process_message(record: SQSRecord, context: LambdaContext) -> Outcome:
    try:
        task_id = read_task_id(record.body)
        logger.append_keys(task_id=task_id)
        task = task_store.load_task(task_id, Kind.SCRAPE)
    except UnreadableMessageError as exc:
        logger.error("unreadable message sent to DLQ", extra={"reason": exc.reason})
        send_to_dlq(record, exc.reason)
        return Outcome.UNREADABLE
    except Exception as exc:
        logger.exception("retryable failure before the claim")
        _prepare_redelivery(record, None, exc)
        raise
    logger.append_keys(job_id=task.job_id)
    if task.is_terminal:
        logger.info("duplicate delivery of a terminal task", extra={"status": task.status.value})
        return Outcome.DUPLICATE
    try:
        claimed = task_store.claim(
            task,
            message_id=record.message_id,
            receive_count=_receive_count(record),
            lease_seconds=_lease_seconds(context),
        )
    except errors.TransitionRejectedError:
        logger.info("task is held by another delivery or already moved on")
        return Outcome.BUSY
    except Exception as exc:
        logger.exception("retryable failure while claiming")
        _prepare_redelivery(record, None, exc)
        raise
    try:
        return _scrape_claimed(claimed, context)
    except Exception as exc:
        logger.exception("retryable scrape failure")
        _prepare_redelivery(record, claimed, exc)
        raise


def _scrape_claimed(task: Task, context: LambdaContext) -> Outcome:
    try:
        site = scrape_site(
            task.url or "", deadline=_deadline(context), settings=config.ScrapeSettings.from_env()
        )
    except FatalScrapeError as exc:
        logger.warning("fatal scrape error", extra={"reason": exc.reason, "detail": exc.detail})
        return _record_failure(task, str(exc))
    key = store_result(task.job_id, task.task_id, site.to_document())
    try:
        task_store.finish(task, result_key=key, summary=site.summary())
    except errors.TransitionRejectedError:
        # Another delivery took the task over after our lease ran out; it writes the same key.
        logger.warning("finish rejected: the claim moved to another delivery")
        return Outcome.DUPLICATE
    return Outcome.FINISHED


def _record_failure(task: Task, reason: str) -> Outcome:
    try:
        task_store.fail(task, reason=reason)
    except errors.TransitionRejectedError:
        logger.warning("fail rejected: the claim moved to another delivery")
        return Outcome.DUPLICATE
    return Outcome.FAILED


_METRIC_BY_OUTCOME = {
    Outcome.FINISHED: "TasksFinished",
    Outcome.FAILED: "TasksFailed",
    Outcome.DUPLICATE: "DuplicateDeliveries",
    Outcome.BUSY: "DuplicateDeliveries",
    Outcome.UNREADABLE: "UnreadableMessages",
}


def handle_record(record: SQSRecord, context: LambdaContext) -> Outcome:
    logger.append_keys(message_id=record.message_id)
    try:
        outcome = process_message(record, context)
    except Exception:
        metrics.add_metric(name="TasksRetried", unit=MetricUnit.Count, value=1)
        raise
    finally:
        logger.remove_keys(["task_id", "job_id", "message_id"])
    metrics.add_metric(name=_METRIC_BY_OUTCOME[outcome], unit=MetricUnit.Count, value=1)
    return outcome


@metrics.log_metrics
@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    # raise_on_entire_batch_failure=False: with batch size 1 a failure must still be *reported*
    # (so only that message returns, after our shortened visibility), not raised as a function error.
    config.for_scraper()
    processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
    return process_partial_response(
        event=event,
        record_handler=lambda record: handle_record(record, context),
        processor=processor,
        context=context,
    )
