"""One message of the SES-events queue read as an ``SesEvent``: an SES sending event, or an unsubscribe.

The queue gets EventBridge events in their envelope (``version``, ``id``, ``detail-type``, ``source``,
``time``, ``detail``), the target's message body being the event itself. Two families share it:

- SES's email sending events (``source`` ``aws.ses``), published by the configuration set to the default
  bus, one ``detail-type`` per event type; ``detail`` is the event record SES publishes to every
  destination (``eventType``, ``mail`` and the object of the type: ``bounce``, ``complaint``, ...).
  https://docs.aws.amazon.com/ses/latest/dg/monitoring-eventbridge.html (the detail-types, "delivered
  on a best-effort basis, and they might be delivered out of order"),
  https://docs.aws.amazon.com/eventbridge/latest/ref/events-ref-ses.html (the detail-type names),
  https://docs.aws.amazon.com/ses/latest/dg/event-publishing-retrieving-firehose-contents.html (the
  record: ``mail.messageId``, ``mail.destination``, ``mail.tags`` as ``{name: [value]}``, the
  ``bounceType`` and the recipients of a bounce, complaint, delivery or delay).
- The unsubscribe endpoint's fan-out message (``source`` ``outreach.unsubscribe``, ``detail-type``
  ``Contact unsubscribed``), written by ``unsubscribe_message`` in the same envelope.

Everything is bounded and checked field by field before anything acts on it: the body (256 KB, what an
EventBridge event may be), at most 50 recipients (what one SES message may have), each one e-mail
address (normalised as the contact ledger keys it), ids and texts of bounded length and alphabet. A
record that fails is refused with ``MalformedFieldError`` naming the field (``UnparseableRecordError``
when the body is no JSON object at all); the consumer reports it as a batch item failure, so it is
retried and then lands in the queue's DLQ, whose alarm calls a person.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from outreach import contacts, ses_tags
from outreach.email_task import email_task_id, utc_iso
from outreach.errors import InvalidJobInputError, MalformedFieldError, UnparseableRecordError
from outreach.ses_tags import TaskRef
from outreach.task_ids import validate_job_id

# An EventBridge event is at most 256 KB (PutEvents' entry limit); the body is nothing but the event.
# https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-putevent-size.html
MAX_BODY_BYTES = 256 * 1024
# One SES message has at most 50 recipients (To, CC and BCC together).
# https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_Destination.html
MAX_RECIPIENTS = 50
# SES allows 50 message tags of its own per message; SES adds a few ``ses:`` tags to each.
_MAX_TAGS = 64
_MAX_TAG_CHARS = 256
_MAX_ID_CHARS = 256
_MAX_TIME_CHARS = 40
_MAX_SUBTYPE_CHARS = 64
_MAX_STEP = 1_000

SES_SOURCE = "aws.ses"
UNSUBSCRIBE_SOURCE = "outreach.unsubscribe"
UNSUBSCRIBE_DETAIL_TYPE = "Contact unsubscribed"

# Ids and SES's short type names: printable ASCII without spaces or quotes.
_ID = re.compile(r"[A-Za-z0-9._:@+=/-]+")
_NOT_SUBTYPE = re.compile(r"[^A-Za-z0-9 ._:-]")


class EventKind(StrEnum):
    """What happened: the SES event types the configuration set publishes, and an unsubscribe."""

    SEND = "SEND"
    DELIVERY = "DELIVERY"
    BOUNCE = "BOUNCE"
    COMPLAINT = "COMPLAINT"
    REJECT = "REJECT"
    DELIVERY_DELAY = "DELIVERY_DELAY"
    RENDERING_FAILURE = "RENDERING_FAILURE"
    UNSUBSCRIBE = "UNSUBSCRIBE"


class BounceType(StrEnum):
    """``hard``: SES's ``Permanent``; ``soft``: ``Transient`` or ``Undetermined``."""

    HARD = "hard"
    SOFT = "soft"


_BOUNCE_TYPES = {"Permanent": BounceType.HARD, "Transient": BounceType.SOFT, "Undetermined": BounceType.SOFT}


@dataclass(frozen=True)
class _SesType:
    kind: EventKind
    event_types: frozenset[str]
    # The detail's object of this type, its list of recipients, and the subtype field worth keeping.
    object_name: str
    recipients_field: str | None
    subtype_field: str | None


