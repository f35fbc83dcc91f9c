"""Email worker: sends one email task, at most once, when its one-time schedule invokes it.

Scheduler invokes the worker asynchronously with ``{"task_id": ...}``. Per invocation:

- task already Finished, Failed or Cancelled: return, no error (an error would only make the
  scheduler and Lambda retry into the DLQ);
- task Running: another invocation holds it, or one died after sending: return without sending (the
  email reconciler settles a Running task whose lease ran out as ``delivery_unknown``);
- ``send_at`` more than ``EARLY_SKEW_SECONDS`` ahead (a replayed or hand-made event): refused before
  the claim, no raise, the ``EarlyInvocations`` metric; the task stays Pending for its own schedule;
- claim Pending -> Running with a conditional write before anything else; a refused claim means another
  invocation won: return without sending;
- not addressed as planned (``message.to`` is not exactly one address equal to ``recipient``, or the
  task id is not the one derived from campaign, recipient and step): ``Failed``, nothing sent;
- past ``send_at`` by more than the grace period: ``Failed`` (``too_late``);
- recipient on the account's suppression list (SES puts hard bounces and complaints there): the first
  step ``Failed``, a follow-up ``Cancelled``;
- recipient (or its domain) stopped in the contact ledger (unsubscribed, bounced, complained, blocked):
  every step ``Cancelled`` with ``contacts.Stop.reason`` (``contact_stopped: ...``). The ledger is read
  with a strongly consistent read after the claim, so a stop recorded before it is always seen; the
  stop's fan-out cancels the Pending tasks and leaves a claimed one to its worker. The only email that
  can go out after a stop was recorded is one whose worker read the ledger before it;
- recipient replied (the ledger's ``replied_campaigns``, in the same read: ``contacts.standing_of``)
  in this campaign, or in any campaign when the task's rules say ``reply_stops_other_campaigns``, and
  the rules say ``on_reply: stop`` (rows without rules: ``SequenceRules()``, which does): ``Cancelled``
  with ``replied: ...``;
- a first step (a first contact) to an address that had another campaign's first contact less than
  the gap ago, or its share of first contacts in 30 days (``contacts.FirstContactRule``; modules/email's
  ``first_contact``): the last check before the send takes the address's first-contact slot with one
  conditional write on its ledger record, conditioned on the version read with the stop
  (``contacts.take_first_contact``), so two campaigns' workers cannot both pass. A refused one goes
  back to ``Pending`` at the next allowed minute inside its window, its schedule and its later steps
  with it (``deferral.defer``), metric ``EmailsDeferred``; nothing is dropped. The slot is taken after
  the claim, not in its transaction: the ledger read that decides it must follow the claim for a stop
  recorded before the claim to be seen, and the version condition makes the slot as atomic as the
  claim's transaction would;
- while the sending identity warms up (modules/email's ``warmup``; ``warmup_ramp``), every email, of
  any step and campaign, last counts against the identity's cap for the UTC day (the ramp's cap, under
  the account's Max24HourSend read with GetAccount) with one conditional UpdateItem on the ledger
  (``contacts.take_identity_send``); a day at its cap defers the email to the next UTC day's first
  allowed minute inside its window (``deferral.defer``). A first step's first-contact slot is taken
  before; its next try takes it again at that moment (``contacts.take_first_contact``);
- a follow-up whose earlier step did not go out (bounced, rejected, cancelled, not sent yet) is
  ``Cancelled`` with the reason;
- stored message unsafe (header injection), or a campaign id SES cannot carry as a tag: ``Failed``;
- SES SendEmail with the configuration set, List-Unsubscribe headers, for a threaded follow-up
  In-Reply-To and References naming the earlier steps' Message-IDs (``email_headers``), and the
  message tags naming campaign, step and task (``ses_tags``: SES events come back with them), then
  ``Finished`` with the SES message id (status and campaign counters in one transaction);
- permanent rejection (``PERMANENT_SES_ERRORS``): ``Failed`` with the reason, no raise;
- ``SendingPausedException`` (the configuration set's sending is paused, by the reputation guard or an
  operator): deferred by the recheck interval inside its window, metric ``EmailsHeldWhilePaused``, or
  ``Failed`` as ``too_late`` once its next try would be past the grace period counted from the time it
  was due when the pause first held it (``sending_pause``);
- an error that proves SES did not take the request (an SES error response: throttling, quota, 5xx;
  or no connection was made): the claim goes back to ``Pending`` and the error is raised, so Lambda's
  async retries (2, then the email DLQ) try again;
- anything after the request may have reached SES (a read timeout, a dropped connection, an unknown
  error): the task stays ``Running`` and ``SendOutcomeUnknownError`` is raised. SendEmail has no
  idempotency token, so a second send could be a second email; the retry finds the task Running and
  sends nothing, and the reconciler settles it as ``delivery_unknown``.

Once SES may have accepted the email the task is never released: a failure to record ``Finished``
leaves it ``Running`` and raises; the retry finds it Running and sends nothing.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.typing import LambdaContext
from botocore.exceptions import ClientError

from outreach import (
    clients,
    clock,
    config,
    contacts,
    deferral,
    errors,
    sdk_features,
    sending_pause,
    ses_tags,
    task_store,
    warmup_ramp,
)
from outreach.email_headers import thread_of, unsubscribe_headers
from outreach.email_schedules import ScheduleTarget
from outreach.email_task import EmailMessage, email_task_id, is_one_address
from outreach.errors import (
    MalformedFieldError,
    PermanentEmailError,
    SendDeferredError,
    SendOutcomeUnknownError,
    SkipEmailError,
    UnreadableMessageError,
    UnsafeEmailError,
)
from outreach.observability import MetricUnit, logger, metrics
from outreach.personal_data import redact_addresses
from outreach.reply_stop import check_not_replied
from outreach.ses_send_errors import NOT_SENT_ERRORS, error_code
from outreach.task_model import Kind, Status, Task

if TYPE_CHECKING:
    from collections.abc import Sequence

    from mypy_boto3_sesv2.type_defs import (
        BodyTypeDef,
        MessageHeaderTypeDef,
        MessageTagTypeDef,
        SendEmailRequestTypeDef,
    )

__all__ = ["check_may_send", "lambda_handler", "process", "send_request", "unsubscribe_headers"]

# SES v2 errors that sending the same email again cannot fix: the task fails with the error's name.
# https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_SendEmail.html#API_SendEmail_Errors
# - MessageRejected: the message contains a virus, or the address is not verified (sandbox);
# - MailFromDomainNotVerifiedException: the sender's MAIL FROM domain is not verified;
# - BadRequestException: the request is invalid (e.g. a malformed address).
# Not here, on purpose: AccountSuspendedException stops every email of the account, not this one;
# NotFoundException names a missing identity or configuration set (a deploy error). Those raise like a
# transient error, so the invocations fail into the email DLQ and its alarm calls a person while the
# tasks stay open (the reconciler ends them ``too_late`` if nobody fixes it). SendingPausedException
# (the reputation guard or an operator paused the configuration set) defers the email until sending is
# resumed, or fails it ``too_late`` past its grace period (``sending_pause``).
PERMANENT_SES_ERRORS = frozenset(
    {"MessageRejected", "MailFromDomainNotVerifiedException", "BadRequestException"}
)


# How early an invocation may come: Scheduler fires at the at() time (never before), and the one-time
# schedules are written at or after send_at; this covers clock differences between services.
EARLY_SKEW_SECONDS = 60

# The SDK features the worker's requests use; a runtime without them fails at cold start, by name.
sdk_features.require(sdk_features.SES_SEND_EMAIL_HEADERS)


class Outcome(StrEnum):
    SENT = "Sent"
    TOO_EARLY = "TooEarly"
    ALREADY_TERMINAL = "AlreadyTerminal"
    BUSY = "Busy"
    SKIPPED = "Skipped"
    FAILED = "Failed"
    SENT_NOT_RECORDED = "SentNotRecorded"
    DEFERRED = "Deferred"


_METRIC_BY_OUTCOME = {
    Outcome.SENT: "EmailsSent",
    Outcome.TOO_EARLY: "EarlyInvocations",
    Outcome.ALREADY_TERMINAL: "DuplicateInvocations",
    Outcome.BUSY: "DuplicateInvocations",
    Outcome.SKIPPED: "EmailsSkipped",
    Outcome.FAILED: "EmailsFailed",
    Outcome.SENT_NOT_RECORDED: "EmailsSentNotRecorded",
    Outcome.DEFERRED: "EmailsDeferred",
}


def read_task_id(event: Any) -> str:
    if not isinstance(event, dict):
        raise UnreadableMessageError("event_not_object")
    task_id = event.get("task_id")
    if not isinstance(task_id, str) or not task_id.strip():
        raise UnreadableMessageError("missing_task_id")
    return task_id


def _is_suppressed(address: str) -> str | None:
    """The reason (``BOUNCE`` or ``COMPLAINT``) ``address`` is on the account's suppression list, if it is.

    https://docs.aws.amazon.com/ses/latest/dg/sending-email-suppression-list.html
    """
    try:
        response = clients.sesv2().get_suppressed_destination(EmailAddress=address)
    except ClientError as exc:
        if error_code(exc) == "NotFoundException":
            return None
        raise
    return str(response["SuppressedDestination"]["Reason"])


def check_addressed_as_planned(task: Task) -> None:
    """Raise ``PermanentEmailError`` unless the stored message goes to exactly the planned recipient.

    ``recipient`` is what suppression and every later check read; ``message.to`` is what SES is sent.
    A row changed after planning (any role that may update the table can) must not redirect the email.
    """
    fields = task.email
    if fields is None:
        raise UnreadableMessageError("not_an_email_task")
    to = fields.message.get("to")
    if not isinstance(to, str) or not is_one_address(to):
        raise PermanentEmailError("wrong_recipient: message.to is not exactly one e-mail address")
    if to != fields.recipient:
        raise PermanentEmailError("wrong_recipient: message.to is not the task's recipient")
    if task.task_id != email_task_id(task.job_id, fields.recipient, fields.step):
        raise PermanentEmailError(
            "wrong_recipient: the task id is not the one of campaign, recipient and step"
        )


def check_may_send(task: Task) -> list[Task]:
    """Raise ``PermanentEmailError`` or ``SkipEmailError`` when this email must not go out; else the
    tasks of its earlier steps (step 1 first, every one Finished; none for the first step)."""
    fields = task.email
    if fields is None:
        raise UnreadableMessageError("not_an_email_task")
    check_addressed_as_planned(task)
    late = clock.now() - fields.send_time.timestamp()
    if late > config.email_send_grace_seconds():
        raise PermanentEmailError(f"too_late: {int(late)} s after send_at {fields.send_at}")
    suppressed = _is_suppressed(fields.recipient)
    if suppressed is not None:
        reason = f"suppressed: {fields.recipient} is on the suppression list ({suppressed})"
        if fields.step > 1:
            raise SkipEmailError(reason)
        raise PermanentEmailError(reason)
    standing = contacts.standing_of(fields.recipient)
    if standing.stop is not None:
        raise SkipEmailError(standing.stop.reason)
    check_not_replied(task, standing.engagement)
    if fields.step == 1:
        take_first_contact_slot(task, standing.first_contacts)
        return []
    earlier = task_store.email_tasks_of(task.job_id, fields.recipient, range(1, fields.step))
    for previous in earlier:
        if previous.status is not Status.FINISHED:
            why = f" ({previous.failure_reason})" if previous.failure_reason else ""
            raise SkipEmailError(
                f"earlier_step_not_sent: step {previous.email.step if previous.email else '?'} "
                f"is {previous.status.value}{why}"
            )
    return earlier


def first_contact_rule() -> contacts.FirstContactRule:
    """The per-address rule on first contacts across campaigns, from the worker's settings."""
    return contacts.FirstContactRule(
        gap_seconds=config.first_contact_gap_seconds(), per_period=config.first_contacts_per_30_days()
    )


