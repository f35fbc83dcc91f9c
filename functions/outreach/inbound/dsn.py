"""Delivery status notifications (RFC 3464) read into a ``DeliveryReport``: which recipient, what
happened, how permanent, and which of our messages it is about.

A DSN is a ``multipart/report`` (RFC 6522 section 3) with ``report-type=delivery-status``: a
human-readable part, a ``message/delivery-status`` part (RFC 3464 section 2; its RFC 6533
UTF-8 form ``message/global-delivery-status`` is read too) and, optionally, the original message
(``message/rfc822``) or its header (``text/rfc822-headers``, RFC 6522 section 4). A report without the
``report-type`` parameter is read when it has the delivery-status part.

The delivery-status part is one per-message block and one block per recipient (RFC 3464 sections 2.2
and 2.3), each a set of header-like fields. Read per recipient: ``Final-Recipient`` and
``Original-Recipient`` (``address-type; address``, section 2.3.1-2), ``Action`` (section 2.3.3:
``failed``, ``delayed``, ``delivered``, ``relayed``, ``expanded``), ``Status`` (section 2.3.4, an RFC
3463 code ``class.subject.detail``: class 5 permanent, 4 transient, 2 success) and ``Diagnostic-Code``
(section 2.3.6), cleaned and at most :data:`MAX_DIAGNOSTIC_CHARS`; per message ``Reporting-MTA``.
At most :data:`MAX_RECIPIENT_BLOCKS` blocks are read. The diagnostic is the remote server's text: it
often quotes the recipient's address, so it is data for the task row, not for a log line.

Mail from ``MAILER-DAEMON`` or ``postmaster`` without such a report (qmail, old Exim and Sendmail
bounces) is read by :func:`parse_plain_bounce`: a report only when its text names a recipient address
and an RFC 3463 permanent status (``5.x.x``, qmail's ``#5.1.1``) near it.
"""

from __future__ import annotations

import base64
import binascii
import quopri
import re
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import Message
from email.parser import HeaderParser
from email.policy import default as default_policy
from enum import StrEnum
from itertools import islice

from outreach.inbound.message import (
    InboundMessage,
    clean,
    message_ids,
    normalise_address,
    parse,
    part_text,
    raw_values,
)

MAX_RECIPIENT_BLOCKS = 100
MAX_DIAGNOSTIC_CHARS = 500
_MAX_FIELD_CHARS = 998
_MAX_REPORT_CHARS = 256 * 1024
_DELIVERY_STATUS_TYPES = frozenset({"message/delivery-status", "message/global-delivery-status"})
_REPORT_TYPES = frozenset({"delivery-status", "global-delivery-status"})
_ORIGINAL_TYPES = frozenset({"message/rfc822", "message/global", "text/rfc822-headers"})
# RFC 3463 section 2: class "." subject (1-3 digits) "." detail (1-3 digits).
_STATUS = re.compile(r"(?<![\d.])([245])\.(\d{1,3})\.(\d{1,3})(?![\d.]\d)")
_FIELD = re.compile(r"([A-Za-z][A-Za-z0-9-]*)[ \t]*:[ \t]*(.*)")
_ADDRESS_IN_TEXT = re.compile(r"<?([^\s<>()\[\],;:\"@]+@[A-Za-z0-9.-]+\.[A-Za-z0-9-]{2,})>?")
_MAIL_SYSTEMS = frozenset({"mailer-daemon", "postmaster"})
_ORIGINAL_ID_IN_TEXT = re.compile(r"^\s*message-id\s*:\s*(<[^<>\s]+>)", re.IGNORECASE | re.MULTILINE)
# How far before a plain bounce's status its recipient may be named (qmail: "<a@b>:\n...(#5.1.1)").
_PLAIN_RECIPIENT_WINDOW = 600


class Action(StrEnum):
    """RFC 3464 section 2.3.3: what the reporting MTA did for the recipient."""

    FAILED = "failed"
    DELAYED = "delayed"
    DELIVERED = "delivered"
    RELAYED = "relayed"
    EXPANDED = "expanded"


_ACTIONS = frozenset(action.value for action in Action)


