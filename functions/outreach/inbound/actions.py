"""What each kind of inbound message does to the ledger and the tasks; every action is idempotent.

- A human reply to an email task: ``contacts.record_reply`` for the task's recipient and, when it
  differs, the reply's sender (the email worker reads the recipient's record before every send,
  ``reply_stop``), the task marked ``replied`` (``task_store.record_email_event``), then every Pending
  email to either address that a reply stops is cancelled
  (``Cancelled``, ``replied: campaign <id> step <n>``) and its schedule deleted
  (``contacts.cancel_open_emails`` with ``only``): the replied campaign's when its rules say
  ``on_reply: stop``, another campaign's when its own rules say ``on_reply: stop`` and
  ``reply_stops_other_campaigns`` (the worker applies the same rule to a task the fan-out missed).
- An automatic reply to an email task: the task marked ``auto_replied`` (``on_auto_reply``). An
  out-of-office reply also records ``contacts.record_away`` with the return date and, when the rules
  say ``on_out_of_office: postpone``, moves the campaign's open emails to the recipient past it
  (``postpone.postpone_for_absence``); another automatic reply changes nothing else.
- A forward SES accepted of a message that answers an email task (the message itself or the notice
  sent in its place): the task marked ``forwarded`` (``on_forwarded``).
- A delivery report about a sent email: what the SES-events consumer does with SES's own bounce event,
  for the task's recipient: a permanent failure (``5.x.x``) makes it ``bounced`` (source ``ses``), a
  failure with a transient status counts one soft bounce of that SES message
  (``contacts.record_soft_bounce``, ``SOFT_BOUNCE_LIMIT``); the task is marked ``bounced_hard`` or
  ``bounced_soft`` once (``task_store.record_email_event``), and a stopped address has every open
  email cancelled. A report that says only ``delayed``, ``delivered``, ``relayed`` or ``expanded``
  changes nothing.
- Mail to the unsubscribe mailbox: its sender ``unsubscribed`` (source ``unsubscribe``), as the
  one-click POST records it, and every open email to it cancelled.

The marks are the campaign status's per-step ``replied``, ``auto_replied`` and ``forwarded``: each is
set once per email, in one transaction with its step's counter, so a message delivered twice, a
retried record or a second reply to the same email counts nothing more. Each function returns the
counts the processor publishes as metrics (``EmailEventsMarked``, ``EmailEventsDuplicate`` and the
like); a duplicate run counts zeros where nothing changed. Only the task's recipient and the
message's own sender are ever written: a report or reply cannot stop an address the pipeline did not
send to or hear from.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import UTC, date, datetime

from outreach import clock, contacts
from outreach.email_schedules import ScheduleTarget
from outreach.inbound.dsn import Action, DeliveryReport
from outreach.inbound.postpone import postpone_for_absence
from outreach.sequence_rules import SequenceRules
from outreach.task_model import Task
from outreach.task_store.email_events import EmailEvent, record_email_event

Counts = Counter[str]


def _addresses(task: Task, sender: str | None) -> list[str]:
    assert task.email is not None
    recipient = contacts.normalise(task.email.recipient)
    return [recipient] if sender in (None, recipient) else [recipient, str(sender)]


def replied_reason(task: Task) -> str:
    """The failure reason of an email a reply cancelled."""
    step = task.email.step if task.email is not None else "?"
    return f"replied: campaign {task.job_id} step {step}"


def stops_on_reply(campaign_id: str) -> Callable[[Task], bool]:
    """Whether a reply in ``campaign_id`` stops an email task, by that task's own rules."""

    def stops(task: Task) -> bool:
        rules = (task.email.rules if task.email is not None else None) or SequenceRules()
        if rules.on_reply != "stop":
            return False
        return task.job_id == campaign_id or rules.reply_stops_other_campaigns

    return stops


def _cancel(
    address: str,
    reason: str,
    schedule_group: str,
    counts: Counts,
    *,
    cause: str,
    only: Callable[[Task], bool] | None = None,
) -> None:
    """The fan-out, counted as ``EmailsCancelledFor<cause>`` and the like."""
    fan_out = contacts.cancel_open_emails(address, reason, schedule_group, only=only)
    counts[f"EmailsCancelledFor{cause}"] += fan_out.cancelled
    counts[f"EmailsAlreadyClaimedFor{cause}"] += fan_out.already_moved
    counts[f"SchedulesDeletedFor{cause}"] += fan_out.schedules_deleted


def _mark(task: Task, kind: EmailEvent, at: datetime, counts: Counts) -> None:
    """``kind`` marked on the email task and counted for its step, once (``record_email_event``)."""
    counts["EmailEventsMarked" if record_email_event(task, kind, at) else "EmailEventsDuplicate"] += 1


