"""What an inbound message is: ``classify(msg) -> Classification``, one of the ``Kind`` values.

The rules, in order (the first that holds decides):

1. A DSN (``dsn.parse_dsn``, RFC 3464) is a ``BOUNCE``, with its report, whatever else it carries: a
   DSN is automatic too (Postfix sends its bounces with ``Auto-Submitted: auto-replied``, every DSN
   goes out with a null reverse-path, RFC 5321 section 4.5.5), but it is about a message we sent, not
   a reply to it.
2. Mail from ``MAILER-DAEMON`` or ``postmaster`` without such a report is a ``BOUNCE`` when its text
   names a recipient and a permanent (``5.x.x``) status (``dsn.parse_plain_bounce``); otherwise it is
   an ``AUTO_REPLY`` that is not out of office (reason ``mail system notice without a report``): a
   machine wrote it, nothing in it says which address failed or for good, so it must neither stop an
   address nor count as a person's answer. A delay warning in plain text is such a notice.
3. Mail to the unsubscribe address is an ``UNSUBSCRIBE``: a recipient (``To``, ``Cc``,
   ``Delivered-To``) whose local part is ``unsubscribe_local_part`` or starts with it and ``+`` (a
   ``mailto:`` List-Unsubscribe address, RFC 2369 section 3.2, with a tag). Whatever the body says: such
   a mail is often blank, and a mail client's unsubscribe button may send it for the person.
4. An automatic message (``auto_reply.is_automatic`` by its header fields, or ``says_automatic`` by
   its subject or wording) is an ``AUTO_REPLY``; ``out_of_office`` when ``looks_out_of_office`` says
   so of its subject and its own text (``reply_split.new_text``), and then ``away_until`` is the date
   ``return_date`` reads there, else ``received`` plus ``return_date.DEFAULT_AWAY_DAYS``.
5. Anything else is a ``HUMAN_REPLY``.

``UNPARSEABLE`` is what :func:`classify_raw` answers for bytes ``message.parse`` refuses;
``UNMATCHED`` is never answered here: callers use it for mail that matches no email we sent.

``reason`` is a short text safe for logs: it is made of this module's own words, rule names, header
field names and RFC 3463 status codes, never of the message's addresses, subject or body.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum

from outreach import clock
from outreach.errors import UnparseableMessageError
from outreach.inbound import auto_reply, dsn, reply_split
from outreach.inbound.dsn import DeliveryReport
from outreach.inbound.message import InboundMessage, parse
from outreach.inbound.return_date import DEFAULT_AWAY_DAYS, return_date

DEFAULT_UNSUBSCRIBE_LOCAL_PART = "unsubscribe"


class Kind(StrEnum):
    """What an inbound message is (module docstring)."""

    HUMAN_REPLY = "HUMAN_REPLY"
    AUTO_REPLY = "AUTO_REPLY"
    BOUNCE = "BOUNCE"
    UNSUBSCRIBE = "UNSUBSCRIBE"
    UNMATCHED = "UNMATCHED"
    UNPARSEABLE = "UNPARSEABLE"


@dataclass(frozen=True)
class Classification:
    """One message's kind. ``out_of_office`` and ``away_until`` for an ``AUTO_REPLY`` only (``away_until``
    set exactly when ``out_of_office``); ``bounce`` for a ``BOUNCE`` only; ``reason`` safe for logs."""

    kind: Kind
    reason: str
    out_of_office: bool = False
    away_until: date | None = None
    bounce: DeliveryReport | None = None


def _bounce(report: DeliveryReport, rule: str) -> Classification:
    action = next((str(recipient.action) for recipient in report.recipients if recipient.action), "unknown")
    return Classification(Kind.BOUNCE, f"{rule}: {action} {report.status or 'without status'}", bounce=report)


def _to_unsubscribe(msg: InboundMessage, local_part: str) -> bool:
    wanted = local_part.lower()
    for address in msg.recipients:
        local = address.rpartition("@")[0]
        if local == wanted or local.startswith(wanted + "+"):
            return True
    return False


def _received(msg: InboundMessage, received: datetime | None) -> datetime:
    """When the message arrived: as given (SES's receipt time), else its ``Date``, else now."""
    if received is not None:
        return received
    if msg.date is not None:
        return msg.date
    return datetime.fromtimestamp(clock.now(), UTC)


def _automatic(msg: InboundMessage, text: str, received: datetime | None, why: str) -> Classification:
    if not auto_reply.looks_out_of_office(msg.subject, text):
        return Classification(Kind.AUTO_REPLY, f"automatic ({why}), not out of office")
    arrived = _received(msg, received)
    named = return_date(f"{msg.subject}\n{text}", received=arrived)
    if named is not None:
        return Classification(Kind.AUTO_REPLY, f"out of office ({why}), return date named", True, named)
    away_until = arrived.date() + timedelta(days=DEFAULT_AWAY_DAYS)
    reason = f"out of office ({why}), no return date: {DEFAULT_AWAY_DAYS} days assumed"
    return Classification(Kind.AUTO_REPLY, reason, True, away_until)


def classify(
    msg: InboundMessage,
    *,
    unsubscribe_local_part: str = DEFAULT_UNSUBSCRIBE_LOCAL_PART,
    received: datetime | None = None,
) -> Classification:
    """The kind of ``msg`` by the module's rules; ``received`` is when it arrived (default: its
    ``Date``), the day a return date without a year and the default absence count from."""
    report = dsn.parse_dsn(msg)
    if report is not None:
        return _bounce(report, "delivery status notification")
    if msg.from_local_part in ("mailer-daemon", "postmaster"):
        plain = dsn.parse_plain_bounce(msg)
        if plain is not None:
            return _bounce(plain, "mail system bounce without a report")
        return Classification(Kind.AUTO_REPLY, "mail system notice without a report")
    if _to_unsubscribe(msg, unsubscribe_local_part):
        return Classification(Kind.UNSUBSCRIBE, "mail to the unsubscribe address")
    text = reply_split.new_text(msg.body)
    marker = auto_reply.automatic_marker(msg)
    if marker is not None:
        return _automatic(msg, text, received, f"{marker} header")
    if auto_reply.says_automatic(msg.subject, text):
        return _automatic(msg, text, received, "wording")
    return Classification(Kind.HUMAN_REPLY, "no automatic marker")


def classify_raw(
    raw: bytes,
    *,
    unsubscribe_local_part: str = DEFAULT_UNSUBSCRIBE_LOCAL_PART,
    received: datetime | None = None,
) -> Classification:
    """``classify`` of the parsed ``raw``; ``UNPARSEABLE`` (with the refusal as ``reason``) for bytes
    ``message.parse`` refuses."""
    try:
        msg = parse(raw)
    except UnparseableMessageError as refused:  # outcome: answered as UNPARSEABLE, never retried
        return Classification(Kind.UNPARSEABLE, f"unparseable: {refused.reason}")
    return classify(msg, unsubscribe_local_part=unsubscribe_local_part, received=received)
