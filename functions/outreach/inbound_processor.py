"""Inbound processor: each message SES received at the reply domain classified and acted on, exactly once.

The inbound queue gets one SNS envelope per received message (modules/email-inbound: receipt rule ->
S3 action with an SNS topic -> SQS). Per record, in order:

1. the notification (``inbound.notification``) names the S3 object, read within
   ``INBOUND_MAX_MESSAGE_BYTES`` (``inbound.raw_object``); the object is never deleted here;
2. the message's receipt (``inbound.receipts``, keyed by its content) is opened: a receipt that is
   finished (forwarded, or acted on with nothing to forward) ends the record, so a redelivered
   notification or a second delivery of the same message does nothing twice;
3. the plan (``inbound.decision``): what the message is (``inbound.classify``), which email task it
   answers (``inbound.matching``: reply token, then In-Reply-To/References), where it is forwarded;
4. a receipt still ``received`` is acted on (``inbound.actions``: a reply recorded and the follow-ups
   it stops cancelled, an absence recorded and the sequence postponed, a report's bounce, an
   unsubscribe), then marked ``acted``. Every action is idempotent, so a record that failed half-way
   is completed by its retry;
5. the forward, at most once (``inbound.forward``): the receipt is claimed ``forwarding`` under a lease
   that outlives this invocation, the message sent with SES v2 SendEmail (Raw, no configuration set),
   and the receipt marked ``forwarded``. A send SES proved it did not make releases the claim and
   raises, so the record is retried; a send whose outcome is unknown, or a claim whose holder died, is
   ``forward_unknown`` (metric ``InboundForwardsUnknown``) and is never sent again: an email cannot be
   taken back. A message SES refuses to send is forwarded as a notice naming its S3 object.

Lambda stops an invocation at its timeout wherever it is
(https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html), and a claim its holder
never settled can only become ``forward_unknown``: a reply nobody gets. So a forward is claimed only
while ``FORWARD_SECONDS_NEEDED`` of the invocation are left (``context.get_remaining_time_in_millis``,
https://docs.aws.amazon.com/lambda/latest/dg/python-context.html), and a record is started only with
as much left; otherwise the record is a batch item failure (``ForwardDeferredError``) and its retry,
in a fresh invocation, carries on where it stopped (the receipt says how far it got).

Records are handled with Powertools' ``BatchProcessor``: a record that raises is reported in
``batchItemFailures`` and only it comes back (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html);
after its receives it is in the queue's DLQ, whose alarm calls a person. An unreadable record
(``MalformedFieldError`` naming its field) is one of them. Logs carry the SQS and SES message ids, the
task and the campaign, never an address, a subject or a body.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from outreach import clock, config
from outreach.email_schedules import ScheduleTarget
from outreach.errors import (
    ForwardDeferredError,
    ForwardInProgressError,
    ForwardOutcomeUnknownError,
    MalformedFieldError,
    UnforwardableMessageError,
)
from outreach.inbound import actions, forward, notification, raw_object, receipts
from outreach.inbound.classify import Kind
from outreach.inbound.decision import Plan, away_until, decide
from outreach.inbound.notification import ReceivedMessage
from outreach.inbound.receipts import Receipt, ReceiptState
from outreach.observability import MetricUnit, logger, metrics

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

# A forward's claim outlives the invocation that took it by this much (clock differences).
LEASE_MARGIN_SECONDS = 30
# What a forward needs of the invocation: the receipt's writes and a SendEmail SES answers as it
# normally does (well under a second). A send that outlasts it is as unknown as a read timeout.
FORWARD_SECONDS_NEEDED = 15
_LOG_KEYS = ["sqs_message_id", "ses_message_id", "task_id", "campaign_id", "inbound_kind"]
_KIND_METRICS = {
    Kind.HUMAN_REPLY: "InboundHumanReplies",
    Kind.AUTO_REPLY: "InboundAutoReplies",
    Kind.BOUNCE: "InboundBounces",
    Kind.UNSUBSCRIBE: "InboundUnsubscribes",
    Kind.UNPARSEABLE: "InboundUnparseable",
    Kind.UNMATCHED: "InboundUnmatched",
}


@dataclass(frozen=True)
class Run:
    """One invocation: its settings, the inbound bucket's client, who it is and when it must be done."""

    settings: config.InboundProcessorSettings
    s3: S3Client
    request_id: str
    lease_expires_at: int
    seconds_left: Callable[[], float]

    def require_time(self, what: str) -> None:
        """``ForwardDeferredError`` when less than ``FORWARD_SECONDS_NEEDED`` of the invocation is left."""
        left = self.seconds_left()
        if left < FORWARD_SECONDS_NEEDED:
            raise ForwardDeferredError(f"{left:.1f} s left of the invocation: {what} waits for a retry")

    @property
    def target(self) -> ScheduleTarget:
        settings = self.settings
        return ScheduleTarget(
            group=settings.schedule_group,
            worker_arn=settings.worker_arn,
            role_arn=settings.scheduler_role_arn,
            dlq_arn=settings.dlq_arn,
        )


