"""The records of SES email receiving: the JSON it hands to actions (the ``mail`` and ``receipt``
objects, an SNS topic's notification, a Lambda function's event) and the emulator's record of what it
did with a message (``ReceivedEmail``). The JSON has the fields and shapes of
https://docs.aws.amazon.com/ses/latest/dg/receiving-email-notifications-contents.html and the examples
of receiving-email-notifications-examples.html and receiving-email-action-lambda-event.html.

- ``mail``: ``timestamp`` (when SES received the message), ``source`` (the envelope MAIL FROM),
  ``messageId`` (SES's id, also the S3 object name), ``destination`` ("all recipient addresses
  (including To: and CC:) from the MIME headers"), ``headersTruncated`` ("if the headers are larger
  than 10 KB"), ``headers`` (``name``/``value`` pairs, in the message's order) and ``commonHeaders``
  (only the ones the message has: ``from``, ``to``, ``cc``, ``bcc``, ``replyTo`` as lists of addresses;
  ``returnPath`` without its angle brackets, ``sender``, ``date``, ``messageId``, ``subject`` as
  strings, as the examples show; ``sender`` a string and ``subject`` decoded from RFC 2047 words as
  events captured from SES show, which the pages leave open). Header values are unfolded.
- ``receipt``: ``timestamp`` (when the action was triggered), ``processingTimeMillis`` (received to
  triggered), ``recipients`` (the envelope recipients the rule matched), the ``spamVerdict``,
  ``virusVerdict``, ``spfVerdict``, ``dkimVerdict`` and ``dmarcVerdict`` objects (``{"status": ...}``;
  spam and virus ``DISABLED`` when the rule does not scan: the pages leave that value out, events
  captured from SES show it), ``dmarcPolicy`` only when DMARC failed, and ``action`` (``type``
  ``S3``/``SNS``/``Bounce``/``Lambda``/``Stop``/``WorkMail`` with that type's fields: ``bucketName``/
  ``objectKey``, ``functionArn``/``invocationType``, ``topicArn``, ``encoding`` for SNS,
  ``smtpReplyCode``/``statusCode``/``message``/``sender`` for Bounce).
- An SNS action's notification carries ``content``, the raw message (UTF-8 text or Base64); no other
  notification does (notifications-contents, "Top-level JSON object").
- A Lambda action's event is ``{"Records": [{"eventSource": "aws:ses", "eventVersion": "1.0",
  "ses": {"mail": ..., "receipt": ...}}]}`` without the message body (receiving-email-action-lambda.html,
  "Input format").
"""

from __future__ import annotations

import base64
import re
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.header import decode_header, make_header
from email.message import Message
from email.parser import BytesParser
from email.policy import compat32
from email.utils import formataddr, getaddresses, parseaddr
from typing import Any

HEADERS_LIMIT = 10 * 1024  # mail.headersTruncated: "if the headers are larger than 10 KB"
NOTIFICATION_SUBJECT = "Amazon SES Email Receipt Notification"  # receiving-email-action-lambda-event.html
_ID_ALPHABET = "0123456789abcdefghijklmnopqrstuv"  # the examples' ids: d6iitobk75ur44p8kdnnp7g2n800
_FOLD = re.compile(r"\r?\n(?=[ \t])")
_ADDRESS_HEADERS = {
    "from": "from",
    "to": "to",
    "cc": "cc",
    "bcc": "bcc",
    "reply-to": "replyTo",
}
_TEXT_HEADERS = {"sender": "sender", "date": "date", "message-id": "messageId", "subject": "subject"}


# The receipt action members of a rule (API_ReceiptAction) and the action types they report.
ACTION_TYPES = {
    "S3Action": "S3",
    "LambdaAction": "Lambda",
    "SNSAction": "SNS",
    "StopAction": "Stop",
    "AddHeaderAction": "AddHeader",
    "BounceAction": "Bounce",
    "WorkmailAction": "WorkMail",
    "ConnectAction": "Connect",
}


@dataclass(frozen=True)
class ActionRun:
    """One action of a matched rule: ``outcome`` is ``done``, ``failed``, ``bounced`` or ``not emulated``."""

    rule: str
    type: str
    outcome: str
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class ReceivedEmail:
    """What SES did with one message: accepted or rejected (``reason``), the rules that ran, their
    actions, the S3 objects written (bucket, key) and what ended the rule set early, if anything."""

    message_id: str
    accepted: bool = False
    reason: str | None = None
    rules: list[str] = field(default_factory=list)
    actions: list[ActionRun] = field(default_factory=list)
    s3_objects: list[tuple[str, str]] = field(default_factory=list)
    stopped_by: str | None = None

    @property
    def s3_keys(self) -> list[str]:
        return [key for _, key in self.s3_objects]


def new_message_id() -> str:
    """An id in SES's inbound form: 40 lowercase letters and digits, like the examples' ids."""
    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(40))


