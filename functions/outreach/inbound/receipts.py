"""The exactly-once record of an inbound message: one receipt per content, moved by conditional writes.

SQS delivers each notification at least once, and a sending system may deliver one message twice (SES
then stores two objects, under two SES message ids). Both are the same content, so the receipt is
keyed by it: ``inbound#<sha256>`` in the contact ledger's table, where ``<sha256>`` is the SHA-256 of
the raw bytes from the first header field the sender wrote (``content_digest``: the trace fields every
receiving system prepends, ``Received``, ``Return-Path``, ``Authentication-Results``, ``X-SES-*`` and
the like, are left out, since a second delivery has its own). A message too big to read is keyed by
its S3 object instead (``object_digest``).

``receipt_state`` moves only forward, each move one conditional UpdateItem
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html):

- ``received`` (``open_receipt``, the first delivery; a later one finds the record and adds its SES
  message id, at most :data:`MAX_COPIES`);
- ``acted``: the ledger and the tasks were written (``record_acted``, once), with what the message was
  (``message_kind``, ``reason``), the task it answers and the mark it is forwarded with (``forward_mark``,
  empty when nothing is forwarded: then ``acted`` is the end);
- ``forwarding``: one invocation holds the forward until its lease runs out (``claim_forward``);
  ``release_forward`` moves it back to ``acted`` when SES proved it sent nothing;
- ``forwarded`` with the forward's SES message id (``record_forwarded``), or ``forward_unknown`` when
  SES may have it (``record_forward_unknown``: by the holder, or by anyone once the lease has run out,
  since a holder that died may have sent it). Either is the end: nothing is forwarded twice.

The attribute is ``receipt_state``, not the ledger's ``state``, and the record has no ``state_rank``:
no reader of stops (``contacts.stop_of``, ``stops_of``, the operator's ``--stops-only`` listing) can
take a receipt for a contact. The receipt names no address: ids, kinds and times only. ``expires_at``
is a year after it was opened, for a TTL on the table (the ledger's own records carry none).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from botocore.exceptions import ClientError

from outreach import clients, clock, config
from outreach.contacts.reads import KEY
from outreach.email_task import utc_iso
from outreach.errors import MalformedFieldError
from outreach.inbound.forward import split
from outreach.inbound.notification import ReceivedMessage
from outreach.task_store.items import from_item, is_condition_failure, to_av, to_avs

PREFIX = "inbound#"
KIND = "inbound"
# A receipt names at most this many SES message ids of copies of its message.
MAX_COPIES = 20
RETENTION_SECONDS = 365 * 24 * 3600
_REASON_CHARS = 300
# Header fields a receiving system prepends to a message (RFC 5321 section 4.4 trace fields, and what
# SES and other receivers add above the sender's own): left out of the content digest.
_TRACE = re.compile(
    rb"(?:received|return-path|received-spf|authentication-results|arc-[a-z-]+|x-ses-[a-z0-9-]+"
    rb"|x-original-to|delivered-to|x-received|x-gm-[a-z0-9-]+|dkim-filter|x-spam-[a-z0-9-]+)",
    re.IGNORECASE,
)
_FIELD_NAME = re.compile(rb"([\x21-\x39\x3b-\x7e]+)[ \t]*:")


class ReceiptState(StrEnum):
    RECEIVED = "received"
    ACTED = "acted"
    FORWARDING = "forwarding"
    FORWARDED = "forwarded"
    FORWARD_UNKNOWN = "forward_unknown"


@dataclass(frozen=True)
class Outcome:
    """What the processor made of a message, kept on its receipt when it has acted."""

    message_kind: str
    reason: str
    matched_by: str
    task_id: str | None = None
    campaign_id: str | None = None
    step: int | None = None
    forward: str = ""


@dataclass(frozen=True)
class Receipt:
    key: str
    state: ReceiptState
    forward: str = ""
    lease_owner: str | None = None
    lease_expires_at: int | None = None

    @property
    def finished(self) -> bool:
        """Whether nothing is left to do: forwarded, forward unknown, or acted with nothing to forward."""
        if self.state in (ReceiptState.FORWARDED, ReceiptState.FORWARD_UNKNOWN):
            return True
        return self.state is ReceiptState.ACTED and not self.forward

    def lease_live(self, now: float) -> bool:
        return self.lease_expires_at is not None and self.lease_expires_at > now

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> Receipt:
        raw_state = item.get("receipt_state")
        try:
            state = ReceiptState(str(raw_state))
        except ValueError as exc:
            raise MalformedFieldError("receipt_state", f"unknown state {str(raw_state)[:40]!r}") from exc
        expires = item.get("lease_expires_at")
        owner = item.get("lease_owner")
        return cls(
            key=str(item[KEY]),
            state=state,
            forward=str(item.get("forward_mark", "")),
            lease_owner=str(owner) if owner is not None else None,
            lease_expires_at=int(expires) if expires is not None else None,
        )


def content_digest(raw: bytes) -> str:
    """SHA-256 (hex) of ``raw`` from its first header field that is no receiving system's trace."""
    header, _, _ = split(raw)
    offset = 0
    for line in header.splitlines(keepends=True):
        if line[:1] in (b" ", b"\t"):
            offset += len(line)
            continue
        named = _FIELD_NAME.match(line)
        if named is None or not _TRACE.fullmatch(named.group(1)):
            break
        offset += len(line)
    return hashlib.sha256(raw[offset:]).hexdigest()