def take_first_contact_slot(task: Task, seen: contacts.FirstContacts) -> None:
    """Take the recipient's first-contact slot for a first step, the last check before the send;
    ``SendDeferredError`` with the first moment the rule allows when another campaign's first contact
    is too recent, or the address had its 30 days' share (``contacts.take_first_contact``)."""
    fields = task.email
    if fields is None:
        raise UnreadableMessageError("not_an_email_task")
    rule = first_contact_rule()
    free = contacts.take_first_contact(fields.recipient, task.task_id, seen, rule, clock.now())
    if free is not None:
        raise SendDeferredError(
            f"first_contact_limit: another first contact inside {rule.gap_seconds} s, or "
            f"{rule.per_period} in {rule.period_seconds // 86_400} days",
            free,
        )


def take_warmup_count(now: float) -> None:
    """Count the email against the sending identity's warm-up cap for the UTC day of ``now`` (no ramp
    today: nothing); ``SendDeferredError`` to the next UTC day when the day has its cap."""
    day = warmup_ramp.utc_day(now)
    ramp_cap = config.warmup_ramp().ramp_cap(day)
    if ramp_cap is None:
        return
    # https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_GetAccount.html
    quota = clients.sesv2().get_account()["SendQuota"]["Max24HourSend"]
    cap = warmup_ramp.effective_cap(ramp_cap, float(quota))
    if not contacts.take_identity_send(config.sending_domain(), day, cap):
        raise SendDeferredError(
            f"warmup_cap: the sending identity had its {cap} emails of {day.isoformat()} (UTC)",
            warmup_ramp.next_utc_day_start(now),
        )