def _count(name: str, value: int = 1) -> None:
    if value:
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)


# ---- step 4: acting --------------------------------------------------------------------------------


def act(plan: Plan, received: ReceivedMessage, run: Run) -> Counter[str]:
    """The plan's actions on the ledger and the tasks (``inbound.actions``)."""
    settings, task, at = run.settings, plan.task, received.received_at
    if plan.kind is Kind.UNSUBSCRIBE and plan.sender is not None:
        return actions.on_unsubscribe(plan.sender, task, at=at, schedule_group=settings.schedule_group)
    if task is None or task.email is None:
        return Counter()
    if plan.kind is Kind.HUMAN_REPLY:
        return actions.on_reply(task, plan.sender, at=at, schedule_group=settings.schedule_group)
    if plan.kind is Kind.AUTO_REPLY and plan.classification.out_of_office:
        return actions.on_absence(
            task,
            plan.sender,
            back_on=away_until(plan, received, settings.away_default_days),
            at=at,
            postpone=plan.rules.on_out_of_office == "postpone",
            target=run.target,
        )
    if plan.kind is Kind.BOUNCE and plan.classification.bounce is not None:
        return actions.on_bounce(
            task,
            plan.classification.bounce,
            at=at,
            soft_bounce_limit=settings.soft_bounce_limit,
            schedule_group=settings.schedule_group,
        )
    if plan.kind is Kind.AUTO_REPLY:
        return actions.on_auto_reply(task, at=at)
    return Counter()


# ---- step 5: forwarding ----------------------------------------------------------------------------


def _mailbox(plan: Plan, mark: str, settings: config.InboundProcessorSettings) -> str:
    return plan.owner if mark in ("reply", "auto-reply") else settings.unmatched_forward_to


def _notice(
    plan: Plan, received: ReceivedMessage, mark: str, why: str, settings: config.InboundProcessorSettings
) -> bytes:
    return forward.notice(
        sender=settings.forward_from,
        to=_mailbox(plan, mark, settings),
        labels=plan.labels(mark),
        why=why,
        bucket=received.bucket,
        key=received.object_key,
        ses_message_id=received.ses_message_id,
    )


def _send(plan: Plan, received: ReceivedMessage, raw: bytes | None, mark: str, run: Run) -> tuple[str, bool]:
    """Send the forward marked ``mark``: the message itself, or a notice (when the plan says so, the
    message cannot be copied, or SES refused it); SES's message id, and whether it was a notice."""
    settings = run.settings
    to = _mailbox(plan, mark, settings)
    why = plan.as_notice
    if why is None and raw is not None:
        try:
            data = forward.forwarded(
                raw, plan.message, sender=settings.forward_from, to=to, labels=plan.labels(mark)
            )
            return forward.send(data, sender=settings.forward_from, to=to), False
        except UnforwardableMessageError as exc:  # outcome: a notice naming the S3 object goes instead
            logger.warning("message not forwarded whole: a notice goes instead", extra={"reason": exc.reason})
            why = exc.reason
    notice = _notice(plan, received, mark, why or "it could not be forwarded", settings)
    return forward.send(notice, sender=settings.forward_from, to=to), True


def _held_elsewhere(receipt: Receipt) -> None:
    """A receipt another invocation is forwarding: retried while its lease lives, else settled as
    ``forward_unknown`` (the holder died; it may have sent)."""
    if receipt.lease_live(clock.now()):
        raise ForwardInProgressError(f"{receipt.key} is being forwarded by another invocation")
    why = "the invocation that held the forward ended before recording its outcome"
    if receipts.record_forward_unknown(receipt, owner=None, why=why):
        logger.error("forward outcome unknown: never sent again", extra={"reason": why})
        _count("InboundForwardsUnknown")