def object_digest(received: ReceivedMessage) -> str:
    """SHA-256 (hex) naming a message by its S3 object (for one too big to read)."""
    return hashlib.sha256(f"s3://{received.bucket}/{received.object_key}".encode()).hexdigest()


def _update(key: str, expression: str, condition: str | None, values: dict[str, Any], **extra: Any) -> Any:
    """One UpdateItem of a receipt; ``None`` when its condition refused it."""
    request: dict[str, Any] = {
        "TableName": config.contacts_table(),
        "Key": {KEY: to_av(key)},
        "UpdateExpression": expression,
        "ExpressionAttributeNames": {"#kind": "kind"} if "#kind" in expression else {},
        "ExpressionAttributeValues": to_avs(values),
        **extra,
    }
    if not request["ExpressionAttributeNames"]:
        del request["ExpressionAttributeNames"]
    if condition is not None:
        request["ConditionExpression"] = condition
    try:
        return clients.dynamodb().update_item(**request)
    except ClientError as exc:
        if is_condition_failure(exc):
            return None
        raise


def read_receipt(key: str) -> Receipt | None:
    """The receipt ``key`` as stored (a strongly consistent GetItem), or ``None``."""
    found = clients.dynamodb().get_item(
        TableName=config.contacts_table(), Key={KEY: to_av(key)}, ConsistentRead=True
    )
    return Receipt.from_item(from_item(found["Item"])) if "Item" in found else None


def _required(key: str) -> Receipt:
    receipt = read_receipt(key)
    if receipt is None:
        raise MalformedFieldError(KEY, "the receipt vanished after its write")
    return receipt


def open_receipt(digest: str, received: ReceivedMessage) -> Receipt:
    """The receipt of the content ``digest``, created ``received`` on its first delivery; each delivery
    adds its SES message id (up to ``MAX_COPIES``)."""
    key = PREFIX + digest
    now = clock.now()
    written = _update(
        key,
        "SET #kind = if_not_exists(#kind, :kind), "
        "receipt_state = if_not_exists(receipt_state, :received), "
        "object_key = if_not_exists(object_key, :object), received_at = if_not_exists(received_at, :at), "
        "recorded_at = if_not_exists(recorded_at, :recorded), "
        "expires_at = if_not_exists(expires_at, :expires), updated_at = :now ADD ses_message_ids :ids",
        "attribute_not_exists(ses_message_ids) OR contains(ses_message_ids, :id) "
        "OR size(ses_message_ids) < :copies",
        {
            ":kind": KIND,
            ":received": ReceiptState.RECEIVED.value,
            ":object": received.object_key,
            ":at": utc_iso(received.received_at),
            ":recorded": clock.iso(now),
            ":expires": int(now) + RETENTION_SECONDS,
            ":now": clock.iso(now),
            ":ids": {received.ses_message_id},
            ":id": received.ses_message_id,
            ":copies": MAX_COPIES,
        },
        ReturnValues="ALL_NEW",
    )
    if written is None:
        return _required(key)
    return Receipt.from_item(from_item(written["Attributes"]))


