"""SES-events consumer: each SES event (and each unsubscribe) recorded in the ledger and on its task.

The SES-events queue gets every event the configuration set publishes (through the EventBridge rule)
and the unsubscribe endpoint's fan-out messages, read by ``ses_events.parse``. Per record, in order:

1. the contact ledger, for each address the event is about: a hard bounce makes it ``bounced``, a
   complaint ``complained``, an unsubscribe ``unsubscribed`` (the endpoint wrote it already: written
   again, which changes nothing); a soft bounce is counted once per SES message and makes it
   ``bounced`` at ``SOFT_BOUNCE_LIMIT`` distinct messages; a send moves ``last_contacted_at``;
2. the task's mark (``task_store.record_email_event``): the event's time on the task and one more on
   its campaign step's counter, exactly once however often the event comes;
3. a stopped address (a hard bounce, a complaint, an unsubscribe, or a soft bounce at the limit):
   every open email to it in every campaign cancelled and its schedule deleted
   (``contacts.cancel_open_emails``, with the stop's reason).

Every step is idempotent and order-free (the ledger keeps the highest state, the mark refuses a second
write, the fan-out cancels only what is still Pending), so SES's duplicate and out-of-order events
change nothing more, and a record that failed half-way is completed by its retry: step 3 runs for
every stop event, not only for the write that raised the state. Records are handled with Powertools'
``BatchProcessor``: a record that raises is reported in ``batchItemFailures`` and only it comes back
(https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html). An unreadable record
(``MalformedFieldError`` naming its field) is one of them: retried, then moved to the queue's DLQ,
whose alarm calls a person. Logs carry event, message and task ids, never an address.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from outreach import config, contacts, ses_events, task_store
from outreach.errors import MalformedFieldError, UnparseableRecordError
from outreach.observability import MetricUnit, logger, metrics
from outreach.ses_events import BounceType, EventKind, SesEvent
from outreach.task_store import EmailEvent

# The mark each event leaves on its task (a send is the task's own Finished: no mark).
_MARKS: Mapping[tuple[EventKind, BounceType | None], EmailEvent] = {
    (EventKind.DELIVERY, None): EmailEvent.DELIVERED,
    (EventKind.BOUNCE, BounceType.HARD): EmailEvent.BOUNCED_HARD,
    (EventKind.BOUNCE, BounceType.SOFT): EmailEvent.BOUNCED_SOFT,
    (EventKind.COMPLAINT, None): EmailEvent.COMPLAINED,
    (EventKind.UNSUBSCRIBE, None): EmailEvent.UNSUBSCRIBED,
    (EventKind.REJECT, None): EmailEvent.REJECTED,
    (EventKind.DELIVERY_DELAY, None): EmailEvent.DELAYED,
    (EventKind.RENDERING_FAILURE, None): EmailEvent.RENDERING_FAILED,
}

# The metric each kind of event is counted in once it is handled.
_METRIC_BY_KIND: Mapping[tuple[EventKind, BounceType | None], str] = {
    (EventKind.SEND, None): "SesSendEvents",
    (EventKind.DELIVERY, None): "SesDeliveryEvents",
    (EventKind.BOUNCE, BounceType.HARD): "SesHardBounceEvents",
    (EventKind.BOUNCE, BounceType.SOFT): "SesSoftBounceEvents",
    (EventKind.COMPLAINT, None): "SesComplaintEvents",
    (EventKind.UNSUBSCRIBE, None): "UnsubscribeEvents",
    (EventKind.REJECT, None): "SesRejectEvents",
    (EventKind.DELIVERY_DELAY, None): "SesDeliveryDelayEvents",
    (EventKind.RENDERING_FAILURE, None): "SesRenderingFailureEvents",
}


def _count(name: str, value: int = 1) -> None:
    if value:
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)


def _why(event: SesEvent) -> str:
    """The ledger's ``why`` of a state this event sets (human text: what SES said, of which message)."""
    subtype = f" ({event.subtype})" if event.subtype else ""
    if event.kind is EventKind.UNSUBSCRIBE and event.task is not None:
        return ses_events.why_unsubscribed(event.task.campaign_id, event.task.step)
    if event.kind is EventKind.COMPLAINT:
        return f"complaint{subtype} about SES message {event.message_id}"
    bounce = "hard" if event.bounce_type is BounceType.HARD else "soft"
    return f"{bounce} bounce{subtype} of SES message {event.message_id}"


