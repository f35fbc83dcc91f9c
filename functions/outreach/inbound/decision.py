"""What the processor does with one stored message: its kind, the task it answers, and where it goes.

``decide`` reads the message once (``message.parse``), classifies it (``classify.classify``, with SES's
receipt time as its arrival) and matches it (``matching.match``), then settles:

- the kind. One correction to the classifier's: mail SES delivered to the unsubscribe mailbox
  (``UNSUBSCRIBE_LOCAL_PART@REPLY_DOMAIN``, or ``+tag`` of it, among the envelope recipients) is an
  ``UNSUBSCRIBE`` even when its ``To`` does not say so (a ``Bcc``, a client that rewrote it), unless it
  is a delivery report. A message too big to read, or that ``parse`` refuses, is ``UNPARSEABLE``.
- the rules: the matched task's (``SequenceRules()`` for a row written before rules existed), with
  the owner mailbox ``UNMATCHED_FORWARD_TO`` where they name none.
- the forward mark (``forward.MARKS``) and its mailbox: a matched human reply ``reply`` to the owner;
  a matched automatic reply ``auto-reply`` to the owner only when the rules ask for it; an unmatched
  reply, an unmatched delivery report and an unsubscribe whose sender is no address ``unmatched``, and an
  unreadable message ``unparseable``, to ``UNMATCHED_FORWARD_TO``. A matched report and an unsubscribe
  are acted on and not forwarded.
- no forward for automatic mail (an automatic reply or a report) delivered to the forwarder address
  itself: an auto-responder at an owner mailbox answering a forward would otherwise be forwarded back
  to it, and answered again, without end. Such mail is kept in S3 and counted (``to_forwarder``).
- whether the forward is the message itself or a notice naming its S3 object: a notice for a message
  too big to read and for one SES found a virus in (``virusVerdict`` ``FAIL``): the owner learns of
  it without receiving it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from outreach import config
from outreach.contacts.keys import normalise
from outreach.errors import MalformedFieldError, UnparseableMessageError
from outreach.inbound.classify import Classification, Kind, classify
from outreach.inbound.forward import Labels
from outreach.inbound.matching import Match, match
from outreach.inbound.message import InboundMessage, parse
from outreach.inbound.notification import ReceivedMessage
from outreach.inbound.raw_object import RawObject
from outreach.inbound.receipts import Outcome
from outreach.inbound.reply_split import new_text
from outreach.inbound.return_date import return_date
from outreach.sequence_rules import SequenceRules
from outreach.task_model import Task

_NO_MATCH = Match(None, "none")


@dataclass(frozen=True)
class Plan:
    """One message's decision (module docstring). ``sender`` is its ``From`` address normalised as the
    ledger keys it (``None`` when it has none the ledger can hold)."""

    classification: Classification
    message: InboundMessage | None
    match: Match
    rules: SequenceRules
    owner: str
    forward: str
    forward_to: str | None
    as_notice: str | None
    sender: str | None
    to_forwarder: bool = False

    @property
    def kind(self) -> Kind:
        return self.classification.kind

    @property
    def task(self) -> Task | None:
        return self.match.task

    def labels(self, mark: str) -> Labels:
        task = self.task
        if task is None or task.email is None or mark in ("unmatched", "unparseable"):
            return Labels(mark)
        return Labels(mark, task.job_id, task.email.step)

    def outcome(self) -> Outcome:
        """What the receipt keeps of this plan once the processor has acted on it."""
        task = self.task
        return Outcome(
            message_kind=self.kind.value,
            reason=self.classification.reason,
            matched_by=self.match.how,
            task_id=task.task_id if task is not None else None,
            campaign_id=task.job_id if task is not None else None,
            step=task.email.step if task is not None and task.email is not None else None,
            forward=self.forward,
        )


def _to_unsubscribe_mailbox(recipients: tuple[str, ...], settings: config.InboundProcessorSettings) -> bool:
    wanted = settings.unsubscribe_local_part
    for address in recipients:
        local, _, domain = address.rpartition("@")
        if domain == settings.reply_domain and (local == wanted or local.startswith(wanted + "+")):
            return True
    return False


def _sender(msg: InboundMessage | None) -> str | None:
    if msg is None or msg.from_address is None:
        return None
    try:
        return normalise(msg.from_address)
    except MalformedFieldError:  # outcome: a sender the ledger cannot key is no one to act for
        return None


def rules_of(task: Task | None, settings: config.InboundProcessorSettings) -> tuple[SequenceRules, str]:
    """The task's rules (``SequenceRules()`` when it has none) and the owner mailbox they forward to."""
    rules = task.email.rules if task is not None and task.email is not None else None
    rules = rules or SequenceRules()
    return rules, rules.owner or settings.unmatched_forward_to