def record_acted(receipt: Receipt, outcome: Outcome) -> Receipt:
    """``received`` -> ``acted`` with ``outcome``; the receipt as it now is (another delivery may have
    moved it first)."""
    values: dict[str, Any] = {
        ":received": ReceiptState.RECEIVED.value,
        ":acted": ReceiptState.ACTED.value,
        ":message_kind": outcome.message_kind,
        ":reason": outcome.reason[:_REASON_CHARS],
        ":matched": outcome.matched_by,
        ":forward": outcome.forward,
        ":now": clock.iso(),
    }
    sets = [
        "receipt_state = :acted",
        "message_kind = :message_kind",
        "reason = :reason",
        "matched_by = :matched",
        "forward_mark = :forward",
        "acted_at = :now",
        "updated_at = :now",
    ]
    for name, value in (
        ("task_id", outcome.task_id),
        ("campaign_id", outcome.campaign_id),
        ("step", outcome.step),
    ):
        if value is not None:
            sets.append(f"{name} = :{name}")
            values[f":{name}"] = value
    _update(receipt.key, "SET " + ", ".join(sets), "receipt_state = :received", values)
    return _required(receipt.key)


def claim_forward(receipt: Receipt, *, owner: str, lease_expires_at: int) -> bool:
    """``acted`` -> ``forwarding``, held by ``owner`` until ``lease_expires_at`` (epoch seconds);
    ``False`` when another delivery moved it first."""
    written = _update(
        receipt.key,
        "SET receipt_state = :forwarding, lease_owner = :owner, lease_expires_at = :until, updated_at = :now",
        "receipt_state = :acted AND forward_mark <> :none",
        {
            ":forwarding": ReceiptState.FORWARDING.value,
            ":acted": ReceiptState.ACTED.value,
            ":owner": owner,
            ":until": lease_expires_at,
            ":none": "",
            ":now": clock.iso(),
        },
    )
    return written is not None


def _settle(key: str, state: ReceiptState, owner: str | None, sets: dict[str, Any]) -> bool:
    """``forwarding`` -> ``state``, by ``owner`` (or, for ``owner`` ``None``, by anyone once the lease
    has run out)."""
    values: dict[str, Any] = {
        ":forwarding": ReceiptState.FORWARDING.value,
        ":state": state.value,
        ":now": clock.iso(),
    }
    held = "lease_expires_at < :epoch"
    values[":epoch"] = int(clock.now())
    if owner is not None:
        held = "lease_owner = :owner"
        values[":owner"] = owner
        del values[":epoch"]
    assignments = ["receipt_state = :state", "updated_at = :now"]
    for i, (name, value) in enumerate(sets.items()):
        assignments.append(f"{name} = :v{i}")
        values[f":v{i}"] = value
    expression = "SET " + ", ".join(assignments) + " REMOVE lease_owner, lease_expires_at"
    return _update(key, expression, f"receipt_state = :forwarding AND {held}", values) is not None


def record_forwarded(receipt: Receipt, *, owner: str, forward_message_id: str, as_notice: bool) -> bool:
    """``forwarding`` -> ``forwarded`` with the forward's SES message id (holder only)."""
    sets = {
        "forwarded_at": clock.iso(),
        "forward_ses_message_id": forward_message_id,
        "forwarded_as": "notice" if as_notice else "message",
    }
    return _settle(receipt.key, ReceiptState.FORWARDED, owner, sets)


def release_forward(receipt: Receipt, *, owner: str, why: str) -> bool:
    """``forwarding`` -> ``acted`` after a send SES proved it did not make (holder only)."""
    return _settle(receipt.key, ReceiptState.ACTED, owner, {"last_forward_error": why[:_REASON_CHARS]})


def record_forward_unknown(receipt: Receipt, *, owner: str | None, why: str) -> bool:
    """``forwarding`` -> ``forward_unknown``: by the holder after a send whose outcome is unknown, or by
    anyone (``owner`` ``None``) once the holder's lease has run out."""
    return _settle(
        receipt.key, ReceiptState.FORWARD_UNKNOWN, owner, {"forward_unknown_reason": why[:_REASON_CHARS]}
    )