def forward_once(
    plan: Plan, received: ReceivedMessage, raw: bytes | None, receipt: Receipt, run: Run, owner: str
) -> None:
    """Step 5 (module docstring) for a receipt that is ``acted`` (or held by another invocation)."""
    if receipt.state is ReceiptState.FORWARDING:
        _held_elsewhere(receipt)
        return
    if receipt.finished or receipt.state is not ReceiptState.ACTED:
        return
    run.require_time("the forward")
    if not receipts.claim_forward(receipt, owner=owner, lease_expires_at=run.lease_expires_at):
        now = receipts.read_receipt(receipt.key)
        if now is not None and now.state is ReceiptState.FORWARDING:
            _held_elsewhere(now)
        return
    mark = receipt.forward
    try:
        forward_id, as_notice = _send(plan, received, raw, mark, run)
    except ForwardOutcomeUnknownError as exc:  # outcome: recorded forward_unknown, counted, never resent
        receipts.record_forward_unknown(receipt, owner=owner, why=str(exc))
        logger.error(
            "forward outcome unknown: never sent again", extra={"reason": type(exc.__cause__).__name__}
        )
        _count("InboundForwardsUnknown")
        return
    except Exception as exc:
        # SES answered with an error, or no connection was made: nothing was sent, so the claim is
        # released and the record retried (then the DLQ and its alarm).
        receipts.release_forward(receipt, owner=owner, why=type(exc).__name__)
        _count("InboundForwardsFailed")
        raise
    # Marked before the receipt says forwarded: a crash between the two marks again, which counts once.
    for name, value in sorted(actions.on_forwarded(plan.task).items()):
        _count(name, value)
    receipts.record_forwarded(receipt, owner=owner, forward_message_id=forward_id, as_notice=as_notice)
    _count("InboundForwardNotices" if as_notice else "InboundForwards")
    logger.info(
        "inbound message forwarded",
        extra={"mark": mark, "as_notice": as_notice, "forward_message_id": forward_id},
    )


# ---- a record --------------------------------------------------------------------------------------


def handle_record(record: SQSRecord, run: Run) -> None:
    logger.append_keys(sqs_message_id=record.message_id)
    try:
        run.require_time("the record")
        try:
            received = notification.parse(record.body, bucket=run.settings.bucket)
        except MalformedFieldError as exc:
            # Raised on purpose: the record is a batch item failure, retried, then in the DLQ (alarm).
            logger.error("unreadable inbound record", extra={"reason": str(exc)})
            _count("UnreadableInboundRecords")
            raise
        logger.append_keys(ses_message_id=received.ses_message_id)
        handle_message(received, run, owner=f"{run.request_id}#{record.message_id}")
    except Exception:
        _count("InboundRetried")
        raise
    finally:
        logger.remove_keys(_LOG_KEYS)


def handle_message(received: ReceivedMessage, run: Run, *, owner: str) -> None:
    """Steps 1-5 for one received message; ``owner`` names this delivery of it."""
    settings = run.settings
    stored = raw_object.read(
        run.s3, received.bucket, received.object_key, max_bytes=settings.max_message_bytes
    )
    digest = receipts.object_digest(received) if stored.data is None else receipts.content_digest(stored.data)
    receipt = receipts.open_receipt(digest, received)
    if receipt.finished:
        logger.info("inbound message already handled", extra={"receipt_state": receipt.state.value})
        _count("InboundDuplicates")
        return
    plan = decide(received, stored, settings)
    task = plan.task
    logger.append_keys(
        inbound_kind=plan.kind.value,
        task_id=task.task_id if task is not None else None,
        campaign_id=task.job_id if task is not None else None,
    )
    _count("InboundTokensRefused", plan.match.refused_tokens)
    if receipt.state is ReceiptState.RECEIVED:
        counts = act(plan, received, run)
        receipt = receipts.record_acted(receipt, plan.outcome())
        for name, value in sorted(counts.items()):
            _count(name, value)
        _count(_KIND_METRICS[plan.kind])
        if plan.kind is Kind.AUTO_REPLY and plan.classification.out_of_office:
            _count("InboundOutOfOffice")
        if plan.forward in ("unmatched", "unparseable"):
            _count("InboundUnmatched")
        if plan.to_forwarder:
            _count("InboundAutomaticToForwarder")
        logger.info(
            "inbound message acted on",
            extra={
                "reason": plan.classification.reason,
                "matched_by": plan.match.how,
                "forward": plan.forward,
            },
        )
    forward_once(plan, received, stored.data, receipt, run, owner)


@metrics.log_metrics
@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    # raise_on_entire_batch_failure=False: a batch whose every record failed is still *reported*
    # record by record, like any other partial failure, rather than raised as a function error.
    settings = config.for_inbound_processor()
    lease = int(clock.now() + context.get_remaining_time_in_millis() / 1000) + LEASE_MARGIN_SECONDS
    run = Run(
        settings,
        raw_object.client_for(settings.bucket_region),
        context.aws_request_id,
        lease,
        lambda: context.get_remaining_time_in_millis() / 1000,
    )
    processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
    return process_partial_response(
        event=event,
        record_handler=lambda record: handle_record(record, run),
        processor=processor,
        context=context,
    )