def seconds_early(task: Task) -> float:
    """How long before its ``send_at`` this invocation came (negative or 0 when on time or late)."""
    return task.email.send_time.timestamp() - clock.now() if task.email else 0.0


def send_request(
    message: EmailMessage,
    configuration_set: str,
    tags: Sequence[MessageTagTypeDef] = (),
    thread: Sequence[MessageHeaderTypeDef] = (),
) -> SendEmailRequestTypeDef:
    """The SES v2 SendEmail request for a stored message, with its message ``tags`` and, for a threaded
    follow-up, its ``thread`` headers (``email_headers.thread_headers``)."""
    body: BodyTypeDef = {"Text": {"Data": message.text, "Charset": "UTF-8"}}
    if message.html:
        body["Html"] = {"Data": message.html, "Charset": "UTF-8"}
    request: SendEmailRequestTypeDef = {
        "FromEmailAddress": message.sender,
        "Destination": {"ToAddresses": [message.to]},
        "Content": {
            "Simple": {
                "Subject": {"Data": message.subject, "Charset": "UTF-8"},
                "Body": body,
                "Headers": [*unsubscribe_headers(message), *thread],
            }
        },
        "ConfigurationSetName": configuration_set,
    }
    if tags:
        request["EmailTags"] = list(tags)
    if message.reply_to:
        request["ReplyToAddresses"] = [message.reply_to]
    return request