def _record_in_ledger(event: SesEvent, address: str, soft_bounce_limit: int) -> bool:
    """Step 1 for one address; whether the event is one that stops the address (so step 3 runs)."""
    campaign_id = event.task.campaign_id if event.task is not None else None
    state = {
        (EventKind.BOUNCE, BounceType.HARD): contacts.State.BOUNCED,
        (EventKind.COMPLAINT, None): contacts.State.COMPLAINED,
        (EventKind.UNSUBSCRIBE, None): contacts.State.UNSUBSCRIBED,
    }.get((event.kind, event.bounce_type))
    if state is not None:
        source = contacts.Source.UNSUBSCRIBE if event.kind is EventKind.UNSUBSCRIBE else contacts.Source.SES
        raised = contacts.record_stop(
            contacts.address_key(address),
            state,
            at=event.at,
            why=_why(event),
            source=source,
            campaign_id=campaign_id,
        )
        _count("ContactsStopped" if raised else "ContactStopsRepeated")
        return True
    if event.kind is EventKind.BOUNCE and event.message_id is not None:
        if contacts.record_soft_bounce(
            address, event.message_id, at=event.at, why=_why(event), limit=soft_bounce_limit
        ):
            _count("ContactsStopped")
        # A stop already recorded (by this bounce or an earlier run of this record) still fans out.
        return True
    if event.kind is EventKind.SEND and campaign_id is not None:
        contacts.record_contacted(address, campaign_id, event.at)
    return False


def _mark_task(event: SesEvent) -> None:
    """Step 2: the event's mark on its task, counted once for the task's campaign step."""
    mark = _MARKS.get((event.kind, event.bounce_type))
    if mark is None:
        return
    if event.task is None:
        logger.info("event about a message without outreach tags: no task to mark")
        _count("EventsWithoutTask")
        return
    task = task_store.get_task(event.task.task_id)
    if task is None or task.email is None:
        # The task expired from the table (terminal rows have a TTL) or was never there: nothing to mark.
        logger.warning("event about a task that is not in the table", extra={"task_id": event.task.task_id})
        _count("EventsForMissingTasks")
        return
    if task.job_id != event.task.campaign_id or task.email.step != event.task.step:
        raise MalformedFieldError("detail.mail.tags", "name a task of another campaign or step")
    recorded = task_store.record_email_event(task, mark, event.at)
    _count("EmailEventsMarked" if recorded else "EmailEventsDuplicate")


def _cancel_open_emails(address: str, schedule_group: str) -> None:
    """Step 3: every open email to a stopped address cancelled with the stop's reason."""
    stop = contacts.stop_of(address)
    if stop is None:
        return
    fan_out = contacts.cancel_open_emails(address, stop.reason, schedule_group)
    _count("EmailsCancelledForStop", fan_out.cancelled)
    _count("StoppedEmailsAlreadyClaimed", fan_out.already_moved)
    _count("SchedulesDeletedForStop", fan_out.schedules_deleted)
    logger.info(
        "open emails of a stopped address cancelled",
        extra={
            "state": stop.state.value,
            "cancelled": fan_out.cancelled,
            "already_moved": fan_out.already_moved,
            "schedules_deleted": fan_out.schedules_deleted,
        },
    )


def handle_event(event: SesEvent, settings: config.SesEventConsumerSettings) -> None:
    """Steps 1-3 for one parsed event."""
    stopped = [
        address
        for address in event.recipients
        if _record_in_ledger(event, address, settings.soft_bounce_limit)
    ]
    _mark_task(event)
    for address in stopped:
        _cancel_open_emails(address, settings.schedule_group)


def handle_record(record: SQSRecord, settings: config.SesEventConsumerSettings) -> None:
    logger.append_keys(sqs_message_id=record.message_id)
    try:
        try:
            event = ses_events.parse(record.body)
        except (MalformedFieldError, UnparseableRecordError) as exc:
            # Raised on purpose: the record is a batch item failure, retried, then in the DLQ (alarm).
            logger.error("unreadable SES-events record", extra={"reason": str(exc)})
            _count("UnreadableEvents")
            raise
        logger.append_keys(
            event_id=event.event_id,
            event_kind=event.kind.value,
            ses_message_id=event.message_id,
            task_id=event.task.task_id if event.task else None,
        )
        handle_event(event, settings)
    except Exception:
        _count("EventsRetried")
        raise
    finally:
        logger.remove_keys(["sqs_message_id", "event_id", "event_kind", "ses_message_id", "task_id"])
    _count(_METRIC_BY_KIND[(event.kind, event.bounce_type)])


@metrics.log_metrics
@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    # raise_on_entire_batch_failure=False: a batch whose every record failed is still *reported*
    # record by record, like any other partial failure, rather than raised as a function error.
    settings = config.for_ses_event_consumer()
    processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
    return process_partial_response(
        event=event,
        record_handler=lambda record: handle_record(record, settings),
        processor=processor,
        context=context,
    )
