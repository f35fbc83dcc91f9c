"""An inbound message forwarded to a person unchanged: a new header block over the original body bytes.

``forwarded(raw, ...)`` keeps everything after the original's header section (RFC 5322 section 2.1:
the first empty line) byte for byte, so the body and every attachment arrive exactly as they came.
The header section is new:

- ``From`` the forwarder (``FORWARD_FROM``, an SES identity: SES sends only from a verified one),
  ``To`` the owner mailbox, ``Reply-To`` the original sender (a person answers the prospect, not the
  forwarder), ``Subject`` the original's (RFC 2047 encoded where it is not ASCII);
- ``X-Outreach-Inbound`` (``reply``, ``auto-reply``, ``unmatched``, ``unparseable``) and, for a matched
  message, ``X-Outreach-Campaign`` and ``X-Outreach-Step``;
- of the original's fields only the ones its body needs to be read: ``MIME-Version`` and the
  ``Content-*`` fields (RFC 2045, RFC 2183), copied line for line. Everything else is left out: the
  ``DKIM-Signature`` (it would fail over the new header), ``Return-Path``, ``Sender``, ``Message-ID``
  (SES writes its own), the trace fields, and so every field SES accepts only once
  (https://docs.aws.amazon.com/ses/latest/dg/header-fields.html) appears once.

Every value is checked with ``email_task.check_header``; a copied field that is not printable ASCII
or has a line over 998 characters (RFC 5322 section 2.1.1) makes the message ``UnforwardableMessageError``,
as does SES refusing it (``MessageRejected``: an attachment type SES does not send, a virus,
https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_SendEmail.html#API_SendEmail_Errors). Such a
message, and one too big to read, is forwarded as a ``notice``: a short text naming the S3 object.

``send`` is SES v2 SendEmail with ``Raw`` content (https://docs.aws.amazon.com/ses/latest/dg/send-email-raw.html)
and no configuration set: a forward is not a campaign send and publishes no events. SES's answer
decides what happened, as in the email worker: an error response or a connection that was never made
proves nothing was sent (raised, so the record is retried); anything else may follow an accepted
request and is ``ForwardOutcomeUnknownError`` (an email cannot be taken back: it is never sent again).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from email.errors import HeaderParseError, MessageError
from email.message import EmailMessage
from email.policy import SMTP

from botocore.exceptions import ClientError

from outreach import clients
from outreach.email_task import check_header
from outreach.errors import ForwardOutcomeUnknownError, UnforwardableMessageError, UnsafeEmailError
from outreach.inbound.message import InboundMessage
from outreach.ses_send_errors import NOT_SENT_ERRORS, error_code

MARKS = ("reply", "auto-reply", "unmatched", "unparseable")
# The original's fields a body needs to be read (RFC 2045 section 3, RFC 2183).
_BODY_FIELDS = re.compile(rb"(?:mime-version|content-[a-z0-9-]+)", re.IGNORECASE)
_FIELD_NAME = re.compile(rb"([\x21-\x39\x3b-\x7e]+)[ \t]*:")
_MAX_LINE = 998
_SUBJECT_CHARS = 998
_HEADER_ERRORS = (HeaderParseError, MessageError, ValueError, TypeError, IndexError, UnsafeEmailError)


@dataclass(frozen=True)
class Labels:
    """What a forward says of itself: its mark, and the campaign and step it answers (if matched)."""

    mark: str
    campaign_id: str | None = None
    step: int | None = None

    def __post_init__(self) -> None:
        if self.mark not in MARKS:
            raise ValueError(f"mark must be one of {MARKS}, got {self.mark!r}")


def split(raw: bytes) -> tuple[bytes, bytes, bytes]:
    """``raw``'s header section, its line ending (``\\r\\n`` or ``\\n``) and its body (everything after
    the first empty line; empty when there is none)."""
    crlf, lf = raw.find(b"\r\n\r\n"), raw.find(b"\n\n")
    if crlf != -1 and (lf == -1 or crlf <= lf):
        return raw[: crlf + 2], b"\r\n", raw[crlf + 4 :]
    if lf != -1:
        return raw[: lf + 1], b"\n", raw[lf + 2 :]
    ending = b"\r\n" if b"\r\n" in raw else b"\n"
    return raw if raw.endswith(ending) or not raw else raw + ending, ending, b""


def _fields(header: bytes) -> list[tuple[bytes, list[bytes]]]:
    """The header section's fields: each name and its physical lines (folding kept), line ends cut."""
    found: list[tuple[bytes, list[bytes]]] = []
    for line in header.replace(b"\r\n", b"\n").split(b"\n"):
        if not line:
            continue
        if line[:1] in (b" ", b"\t") and found:
            found[-1][1].append(line)
            continue
        named = _FIELD_NAME.match(line)
        found.append((named.group(1).lower() if named else b"", [line]))
    return found


