"""What an inbound-queue record says SES received: the SNS envelope, then SES's ``Received`` notification.

The receipt rule's S3 action stores the raw message and publishes a notification to an SNS topic,
whose SQS subscription (raw message delivery off) puts the SNS envelope in the queue: a JSON object
with ``Type`` ``Notification`` and the published text as ``Message``
(https://docs.aws.amazon.com/sns/latest/dg/sns-message-and-json-formats.html,
https://docs.aws.amazon.com/sns/latest/dg/sns-large-payload-raw-message-delivery.html). ``Message`` is
SES's notification (https://docs.aws.amazon.com/ses/latest/dg/receiving-email-notifications-contents.html):
``notificationType`` ``Received``; ``mail.messageId`` (SES's id of the message, the S3 object's name
after the rule's prefix), ``mail.timestamp`` (when SES received it); ``receipt.recipients`` (the
envelope recipients the rule matched: the address the mail was delivered to, which a ``Bcc`` or a
forwarding hop leaves out of ``To``), ``receipt.spamVerdict``/``virusVerdict`` and ``receipt.action``
(``type`` ``S3`` with ``bucketName`` and ``objectKey``).

Everything in it is checked and bounded; a record that is not such a notification raises
``MalformedFieldError`` naming the first field that is wrong (the record is then retried and ends in
the queue's DLQ, whose alarm calls a person). Only an S3 action's notification for the configured
bucket, under the rule's ``inbound/`` prefix, is read: nothing else is ever fetched.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from outreach.errors import MalformedFieldError

OBJECT_KEY_PREFIX = "inbound/"
# An SQS message is at most 256 KB; the notification's header list is cut by SES at 10 KB.
MAX_RECORD_CHARS = 256 * 1024
MAX_RECIPIENTS = 100
_MAX_ADDRESS_CHARS = 320
_MAX_ID_CHARS = 256
_MAX_KEY_CHARS = 1024
_ID = re.compile(r"[\x21-\x7e]+")
_KEY = re.compile(r"[A-Za-z0-9!_.*'()/=+-]+")
_VERDICTS = frozenset({"PASS", "FAIL", "GRAY", "PROCESSING_FAILED", "DISABLED"})


@dataclass(frozen=True)
class ReceivedMessage:
    """One message SES received and stored: its SES id, when it arrived, its envelope recipients
    (lower case), the spam and virus verdicts (``None`` when absent) and its S3 object."""

    ses_message_id: str
    received_at: datetime
    recipients: tuple[str, ...]
    spam_verdict: str | None
    virus_verdict: str | None
    bucket: str
    object_key: str

    @property
    def has_virus(self) -> bool:
        """Whether SES's virus scan found one (``virusVerdict`` ``FAIL``)."""
        return self.virus_verdict == "FAIL"


def _object(value: Any, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise MalformedFieldError(field, "not a JSON object")
    return value


def _text(container: dict[str, Any], name: str, field: str, limit: int) -> str:
    value = container.get(name)
    if not isinstance(value, str) or not value.strip():
        raise MalformedFieldError(field, "missing or not text")
    if len(value) > limit:
        raise MalformedFieldError(field, f"longer than {limit} characters")
    return value.strip()


def _json(text: str, field: str) -> dict[str, Any]:
    if len(text) > MAX_RECORD_CHARS:
        raise MalformedFieldError(field, f"longer than {MAX_RECORD_CHARS} characters")
    try:
        return _object(json.loads(text), field)
    except (ValueError, RecursionError) as exc:
        raise MalformedFieldError(field, "not JSON") from exc


def _time(value: str, field: str) -> datetime:
    """An ISO 8601 UTC time as SES writes it (``2015-09-11T20:32:33.936Z``)."""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise MalformedFieldError(field, f"not an ISO 8601 time: {value[:40]!r}") from exc
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _recipients(receipt: dict[str, Any]) -> tuple[str, ...]:
    listed = receipt.get("recipients")
    if not isinstance(listed, list) or not listed:
        raise MalformedFieldError("receipt.recipients", "missing or not a list of addresses")
    found: dict[str, None] = {}
    for index, value in enumerate(listed[:MAX_RECIPIENTS]):
        field = f"receipt.recipients[{index}]"
        if not isinstance(value, str) or "@" not in value or len(value) > _MAX_ADDRESS_CHARS:
            raise MalformedFieldError(field, "not an e-mail address")
        found.setdefault(value.strip().lower(), None)
    return tuple(found)


def _verdict(receipt: dict[str, Any], name: str) -> str | None:
    value = receipt.get(name)
    if value is None:
        return None
    status = _object(value, f"receipt.{name}").get("status")
    if status not in _VERDICTS:
        raise MalformedFieldError(f"receipt.{name}.status", "not a verdict SES gives")
    return str(status)


def parse(body: str, *, bucket: str) -> ReceivedMessage:
    """The message an inbound-queue record's ``body`` names, stored in ``bucket``; ``MalformedFieldError``
    naming the field for anything else."""
    if not isinstance(body, str):
        raise MalformedFieldError("body", "not text")
    envelope = _json(body, "body")
    if envelope.get("Type") != "Notification":
        raise MalformedFieldError("Type", "not an SNS Notification")
    notification = _json(_text(envelope, "Message", "Message", MAX_RECORD_CHARS), "Message")
    if notification.get("notificationType") != "Received":
        raise MalformedFieldError("notificationType", "not an SES Received notification")
    mail = _object(notification.get("mail"), "mail")
    receipt = _object(notification.get("receipt"), "receipt")
    action = _object(receipt.get("action"), "receipt.action")
    if action.get("type") != "S3":
        raise MalformedFieldError("receipt.action.type", "not an S3 action")
    named_bucket = _text(action, "bucketName", "receipt.action.bucketName", 63)
    if named_bucket != bucket:
        raise MalformedFieldError("receipt.action.bucketName", "not the inbound bucket")
    key = _text(action, "objectKey", "receipt.action.objectKey", _MAX_KEY_CHARS)
    if not key.startswith(OBJECT_KEY_PREFIX) or not _KEY.fullmatch(key) or ".." in key:
        raise MalformedFieldError("receipt.action.objectKey", f"not a key under {OBJECT_KEY_PREFIX}")
    message_id = _text(mail, "messageId", "mail.messageId", _MAX_ID_CHARS)
    if not _ID.fullmatch(message_id):
        raise MalformedFieldError("mail.messageId", "not printable ASCII without spaces")
    return ReceivedMessage(
        ses_message_id=message_id,
        received_at=_time(_text(mail, "timestamp", "mail.timestamp", 64), "mail.timestamp"),
        recipients=_recipients(receipt),
        spam_verdict=_verdict(receipt, "spamVerdict"),
        virus_verdict=_verdict(receipt, "virusVerdict"),
        bucket=named_bucket,
        object_key=key,
    )