@dataclass(frozen=True)
class RecipientReport:
    """One recipient's block. ``status`` is the RFC 3463 code (``5.1.1``), ``None`` if absent or
    malformed; ``action`` ``None`` for a value RFC 3464 does not define."""

    final_recipient: str | None
    original_recipient: str | None
    action: Action | None
    status: str | None
    diagnostic: str | None

    @property
    def permanent(self) -> bool:
        """A class 5 status: no retry will deliver this message to this recipient."""
        return self.status is not None and self.status.startswith("5.")

    @property
    def transient(self) -> bool:
        """A class 4 status: the MTA may still deliver, or send a final report later."""
        return self.status is not None and self.status.startswith("4.")


@dataclass(frozen=True)
class DeliveryReport:
    """A DSN: its recipients' blocks (at least one), the reporting MTA, and the ``Message-ID`` of the
    original message (msg-id contents, as ``InboundMessage.message_id``) if the report includes it."""

    recipients: tuple[RecipientReport, ...]
    reporting_mta: str | None
    original_message_id: str | None

    @property
    def status(self) -> str | None:
        """The most severe status of the report (5 before 4 before 2), the first of that class."""
        for prefix in ("5.", "4.", "2."):
            for recipient in self.recipients:
                if recipient.status is not None and recipient.status.startswith(prefix):
                    return recipient.status
        return None

    @property
    def permanent(self) -> bool:
        """Whether any recipient failed permanently (a hard bounce)."""
        return any(recipient.permanent for recipient in self.recipients)


def parse_dsn(msg_or_raw: InboundMessage | bytes) -> DeliveryReport | None:
    """The delivery report of a DSN, or ``None`` for any other message (``UnparseableMessageError``
    if raw bytes are refused by ``message.parse``)."""
    msg = parse(msg_or_raw) if isinstance(msg_or_raw, bytes | bytearray) else msg_or_raw
    source = msg.source
    if source.get_content_type() != "multipart/report":
        return None
    if msg.report_type is not None and msg.report_type not in _REPORT_TYPES:
        return None
    children = [part for part in _children(source) if isinstance(part, Message)]
    status_parts = [part for part in children if part.get_content_type() in _DELIVERY_STATUS_TYPES]
    if not status_parts:
        return None
    blocks = list(islice(_blocks(status_parts[0]), MAX_RECIPIENT_BLOCKS + 1))
    # The per-message block comes first; a report that leaves it out starts with a recipient's.
    per_message = blocks.pop(0) if blocks and "final-recipient" not in blocks[0] else {}
    recipients = tuple(
        recipient
        for recipient in (_recipient(block) for block in blocks[:MAX_RECIPIENT_BLOCKS])
        if recipient is not None
    )
    if not recipients:
        return None
    return DeliveryReport(
        recipients=recipients,
        reporting_mta=_typed_value(per_message.get("reporting-mta")),
        original_message_id=_original_message_id(children),
    )


def parse_plain_bounce(msg: InboundMessage) -> DeliveryReport | None:
    """A report for a bounce without a delivery-status part, from ``MAILER-DAEMON`` or ``postmaster``,
    when its text names a permanent status and a recipient (the nearest address before the status,
    else Exim's ``X-Failed-Recipients``); ``None`` otherwise."""
    if msg.from_local_part not in _MAIL_SYSTEMS:
        return None
    text = msg.body[:_MAX_REPORT_CHARS]
    status = next((found for found in _STATUS.finditer(text) if found.group(1) == "5"), None)
    if status is None:
        return None
    before = text[max(0, status.start() - _PLAIN_RECIPIENT_WINDOW) : status.start()]
    named = [address for found in _ADDRESS_IN_TEXT.findall(before) if (address := normalise_address(found))]
    failed_header = msg.header("x-failed-recipients")
    recipient = named[-1] if named else normalise_address(failed_header or "")
    if recipient is None:
        return None
    original_id = _ORIGINAL_ID_IN_TEXT.search(text, status.end())
    original = message_ids(original_id.group(1)) if original_id else []
    report = RecipientReport(recipient, None, Action.FAILED, ".".join(status.groups()), None)
    return DeliveryReport((report,), None, original[0] if original else None)


# ---- the parts -------------------------------------------------------------------------------------