def _send(task: Task, earlier: Sequence[Task] = ()) -> str:
    """Send the claimed task's email; SES's message id. Raises PermanentEmailError for a rejection."""
    fields = task.email
    if fields is None:
        raise UnreadableMessageError("not_an_email_task")
    try:
        message = EmailMessage.from_item(fields.message)
    except UnsafeEmailError as exc:
        raise PermanentEmailError(f"unsafe_message: {exc}") from exc
    try:
        tags = ses_tags.email_tags(task)
    except MalformedFieldError as exc:
        raise PermanentEmailError(f"untaggable: {exc}") from exc
    ses = clients.sesv2()
    # The earlier steps went out through the same region's SES (Lambda's AWS_REGION): their Message-IDs
    # name it.
    thread = thread_of(task, earlier, str(ses.meta.region_name))
    request = send_request(message, config.email_configuration_set(), tags, thread)
    try:
        response = ses.send_email(**request)
    except ClientError as exc:
        code = error_code(exc)
        if code in PERMANENT_SES_ERRORS:
            raise PermanentEmailError(f"ses_rejected: {code}: {exc}") from exc
        if code == sending_pause.SENDING_PAUSED_ERROR:
            raise sending_pause.held(task, code) from exc
        raise
    except NOT_SENT_ERRORS:
        raise
    except Exception as exc:
        # outcome: the request may have reached SES; raised as SendOutcomeUnknownError, the claim kept
        raise SendOutcomeUnknownError(f"{type(exc).__name__}: {exc}") from exc
    return str(response["MessageId"])


def _lease_seconds(context: LambdaContext) -> int:
    return int(context.get_remaining_time_in_millis() / 1000) + config.claim_lease_margin_seconds()


def record_not_sent(claimed: Task, outcome: Outcome, reason: str) -> Outcome:
    """Record a claimed task that is not sent (Failed or Cancelled with ``reason``)."""
    logger.warning("email not sent", extra={"outcome": outcome.value, "reason": redact_addresses(reason)})
    if outcome is Outcome.SKIPPED:
        task_store.skip_email(claimed, reason=reason)
    else:
        task_store.fail(claimed, reason=reason)
    return outcome