def stamp(moment: float) -> str:
    """ISO 8601 in UTC with milliseconds, as the examples write ``timestamp``."""
    return datetime.fromtimestamp(moment, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


@dataclass(frozen=True)
class Verdicts:
    """The receipt's verdicts (PASS by default); ``dmarc_policy`` is reported only when DMARC fails."""

    spam: str = "PASS"
    virus: str = "PASS"
    spf: str = "PASS"
    dkim: str = "PASS"
    dmarc: str = "PASS"
    dmarc_policy: str = "none"


def _text(value: Any) -> str:
    """A header value as text: unfolded, undecodable bytes replaced (SNS and JSON need valid UTF-8)."""
    raw = str(value).encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return _FOLD.sub("", raw).strip()


def parse_headers(raw: bytes) -> Message:
    """The message's header section, parsed with the standard ``email`` package (the body is not read)."""
    return BytesParser(policy=compat32).parsebytes(raw, headersonly=True)


def _headers(message: Message) -> tuple[list[dict[str, str]], bool]:
    """The header list, cut where it would pass 10 KB; whether it was cut."""
    listed: list[dict[str, str]] = []
    size = 0
    for name, value in message.items():
        text = _text(value)
        size += len(name) + len(text) + 4  # "Name: value\r\n"
        if size > HEADERS_LIMIT:
            return listed, True
        listed.append({"name": name, "value": text})
    return listed, False


def _addresses(message: Message, name: str) -> list[str]:
    values = [_text(v) for v in message.get_all(name, [])]
    return [formataddr(pair) for pair in getaddresses(values) if pair[1]]


def _decoded(text: str) -> str:
    """RFC 2047 encoded words decoded; the text as it is when they do not decode."""
    try:
        return str(make_header(decode_header(text)))
    except (LookupError, UnicodeDecodeError, ValueError):  # outcome: the undecoded text is kept
        return text


def common_headers(message: Message) -> dict[str, Any]:
    common: dict[str, Any] = {}
    return_path = message.get("Return-Path")
    if return_path is not None:
        common["returnPath"] = parseaddr(_text(return_path))[1]
    for header, key in _ADDRESS_HEADERS.items():
        found = _addresses(message, header)
        if found:
            common[key] = found
    for header, key in _TEXT_HEADERS.items():
        value = message.get(header)
        if value is None:
            continue
        common[key] = _decoded(_text(value)) if key == "subject" else _text(value)
    return common


def mail_object(
    message: Message, message_id: str, source: str | None, received_at: float, recipients: list[str]
) -> dict[str, Any]:
    """The ``mail`` object. ``source`` is the envelope MAIL FROM, by default the Return-Path's address,
    else the From's; ``destination`` falls back to the envelope recipients when the message has no To
    or Cc header (unconfirmed: the page does not say)."""
    if not source:
        source = (
            parseaddr(_text(message.get("Return-Path") or ""))[1]
            or parseaddr(_text(message.get("From") or ""))[1]
        )
    headers, truncated = _headers(message)
    destination = [
        a for _, a in getaddresses([_text(v) for h in ("to", "cc") for v in message.get_all(h, [])])
    ]
    return {
        "timestamp": stamp(received_at),
        "source": source,
        "messageId": message_id,
        "destination": [a for a in destination if a] or list(recipients),
        "headersTruncated": truncated,
        "headers": headers,
        "commonHeaders": common_headers(message),
    }


def receipt_object(
    verdicts: Verdicts,
    recipients: list[str],
    received_at: float,
    at: float,
    action: dict[str, Any],
    *,
    scanned: bool,
) -> dict[str, Any]:
    receipt: dict[str, Any] = {
        "timestamp": stamp(at),
        "processingTimeMillis": max(round((at - received_at) * 1000), 0),
        "recipients": list(recipients),
        "spamVerdict": {"status": verdicts.spam if scanned else "DISABLED"},
        "virusVerdict": {"status": verdicts.virus if scanned else "DISABLED"},
        "spfVerdict": {"status": verdicts.spf},
        "dkimVerdict": {"status": verdicts.dkim},
        "dmarcVerdict": {"status": verdicts.dmarc},
    }
    if verdicts.dmarc == "FAIL":
        receipt["dmarcPolicy"] = verdicts.dmarc_policy
    receipt["action"] = action
    return receipt


def action_object(kind: str, config: dict[str, Any], **extra: str) -> dict[str, Any]:
    """The receipt's ``action`` for a rule action of ``kind`` configured as ``config``."""
    action: dict[str, Any] = {"type": kind}
    if config.get("TopicArn"):
        action["topicArn"] = str(config["TopicArn"])
    if kind == "Lambda":
        action["functionArn"] = str(config["FunctionArn"])
        action["invocationType"] = str(config.get("InvocationType") or "Event")
    elif kind == "Bounce":
        for key in ("SmtpReplyCode", "StatusCode", "Message", "Sender"):
            if config.get(key):
                action[key[0].lower() + key[1:]] = str(config[key])
    action.update(extra)
    return action


def sns_encoding(config: dict[str, Any]) -> str:
    """The notification's ``encoding``: ``BASE64`` (as the example shows) or ``UTF8``; UTF-8 is the
    default (API_SNSAction)."""
    return "BASE64" if str(config.get("Encoding") or "UTF-8").lower() == "base64" else "UTF8"


def notification(
    mail: dict[str, Any], receipt: dict[str, Any], content: bytes | None = None
) -> dict[str, Any]:
    """A notification to an SNS topic; ``content`` only for the SNS action, in the action's encoding."""
    body: dict[str, Any] = {"notificationType": "Received", "receipt": receipt, "mail": mail}
    if content is not None:
        if receipt["action"].get("encoding") == "BASE64":
            body["content"] = base64.b64encode(content).decode("ascii")
        else:
            body["content"] = content.decode("utf-8", "replace")
    return body


def lambda_event(mail: dict[str, Any], receipt: dict[str, Any]) -> dict[str, Any]:
    return {
        "Records": [
            {"eventSource": "aws:ses", "eventVersion": "1.0", "ses": {"mail": mail, "receipt": receipt}}
        ]
    }