# detail-type -> what detail holds. "Rendering Failure" is the documented eventType; the spelling
# without the space is SES's event type name elsewhere (RENDERING_FAILURE), accepted as the same.
_SES_TYPES: Mapping[str, _SesType] = {
    "Email Sent": _SesType(EventKind.SEND, frozenset({"Send"}), "send", None, None),
    "Email Delivered": _SesType(EventKind.DELIVERY, frozenset({"Delivery"}), "delivery", "recipients", None),
    "Email Bounced": _SesType(
        EventKind.BOUNCE, frozenset({"Bounce"}), "bounce", "bouncedRecipients", "bounceSubType"
    ),
    "Email Complaint Received": _SesType(
        EventKind.COMPLAINT,
        frozenset({"Complaint"}),
        "complaint",
        "complainedRecipients",
        "complaintFeedbackType",
    ),
    "Email Rejected": _SesType(EventKind.REJECT, frozenset({"Reject"}), "reject", None, "reason"),
    "Email Delivery Delayed": _SesType(
        EventKind.DELIVERY_DELAY,
        frozenset({"DeliveryDelay"}),
        "deliveryDelay",
        "delayedRecipients",
        "delayType",
    ),
    "Email Rendering Failed": _SesType(
        EventKind.RENDERING_FAILURE,
        frozenset({"Rendering Failure", "RenderingFailure"}),
        "failure",
        None,
        None,
    ),
}

# The SES detail-types this module reads (the EventBridge rule and the tests use the same list).
SES_DETAIL_TYPES = tuple(_SES_TYPES)


@dataclass(frozen=True)
class SesEvent:
    """One event about one message (or, for an unsubscribe, one address and campaign step).

    ``event_id``: EventBridge's id (the same in a duplicate delivery). ``at``: when it happened, UTC.
    ``message_id``: SES's message id (``None`` for an unsubscribe). ``recipients``: the normalised
    addresses the event is about, at least one. ``task``: the email task it belongs to (the message's
    outreach tags; ``None`` for mail without them). ``bounce_type``: for a bounce only.
    ``subtype``: SES's short word on it (bounce subtype, complaint feedback type, delay type, reject
    reason), for the ledger's ``why``. ``source``: ``aws.ses`` or ``outreach.unsubscribe``.
    """

    event_id: str
    kind: EventKind
    at: datetime
    message_id: str | None
    recipients: tuple[str, ...]
    task: TaskRef | None
    bounce_type: BounceType | None
    source: str
    subtype: str | None = None


# ---- field checks: each names the field it refuses -----------------------------------------------