def record_deferred(claimed: Task, deferred: SendDeferredError) -> Outcome:
    """Move a claimed task the governor refused now to its next allowed minute (``deferral.defer``);
    one held by a paused sending is counted too (``EmailsHeldWhilePaused``)."""
    try:
        moved = deferral.defer(claimed, deferred.not_before, deferred.reason, ScheduleTarget.from_env())
    except errors.TransitionRejectedError:
        logger.warning("deferral refused: the claim was lost meanwhile")
        return Outcome.BUSY
    if task_store.deferral_cause(deferred.reason) == sending_pause.SENDING_PAUSED:
        metrics.add_metric(name="EmailsHeldWhilePaused", unit=MetricUnit.Count, value=1)
    logger.info(
        "email deferred",
        extra={
            "reason": deferred.reason,
            "send_at": moved.send_at,
            "later_steps_moved": moved.later_steps_moved,
        },
    )
    return Outcome.DEFERRED


def process(task_id: str, context: LambdaContext) -> Outcome:
    task = task_store.load_task(task_id, Kind.EMAIL)
    logger.append_keys(campaign_id=task.job_id)
    if task.is_terminal:
        logger.info("task already terminal", extra={"status": task.status.value})
        return Outcome.ALREADY_TERMINAL
    if task.status is not Status.PENDING:
        logger.info("task already claimed", extra={"status": task.status.value})
        return Outcome.BUSY
    early = seconds_early(task)
    if early > EARLY_SKEW_SECONDS:
        logger.warning("invoked before send_at: left Pending for its schedule", extra={"early_s": int(early)})
        return Outcome.TOO_EARLY
    try:
        claimed = task_store.claim_email(
            task, owner=context.aws_request_id, lease_seconds=_lease_seconds(context)
        )
    except errors.TransitionRejectedError:
        logger.info("claim refused: another invocation has the task")
        return Outcome.BUSY
    try:
        earlier = check_may_send(claimed)
        take_warmup_count(clock.now())
        message_id = _send(claimed, earlier)
    except SkipEmailError as exc:
        return record_not_sent(claimed, Outcome.SKIPPED, exc.reason)
    except SendDeferredError as exc:
        return record_deferred(claimed, exc)
    except PermanentEmailError as exc:
        return record_not_sent(claimed, Outcome.FAILED, exc.reason)
    except SendOutcomeUnknownError:
        logger.exception("SES may have accepted the email: the task stays Running and is not sent again")
        metrics.add_metric(name="EmailsSendUnknown", unit=MetricUnit.Count, value=1)
        raise
    except Exception as exc:
        logger.exception("transient failure before the send: claim released")
        task_store.return_email_to_pending(claimed, error=f"{type(exc).__name__}: {exc}")
        raise
    logger.append_keys(ses_message_id=message_id)
    try:
        task_store.finish_email(claimed, ses_message_id=message_id)
    except errors.TransitionRejectedError:
        logger.error("email sent, but the task was moved meanwhile: Finished not recorded")
        return Outcome.SENT_NOT_RECORDED
    except Exception:
        logger.exception("email sent, Finished not recorded: the task stays Running and is not sent again")
        raise
    return Outcome.SENT


@metrics.log_metrics
@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, str]:
    config.for_email_worker()
    ScheduleTarget.from_env()
    try:
        task_id = read_task_id(event)
        logger.append_keys(task_id=task_id)
        outcome = process(task_id, context)
    except UnreadableMessageError as exc:
        # Raised on purpose: after Lambda's retries the event lands in the email DLQ and its alarm fires.
        logger.error("unreadable email event", extra={"reason": exc.reason})
        metrics.add_metric(name="UnreadableEvents", unit=MetricUnit.Count, value=1)
        raise
    except Exception:
        metrics.add_metric(name="EmailsRetried", unit=MetricUnit.Count, value=1)
        raise
    finally:
        logger.remove_keys(["task_id", "campaign_id", "ses_message_id"])
    metrics.add_metric(name=_METRIC_BY_OUTCOME[outcome], unit=MetricUnit.Count, value=1)
    logger.info("email task done", extra={"outcome": outcome.value})
    return {"task_id": task_id, "outcome": outcome.value}