def _children(source: Message) -> list[object]:
    payload = source.get_payload()
    return list(payload) if isinstance(payload, list) else []


def _fields(pairs: Iterator[tuple[str, str]]) -> dict[str, str]:
    """Lower-case field names to cleaned values; the first of a repeated field wins."""
    block: dict[str, str] = {}
    for name, value in pairs:
        block.setdefault(name.lower(), clean(value, _MAX_FIELD_CHARS))
    return block


def _text_blocks(text: str) -> Iterator[dict[str, str]]:
    """Blocks of ``Name: value`` lines (continuation lines folded in), separated by blank lines."""
    pairs: list[tuple[str, str]] = []
    for line in text[:_MAX_REPORT_CHARS].replace("\r\n", "\n").split("\n"):
        if not line.strip():
            if pairs:
                yield _fields(iter(pairs))
            pairs = []
        elif line[0] in " \t" and pairs:
            pairs[-1] = (pairs[-1][0], pairs[-1][1] + " " + line.strip())
        elif found := _FIELD.match(line):
            pairs.append((found.group(1), found.group(2)))
    if pairs:
        yield _fields(iter(pairs))


def _decoded(blocks: list[Message], encoding: str) -> str:
    """The text of a base64 or quoted-printable delivery-status part the parser split as if plain."""
    encoded = "\n".join(block.as_string() for block in blocks).encode("ascii", "replace")
    try:
        data = base64.b64decode(encoded) if encoding == "base64" else quopri.decodestring(encoded)
    except binascii.Error:  # outcome: a broken base64 part has no blocks, so the report has no recipient
        return ""
    return data.decode("utf-8", "replace")


def _blocks(part: Message) -> Iterator[dict[str, str]]:
    """The field blocks of a delivery-status part: the parser splits ``message/delivery-status`` into
    one message per block; any other shape (the global form, an encoded part) is read as text."""
    payload = part.get_payload()
    if not isinstance(payload, list):
        yield from _text_blocks(part_text(part))
        return
    encoding = str(part.get("content-transfer-encoding", "")).strip().lower()
    if encoding in ("base64", "quoted-printable"):
        yield from _text_blocks(
            _decoded([block for block in payload if isinstance(block, Message)], encoding)
        )
        return
    for block in payload:
        if not isinstance(block, Message):
            continue
        yield _fields((name, str(value)) for name, value in block.raw_items())
        rest = block.get_payload()
        if isinstance(rest, str) and rest.strip():
            yield from _text_blocks(rest)


def _typed_value(value: str | None) -> str | None:
    """The value of an ``type; value`` field (``rfc822; a@example.com`` -> ``a@example.com``)."""
    if not value:
        return None
    kind, separator, rest = value.partition(";")
    return (rest if separator else kind).strip() or None


def _recipient(block: dict[str, str]) -> RecipientReport | None:
    final = _typed_value(block.get("final-recipient"))
    if final is None:
        return None
    original = _typed_value(block.get("original-recipient"))
    action_word = (block.get("action") or "").split(" ")[0].lower()
    status = _STATUS.match(block.get("status", "").strip())
    diagnostic = block.get("diagnostic-code")
    return RecipientReport(
        final_recipient=normalise_address(final) or clean(final, 254).lower(),
        original_recipient=None if original is None else normalise_address(original),
        action=Action(action_word) if action_word in _ACTIONS else None,
        status=".".join(status.groups()) if status else None,
        diagnostic=clean(diagnostic, MAX_DIAGNOSTIC_CHARS) if diagnostic else None,
    )


def _original_message_id(children: list[Message]) -> str | None:
    for part in children:
        content_type = part.get_content_type()
        if content_type not in _ORIGINAL_TYPES:
            continue
        header: Message
        if content_type == "text/rfc822-headers":
            header = HeaderParser(policy=default_policy).parsestr(part_text(part)[:_MAX_REPORT_CHARS])
        else:
            inner = part.get_payload()
            if not isinstance(inner, list) or not inner or not isinstance(inner[0], Message):
                continue
            header = inner[0]
        values = raw_values(header, "message-id")
        ids = message_ids(values[0]) if values else []
        if ids:
            return ids[0]
    return None