def _forward(kind: Kind, matched: bool, rules: SequenceRules, sender: str | None) -> str:
    if kind is Kind.UNPARSEABLE:
        return "unparseable"
    if kind is Kind.HUMAN_REPLY:
        return "reply" if matched else "unmatched"
    if kind is Kind.AUTO_REPLY:
        if not matched:
            return "unmatched"
        return "auto-reply" if rules.forward_auto_replies else ""
    if kind is Kind.BOUNCE:
        return "" if matched else "unmatched"
    if kind is Kind.UNSUBSCRIBE:
        return "" if sender is not None else "unmatched"
    return "unmatched"


def decide(received: ReceivedMessage, stored: RawObject, settings: config.InboundProcessorSettings) -> Plan:
    """The plan for one stored message (module docstring)."""
    msg: InboundMessage | None = None
    if stored.data is None:
        size = f"{stored.size:,} bytes, over INBOUND_MAX_MESSAGE_BYTES ({settings.max_message_bytes:,})"
        classification = Classification(Kind.UNPARSEABLE, f"unparseable: {size}")
    else:
        try:
            msg = parse(stored.data)
        except UnparseableMessageError as refused:  # outcome: UNPARSEABLE, forwarded for a person
            classification = Classification(Kind.UNPARSEABLE, f"unparseable: {refused.reason}")
        else:
            classification = classify(
                msg, unsubscribe_local_part=settings.unsubscribe_local_part, received=received.received_at
            )
            if classification.kind in (Kind.HUMAN_REPLY, Kind.AUTO_REPLY) and _to_unsubscribe_mailbox(
                received.recipients, settings
            ):
                classification = Classification(Kind.UNSUBSCRIBE, "delivered to the unsubscribe mailbox")
    found = _NO_MATCH
    if msg is not None:
        found = match(
            msg,
            received.recipients,
            reply_domain=settings.reply_domain,
            key_id=settings.key_id,
            report=classification.bounce,
        )
    rules, owner = rules_of(found.task, settings)
    sender = _sender(msg)
    mark = _forward(classification.kind, found.matched, rules, sender)
    to_forwarder = settings.forward_from.lower() in received.recipients and classification.kind in (
        Kind.AUTO_REPLY,
        Kind.BOUNCE,
    )
    if to_forwarder:
        mark = ""
    to = None if not mark else owner if mark in ("reply", "auto-reply") else settings.unmatched_forward_to
    notice = None
    if stored.data is None:
        notice = "it is larger than the processor reads"
    elif received.has_virus:
        notice = "SES found a virus in it"
    return Plan(classification, msg, found, rules, owner, mark, to, notice, sender, to_forwarder)


def away_until(plan: Plan, received: ReceivedMessage, default_days: int) -> date:
    """The day an out-of-office sender is back: the date its reply names (the classifier's
    ``away_until``), else the day it arrived plus ``AWAY_DEFAULT_DAYS``."""
    msg = plan.message
    named = None
    if msg is not None and plan.classification.away_until is not None:
        text = f"{msg.subject}\n{new_text(msg.body)}"
        named = return_date(text, received=received.received_at)
    if named is not None and plan.classification.away_until is not None:
        return plan.classification.away_until
    return received.received_at.date() + timedelta(days=default_days)