def _object(value: Any, field: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise MalformedFieldError(field, f"not an object: {type(value).__name__}")
    return value


def _list(value: Any, field: str, max_items: int) -> Sequence[Any]:
    if not isinstance(value, list):
        raise MalformedFieldError(field, f"not a list: {type(value).__name__}")
    if len(value) > max_items:
        raise MalformedFieldError(field, f"{len(value)} entries, more than {max_items}")
    return value


def _text(value: Any, field: str, *, max_chars: int, pattern: re.Pattern[str] | None = None) -> str:
    if not isinstance(value, str) or not value:
        raise MalformedFieldError(field, "missing or not text")
    if len(value) > max_chars:
        raise MalformedFieldError(field, f"{len(value)} characters, more than {max_chars}")
    if pattern is not None and not pattern.fullmatch(value):
        raise MalformedFieldError(field, f"characters outside {pattern.pattern}")
    return value


def _timestamp(value: Any, field: str) -> datetime:
    """An ISO-8601 time with its zone (``2017-08-05T00:41:02.669Z``), as UTC."""
    text = _text(value, field, max_chars=_MAX_TIME_CHARS)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise MalformedFieldError(field, f"not an ISO-8601 time: {text!r}") from exc
    if moment.tzinfo is None:
        raise MalformedFieldError(field, f"time without a zone: {text!r}")
    return moment.astimezone(UTC)


def _address(value: Any, field: str) -> str:
    return contacts.normalise(_text(value, field, max_chars=320), field=field)


def _addresses(values: Sequence[Any], field: str, *, key: str | None) -> tuple[str, ...]:
    """The normalised addresses of a recipient list (strings, or objects whose ``key`` is one), once each."""
    found: dict[str, None] = {}
    for index, entry in enumerate(values):
        where = f"{field}[{index}]"
        if key is not None:
            entry = _object(entry, where).get(key)
            where = f"{where}.{key}"
        found.setdefault(_address(entry, where), None)
    if not found:
        raise MalformedFieldError(field, "names no recipient")
    return tuple(found)


def _subtype(value: Any, field: str) -> str:
    """SES's short word on an event (``General``, ``abuse``): text, kept for people to read, so a word
    SES adds later is shortened and its unexpected characters replaced rather than the event refused."""
    if not isinstance(value, str):
        raise MalformedFieldError(field, f"not text: {type(value).__name__}")
    return _NOT_SUBTYPE.sub("_", value[:_MAX_SUBTYPE_CHARS]) or "_"


def _step(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _MAX_STEP:
        raise MalformedFieldError(field, f"not a step number 1-{_MAX_STEP}: {str(value)[:40]!r}")
    return value


def _campaign_id(value: Any, field: str) -> str:
    try:
        return validate_job_id(value)
    except InvalidJobInputError as exc:
        raise MalformedFieldError(field, str(exc)) from exc


def _tag_value(value: Any, field: str) -> str:
    """One tag value: text of at most 256 characters (SES's own tags may be empty)."""
    if not isinstance(value, str):
        raise MalformedFieldError(field, f"not text: {type(value).__name__}")
    if len(value) > _MAX_TAG_CHARS:
        raise MalformedFieldError(field, f"{len(value)} characters, more than {_MAX_TAG_CHARS}")
    return value


def _tags(value: Any, field: str) -> dict[str, list[str]]:
    """``mail.tags`` as SES publishes it: each tag name with its list of values, all bounded text."""
    given = _object(value, field)
    if len(given) > _MAX_TAGS:
        raise MalformedFieldError(field, f"{len(given)} tags, more than {_MAX_TAGS}")
    tags: dict[str, list[str]] = {}
    for name, values in given.items():
        _text(name, f"{field} (a tag name)", max_chars=_MAX_TAG_CHARS)
        where = f"{field}.{name}"
        tags[name] = [
            _tag_value(item, f"{where}[{i}]") for i, item in enumerate(_list(values, where, max_items=10))
        ]
    return tags


# ---- the two families ----------------------------------------------------------------------------


def _load(body: Any) -> Mapping[str, Any]:
    if not isinstance(body, str):
        raise UnparseableRecordError(f"body: not text ({type(body).__name__})")
    size = len(body.encode("utf-8", errors="surrogatepass"))
    if size > MAX_BODY_BYTES:
        raise MalformedFieldError("body", f"{size:,} bytes, more than {MAX_BODY_BYTES:,}")
    try:
        envelope = json.loads(body)
    except RecursionError as exc:
        raise UnparseableRecordError("body: JSON nested too deep") from exc
    except ValueError as exc:
        raise UnparseableRecordError(f"body: not JSON ({exc.__class__.__name__})") from exc
    if not isinstance(envelope, dict):
        raise UnparseableRecordError(f"body: not a JSON object ({type(envelope).__name__})")
    return envelope


def _ses_event(envelope: Mapping[str, Any], declared: _SesType, event_id: str, at: datetime) -> SesEvent:
    detail = _object(envelope.get("detail"), "detail")
    event_type = _text(detail.get("eventType"), "detail.eventType", max_chars=_MAX_SUBTYPE_CHARS)
    if event_type not in declared.event_types:
        raise MalformedFieldError("detail.eventType", f"{event_type!r} does not match the detail-type")
    mail = _object(detail.get("mail"), "detail.mail")
    message_id = _text(mail.get("messageId"), "detail.mail.messageId", max_chars=_MAX_ID_CHARS, pattern=_ID)
    task = None
    if mail.get("tags") is not None:
        tags = _tags(mail["tags"], "detail.mail.tags")
        try:
            task = ses_tags.task_ref(tags)
        except MalformedFieldError as exc:
            raise MalformedFieldError(f"detail.mail.tags.{exc.field}", exc.reason) from exc
    name = declared.object_name
    required = declared.kind in {EventKind.BOUNCE, EventKind.COMPLAINT}
    own = detail.get(name)
    if own is None and not required:
        own = {}
    own = _object(own, f"detail.{name}")
    recipients_field = declared.recipients_field
    if recipients_field is not None and (required or own.get(recipients_field) is not None):
        field = f"detail.{name}.{recipients_field}"
        key = None if declared.kind is EventKind.DELIVERY else "emailAddress"
        recipients = _addresses(_list(own.get(recipients_field), field, MAX_RECIPIENTS), field, key=key)
    else:
        field = "detail.mail.destination"
        recipients = _addresses(_list(mail.get("destination"), field, MAX_RECIPIENTS), field, key=None)
    bounce_type = None
    if declared.kind is EventKind.BOUNCE:
        raw = _text(own.get("bounceType"), "detail.bounce.bounceType", max_chars=_MAX_SUBTYPE_CHARS)
        if raw not in _BOUNCE_TYPES:
            raise MalformedFieldError(
                "detail.bounce.bounceType", f"not Permanent, Transient or Undetermined: {raw!r}"
            )
        bounce_type = _BOUNCE_TYPES[raw]
    subtype = None
    if declared.subtype_field is not None and own.get(declared.subtype_field) is not None:
        subtype = _subtype(own[declared.subtype_field], f"detail.{name}.{declared.subtype_field}")
    return SesEvent(
        event_id=event_id,
        kind=declared.kind,
        at=at,
        message_id=message_id,
        recipients=recipients,
        task=task,
        bounce_type=bounce_type,
        source=SES_SOURCE,
        subtype=subtype,
    )


def _unsubscribe_event(envelope: Mapping[str, Any], event_id: str) -> SesEvent:
    detail = _object(envelope.get("detail"), "detail")
    address = _address(detail.get("address"), "detail.address")
    campaign_id = _campaign_id(detail.get("campaign_id"), "detail.campaign_id")
    step = _step(detail.get("step"), "detail.step")
    task_id = _text(detail.get("task_id"), "detail.task_id", max_chars=_MAX_ID_CHARS)
    if task_id != email_task_id(campaign_id, address, step):
        raise MalformedFieldError("detail.task_id", "is not the task of this campaign, address and step")
    return SesEvent(
        event_id=event_id,
        kind=EventKind.UNSUBSCRIBE,
        at=_timestamp(detail.get("at"), "detail.at"),
        message_id=None,
        recipients=(address,),
        task=TaskRef(campaign_id=campaign_id, step=step, task_id=task_id),
        bounce_type=None,
        source=UNSUBSCRIBE_SOURCE,
    )


def parse(body: str) -> SesEvent:
    """The event a queue message carries; ``MalformedFieldError`` naming the field it cannot take,
    ``UnparseableRecordError`` for a body that is no JSON object."""
    envelope = _load(body)
    event_id = _text(envelope.get("id"), "id", max_chars=_MAX_ID_CHARS, pattern=_ID)
    source = _text(envelope.get("source"), "source", max_chars=_MAX_ID_CHARS)
    detail_type = _text(envelope.get("detail-type"), "detail-type", max_chars=_MAX_ID_CHARS)
    at = _timestamp(envelope.get("time"), "time")
    if source == SES_SOURCE:
        declared = _SES_TYPES.get(detail_type)
        if declared is None:
            raise MalformedFieldError(
                "detail-type", f"not an SES sending event this queue takes: {detail_type!r}"
            )
        return _ses_event(envelope, declared, event_id, at)
    if source == UNSUBSCRIBE_SOURCE:
        if detail_type != UNSUBSCRIBE_DETAIL_TYPE:
            raise MalformedFieldError("detail-type", f"not {UNSUBSCRIBE_DETAIL_TYPE!r}: {detail_type!r}")
        return _unsubscribe_event(envelope, event_id)
    raise MalformedFieldError("source", f"not {SES_SOURCE} or {UNSUBSCRIBE_SOURCE}: {source[:80]!r}")


def why_unsubscribed(campaign_id: str, step: int) -> str:
    """The ledger's ``why`` of a one-click unsubscribe (the endpoint's write and the consumer's rewrite)."""
    return f"one-click unsubscribe (campaign {campaign_id}, step {step})"


def unsubscribe_message(campaign_id: str, step: int, address: str, at: datetime) -> str:
    """The fan-out message the unsubscribe endpoint queues for one recorded unsubscribe (``parse`` reads
    it back as an ``UNSUBSCRIBE`` event); ``address`` is normalised, ``at`` is when it was recorded."""
    normalised = contacts.normalise(address)
    when = utc_iso(at)
    return json.dumps(
        {
            "version": "0",
            "id": str(uuid.uuid4()),
            "detail-type": UNSUBSCRIBE_DETAIL_TYPE,
            "source": UNSUBSCRIBE_SOURCE,
            "time": when,
            "detail": {
                "address": normalised,
                "campaign_id": campaign_id,
                "step": step,
                "task_id": email_task_id(campaign_id, normalised, step),
                "at": when,
            },
        },
        sort_keys=True,
    )