def body_fields(header: bytes, linesep: bytes) -> bytes:
    """The original's ``MIME-Version`` and ``Content-*`` fields, line for line, each checked."""
    kept: list[bytes] = []
    for name, lines in _fields(header):
        if not name or not _BODY_FIELDS.fullmatch(name):
            continue
        field = name.decode("ascii")
        for line in lines:
            if len(line) > _MAX_LINE or not line.isascii():
                raise UnforwardableMessageError(f"{field}: a line that is not ASCII or over {_MAX_LINE}")
        try:
            check_header(field, b" ".join(line.strip() for line in lines).decode("ascii"))
        except UnsafeEmailError as exc:
            raise UnforwardableMessageError(f"{field}: a control character") from exc
        kept.extend(line + linesep for line in lines)
    return b"".join(kept)


def _reply_to(msg: InboundMessage) -> list[str]:
    """What the forward's Reply-To may be, best first: the original ``From`` as written (display name
    and all) where it reads safely, then its bare address; none for a message without a sender."""
    if msg.from_address is None:
        return []
    try:
        written = msg.source.get("from")
        text = check_header("Reply-To", str(written)) if written is not None else ""
    except _HEADER_ERRORS:  # outcome: only the bare address is offered
        text = ""
    offered = [text] if text and len(text) <= _SUBJECT_CHARS else []
    return [*offered, msg.from_address]


def _labelled(labels: Labels) -> dict[str, str]:
    fields = {"X-Outreach-Inbound": labels.mark}
    if labels.campaign_id is not None:
        fields["X-Outreach-Campaign"] = labels.campaign_id
    if labels.step is not None:
        fields["X-Outreach-Step"] = str(labels.step)
    return fields


def _header_block(fields: dict[str, str], linesep: bytes, reply_to: list[str]) -> bytes:
    """New header fields as ``linesep``-ended lines, folded and encoded by ``email.policy.SMTP``; the
    first of ``reply_to`` that renders is the Reply-To."""
    policy = SMTP.clone(linesep=linesep.decode("ascii"))
    for choice in [*reply_to, None]:
        message = EmailMessage(policy=policy)
        for name, value in fields.items():
            message[name] = check_header(name, value)
        try:
            if choice is not None:
                message["Reply-To"] = choice
            rendered = message.as_bytes()
        except _HEADER_ERRORS:  # outcome: the next choice (at last, no Reply-To) is tried
            continue
        return rendered[: -len(linesep)]
    raise UnforwardableMessageError("its header fields cannot be written")


def forwarded(raw: bytes, msg: InboundMessage | None, *, sender: str, to: str, labels: Labels) -> bytes:
    """``raw`` with the new header section (module docstring); ``UnforwardableMessageError`` when its
    own MIME fields cannot be copied safely."""
    header, linesep, body = split(raw)
    subject = (msg.subject if msg is not None else "") or "(no subject)"
    fields = {"From": sender, "To": to, "Subject": subject[:_SUBJECT_CHARS], **_labelled(labels)}
    new = _header_block(fields, linesep, _reply_to(msg) if msg is not None else [])
    return new + body_fields(header, linesep) + linesep + body


def notice(
    *, sender: str, to: str, labels: Labels, why: str, bucket: str, key: str, ses_message_id: str
) -> bytes:
    """A short text message about an inbound message that is not forwarded whole: why, and where it
    is kept (``why`` is the processor's own wording, never the message's)."""
    message = EmailMessage(policy=SMTP)
    for name, value in {
        "From": sender,
        "To": to,
        "Subject": f"Inbound message not forwarded whole: {why}",
        **_labelled(labels),
    }.items():
        message[name] = check_header(name, value)
    lines = [
        "An inbound message at the reply domain could not be forwarded as it came.",
        f"Why: {why}.",
        f"It is kept in S3: bucket {bucket}, key {key} (SES message id {ses_message_id}),",
        "until the bucket's retention deletes it.",
    ]
    if labels.campaign_id is not None:
        lines.append(f"It answers campaign {labels.campaign_id}, step {labels.step}.")
    message.set_content("\n".join(lines) + "\n")
    return message.as_bytes()


def send(data: bytes, *, sender: str, to: str) -> str:
    """Send ``data`` (a whole message) from ``sender`` to ``to``; SES's message id.

    ``UnforwardableMessageError`` when SES refused this message (``MessageRejected``); another SES
    error or a connection never made raises as it is (nothing was sent); anything else is
    ``ForwardOutcomeUnknownError``.
    """
    try:
        response = clients.sesv2().send_email(
            FromEmailAddress=sender, Destination={"ToAddresses": [to]}, Content={"Raw": {"Data": data}}
        )
    except ClientError as exc:
        if error_code(exc) == "MessageRejected":
            raise UnforwardableMessageError("SES refused to send it (MessageRejected)") from exc
        raise
    except NOT_SENT_ERRORS:
        raise
    except Exception as exc:
        # outcome: the request may have reached SES; raised as ForwardOutcomeUnknownError, never resent
        raise ForwardOutcomeUnknownError(f"{type(exc).__name__}: {exc}") from exc
    return str(response["MessageId"])