def on_reply(task: Task, sender: str | None, *, at: datetime, schedule_group: str) -> Counts:
    """A person replied to ``task``'s email (module docstring)."""
    counts: Counts = Counter()
    addresses = _addresses(task, sender)
    for address in addresses:
        if contacts.record_reply(address, task.job_id, at=at):
            counts["RepliesRecorded"] += 1
    _mark(task, EmailEvent.REPLIED, at, counts)
    reason = replied_reason(task)
    for address in addresses:
        _cancel(
            address,
            reason,
            schedule_group,
            counts,
            cause="Reply",
            only=stops_on_reply(task.job_id),
        )
    return counts


def on_auto_reply(task: Task, *, at: datetime) -> Counts:
    """An automatic reply to ``task``'s email, out of office or not: the task marked ``auto_replied``."""
    counts: Counts = Counter()
    _mark(task, EmailEvent.AUTO_REPLIED, at, counts)
    return counts


def on_absence(
    task: Task,
    sender: str | None,
    *,
    back_on: date,
    at: datetime,
    postpone: bool,
    target: ScheduleTarget,
) -> Counts:
    """An out-of-office reply to ``task``'s email: away until ``back_on`` (and ``on_auto_reply``)."""
    counts = on_auto_reply(task, at=at)
    assert task.email is not None
    for address in _addresses(task, sender):
        if contacts.record_away(address, back_on, at=at):
            counts["AbsencesRecorded"] += 1
    if postpone:
        moved = postpone_for_absence(task.email.recipient, task.job_id, back_on, target)
        counts["EmailsPostponed"] += moved.moved
        counts["PostponedEmailsAlreadyClaimed"] += moved.already_moved
        counts["SchedulesMovedForAbsence"] += moved.schedules_moved
    return counts


def _why(report: DeliveryReport, ses_message_id: str | None, permanent: bool) -> str:
    status = report.status or "without status"
    kind = "hard" if permanent else "soft"
    return f"{kind} bounce (delivery status notification by mail, {status}) of SES message {ses_message_id}"


def _stop_fan_out(address: str, schedule_group: str, counts: Counts) -> None:
    stop = contacts.stop_of(address)
    if stop is not None:
        _cancel(address, stop.reason, schedule_group, counts, cause="Stop")


def on_bounce(
    task: Task, report: DeliveryReport, *, at: datetime, soft_bounce_limit: int, schedule_group: str
) -> Counts:
    """A delivery report about ``task``'s email (module docstring)."""
    counts: Counts = Counter()
    assert task.email is not None
    failed = [r for r in report.recipients if r.action is Action.FAILED or (r.action is None and r.permanent)]
    if not failed:
        counts["DeliveryNoticesIgnored"] += 1
        return counts
    permanent = any(r.permanent for r in failed)
    recipient = task.email.recipient
    message_id = task.email.ses_message_id
    why = _why(report, message_id, permanent)
    if permanent:
        raised = contacts.record_stop(
            contacts.address_key(recipient),
            contacts.State.BOUNCED,
            at=at,
            why=why,
            source=contacts.Source.SES,
            campaign_id=task.job_id,
        )
        counts["ContactsStopped" if raised else "ContactStopsRepeated"] += 1
    elif message_id is not None and contacts.record_soft_bounce(
        recipient, message_id, at=at, why=why, limit=soft_bounce_limit
    ):
        counts["ContactsStopped"] += 1
    _mark(task, EmailEvent.BOUNCED_HARD if permanent else EmailEvent.BOUNCED_SOFT, at, counts)
    _stop_fan_out(recipient, schedule_group, counts)
    return counts


def unsubscribed_why(task: Task | None) -> str:
    """The ledger's ``why`` of an unsubscribe by mail."""
    why = "unsubscribe by mail to the List-Unsubscribe mailbox"
    if task is None or task.email is None:
        return why
    return f"{why} (campaign {task.job_id}, step {task.email.step})"


def on_unsubscribe(sender: str, task: Task | None, *, at: datetime, schedule_group: str) -> Counts:
    """Mail from ``sender`` to the unsubscribe mailbox; ``task`` the email it answers, if matched."""
    counts: Counts = Counter()
    raised = contacts.record_stop(
        contacts.address_key(sender),
        contacts.State.UNSUBSCRIBED,
        at=at,
        why=unsubscribed_why(task),
        source=contacts.Source.UNSUBSCRIBE,
        campaign_id=task.job_id if task is not None else None,
    )
    counts["ContactsStopped" if raised else "ContactStopsRepeated"] += 1
    if task is not None and task.email is not None and contacts.normalise(task.email.recipient) == sender:
        _mark(task, EmailEvent.UNSUBSCRIBED, at, counts)
    _stop_fan_out(sender, schedule_group, counts)
    return counts


def on_forwarded(task: Task | None, *, at: datetime | None = None) -> Counts:
    """SES accepted the forward of a message that answers ``task``'s email: the task marked
    ``forwarded`` at ``at`` (default: now, the moment SES answered). Nothing for a message that answers
    no email task (an unmatched one has none: it is the metric ``InboundUnmatched``)."""
    counts: Counts = Counter()
    if task is not None and task.email is not None:
        when = at if at is not None else datetime.fromtimestamp(clock.now(), UTC)
        _mark(task, EmailEvent.FORWARDED, when, counts)
    return counts
