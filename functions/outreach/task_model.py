"""Task statuses, the task record and the rules for which status may follow which."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from outreach.email_task import email_reply_handle, email_schedule_name, is_one_address, parse_utc_iso
from outreach.errors import MalformedFieldError
from outreach.scrape_tenants import row_tenant
from outreach.sequence_rules import SequenceRules


class Status(StrEnum):
    PENDING = "Pending"
    RUNNING = "Running"
    FINISHED = "Finished"
    FAILED = "Failed"
    CANCELLED = "Cancelled"

    @property
    def is_terminal(self) -> bool:
        return self in TERMINAL

    @property
    def is_open(self) -> bool:
        return self in OPEN

    @classmethod
    def terminal(cls) -> tuple[Status, ...]:
        """The statuses no task leaves (Finished, Failed, Cancelled), in declaration order."""
        return tuple(status for status in cls if status.is_terminal)

    @classmethod
    def open(cls) -> tuple[Status, ...]:
        """The statuses of work that may still happen (Pending, Running), in declaration order."""
        return tuple(status for status in cls if not status.is_terminal)


class Kind(StrEnum):
    SCRAPE = "scrape"
    EMAIL = "email"


TERMINAL = frozenset({Status.FINISHED, Status.FAILED, Status.CANCELLED})
OPEN = frozenset({Status.PENDING, Status.RUNNING})

# Every status change the store will make. Terminal statuses have no way out: a retry, a duplicate
# delivery or a reconciler can never move a finished, failed or cancelled task.
ALLOWED_TRANSITIONS: dict[Status, frozenset[Status]] = {
    # Pending -> Failed is the email reconciler's ``too_late``: an email whose send time passed too
    # long ago is not sent at all.
    Status.PENDING: frozenset({Status.RUNNING, Status.CANCELLED, Status.FAILED}),
    # Running -> Running is a claim taken over after the previous lease expired.
    # Running -> Pending is a reconciler's requeue of a task whose worker vanished.
    Status.RUNNING: frozenset(
        {Status.RUNNING, Status.PENDING, Status.FINISHED, Status.FAILED, Status.CANCELLED}
    ),
    Status.FINISHED: frozenset(),
    Status.FAILED: frozenset(),
    Status.CANCELLED: frozenset(),
}


# The most shards the ``open-tasks`` index key may be split into (modules/tasks-table validates
# ``open_index_shards`` against the same bound): every reader queries each one.
MAX_OPEN_INDEX_SHARDS = 100


def shard_of(task_id: str, shards: int) -> int:
    """The shard (0 to ``shards`` - 1) a task falls in, the same for the same id on every call."""
    return int(hashlib.sha256(task_id.encode()).hexdigest()[:8], 16) % shards


def open_key(kind: str, status: Status, shard: int = 0) -> str:
    """Partition key of the sparse ``open-tasks`` index; only non-terminal tasks carry it.

    ``<kind>#<status>#<shard>``, written over the shards so no one key takes a whole job's writes;
    shard 0 keeps the unsuffixed ``<kind>#<status>``, the key of every row written before the index
    was sharded, so those rows are read as shard 0 and need no re-keying (docs/task-store.md).
    """
    if not 0 <= shard < MAX_OPEN_INDEX_SHARDS:
        raise ValueError(f"open-tasks shard must be 0-{MAX_OPEN_INDEX_SHARDS - 1}, got {shard}")
    base = f"{kind}#{status.value}"
    return base if shard == 0 else f"{base}#{shard}"


def open_key_shard(key: Any) -> int:
    """The shard an ``open_key`` names (0 for an unsuffixed key); ``MalformedFieldError`` otherwise."""
    if not isinstance(key, str) or len(key) > 64:
        raise MalformedFieldError("open_key", "not text of at most 64 characters")
    parts = key.split("#")
    if len(parts) == 2:
        return 0
    if len(parts) != 3 or not parts[2].isdigit() or not 0 < int(parts[2]) < MAX_OPEN_INDEX_SHARDS:
        raise MalformedFieldError("open_key", f"not <kind>#<status>[#<shard>]: {key[:64]!r}")
    return int(parts[2])


@dataclass(frozen=True)
class Lease:
    owner: str
    message_id: str
    receive_count: int
    expires_at: int


def whole_number_field(name: str, value: Any, minimum: int) -> int:
    """A stored whole number of at least ``minimum``; ``MalformedFieldError`` naming ``name`` otherwise."""
    try:
        number = int(value)
    except (TypeError, ValueError) as exc:
        raise MalformedFieldError(name, f"not a number: {str(value)[:40]!r}") from exc
    if number != value or number < minimum:
        raise MalformedFieldError(name, f"must be a whole number >= {minimum}, got {str(value)[:40]!r}")
    return number


def text_field(item: dict[str, Any], name: str) -> str:
    """A stored non-empty text; ``MalformedFieldError`` naming ``name`` otherwise."""
    value = item.get(name)
    if not isinstance(value, str) or not value:
        raise MalformedFieldError(name, "missing or not text")
    return value


def addressed_fields(item: dict[str, Any], task_id: str) -> tuple[str, str, str]:
    """An email row's recipient, ``send_at`` and schedule name, each checked as the task store writes
    it; ``MalformedFieldError`` naming the first that is wrong."""
    recipient = text_field(item, "recipient")
    if not is_one_address(recipient):
        raise MalformedFieldError("recipient", "not exactly one e-mail address")
    send_at = text_field(item, "send_at")
    try:
        parse_utc_iso(send_at)
    except ValueError as exc:
        raise MalformedFieldError(
            "send_at", f"not a UTC time (2027-03-02T08:30:00Z): {send_at[:40]!r}"
        ) from exc
    schedule_name = text_field(item, "schedule_name")
    if schedule_name != email_schedule_name(task_id):
        raise MalformedFieldError("schedule_name", "is not the one derived from the task id")
    return recipient, send_at, schedule_name


@dataclass(frozen=True)
class EmailFields:
    """What an email task carries besides the common fields (see docs/task-store.md).

    ``message`` is the stored map of ``outreach.email_task.EmailMessage.to_item``; it is read back with
    ``EmailMessage.from_item`` just before sending, so an unsafe message is refused then as well.
    ``max_per_minute`` is the campaign's rate (rows written before it was stored have none).
    ``rules`` are the campaign's sequence rules (``sequence_rules``; rows written before them have none,
    and their readers use ``SequenceRules()``). ``threaded``: the email goes out in the thread of the
    earlier steps (rows written before carry no ``threaded`` and are sent unthreaded, as they were
    planned). ``reply_handle``: the handle of the task's reply address, for a campaign with a reply
    domain (the key of the ``reply-handles`` index). ``deferred_from`` and ``deferred_reason``: where the
    send governor last moved the email from and why (``task_store.defer_email``; none while it was
    never deferred).
    Every field is checked when the row is read (``from_item``): one malformed row is refused with the
    field it breaks, and cannot stop a reconciler run or reach SES.
    """

    step: int
    recipient: str
    send_at: str
    timezone: str
    schedule_name: str
    message: dict[str, Any]
    ses_message_id: str | None = None
    max_per_minute: int | None = None
    rules: SequenceRules | None = None
    threaded: bool = False
    reply_handle: str | None = None
    deferred_from: str | None = None
    deferred_reason: str | None = None

    @property
    def send_time(self) -> datetime:
        """``send_at`` as an instant (UTC)."""
        return parse_utc_iso(self.send_at)

    @classmethod
    def from_item(cls, item: dict[str, Any], task_id: str) -> EmailFields:
        """The email fields of a stored row; ``MalformedFieldError`` naming the first field that is wrong."""
        message = item.get("message")
        if not isinstance(message, dict) or not all(isinstance(v, str) for v in message.values()):
            raise MalformedFieldError("message", "not a map of text")
        recipient, send_at, schedule_name = addressed_fields(item, task_id)
        deferred_from = item.get("deferred_from")
        if deferred_from is not None:
            try:
                parse_utc_iso(str(deferred_from))
            except ValueError as exc:
                raise MalformedFieldError(
                    "deferred_from", f"not a UTC time (2027-03-02T08:30:00Z): {str(deferred_from)[:40]!r}"
                ) from exc
        deferred_reason = item.get("deferred_reason")
        if deferred_reason is not None and not isinstance(deferred_reason, str):
            raise MalformedFieldError("deferred_reason", "not text")
        timezone = text_field(item, "timezone")
        try:
            ZoneInfo(timezone)
        except (ValueError, ZoneInfoNotFoundError) as exc:
            raise MalformedFieldError("timezone", f"not an IANA time zone: {timezone[:40]!r}") from exc
        per_minute = item.get("max_per_minute")
        threaded = item.get("threaded", False)
        if not isinstance(threaded, bool):
            raise MalformedFieldError("threaded", "not true or false")
        reply_handle = item.get("reply_handle")
        if reply_handle is not None and reply_handle != email_reply_handle(task_id):
            raise MalformedFieldError("reply_handle", "is not the one derived from the task id")
        return cls(
            step=whole_number_field("step", item.get("step"), 1),
            recipient=recipient,
            send_at=send_at,
            timezone=timezone,
            schedule_name=schedule_name,
            message={str(name): value for name, value in message.items()},
            ses_message_id=str(item["ses_message_id"]) if "ses_message_id" in item else None,
            max_per_minute=None
            if per_minute is None
            else whole_number_field("max_per_minute", per_minute, 1),
            rules=SequenceRules.from_item(item["rules"]) if "rules" in item else None,
            threaded=threaded,
            reply_handle=reply_handle,
            deferred_from=None if deferred_from is None else str(deferred_from),
            deferred_reason=deferred_reason,
        )


@dataclass(frozen=True)
class Task:
    task_id: str
    kind: str
    job_id: str
    status: Status
    attempts: int
    created_at: str
    updated_at: str
    url: str | None = None
    lease: Lease | None = None
    result_key: str | None = None
    failure_reason: str | None = None
    last_error: str | None = None
    email: EmailFields | None = None
    # The ``open-tasks`` shard its ``open_key`` names (None for a row without one, a terminal task):
    # every status change keeps it.
    open_shard: int | None = None
    # A scrape task's tenant on the scrape queue (``scrape_tenants``), as its row names it; None for a
    # row written before tenants were stored.
    message_group: str | None = None

    @property
    def is_terminal(self) -> bool:
        return self.status.is_terminal

    @property
    def tenant(self) -> str:
        """The ``MessageGroupId`` of this task's scrape message: its row's tenant, else its job."""
        return self.message_group or self.job_id

    def lease_is_live(self, now: float) -> bool:
        return self.lease is not None and self.lease.expires_at > now

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> Task:
        """Build from a deserialised DynamoDB item; raises ValueError for a row that is not a task."""
        try:
            status = Status(item["status"])
            lease = None
            if "lease_owner" in item:
                lease = Lease(
                    owner=str(item["lease_owner"]),
                    message_id=str(item.get("lease_message", "")),
                    receive_count=int(item.get("lease_receive", 0)),
                    expires_at=int(item.get("lease_expires_at", 0)),
                )
            return cls(
                task_id=str(item["task_id"]),
                kind=str(item["kind"]),
                job_id=str(item["job_id"]),
                status=status,
                attempts=int(item.get("attempts", 0)),
                created_at=str(item["created_at"]),
                updated_at=str(item["updated_at"]),
                url=str(item["url"]) if "url" in item else None,
                lease=lease,
                result_key=str(item["result_key"]) if "result_key" in item else None,
                failure_reason=str(item["failure_reason"]) if "failure_reason" in item else None,
                last_error=str(item["last_error"]) if "last_error" in item else None,
                email=(
                    EmailFields.from_item(item, str(item["task_id"]))
                    if item["kind"] == Kind.EMAIL.value
                    else None
                ),
                open_shard=open_key_shard(item["open_key"]) if "open_key" in item else None,
                message_group=(
                    row_tenant(item["message_group"], str(item["job_id"]))
                    if "message_group" in item
                    else None
                ),
            )
        except (KeyError, ValueError, TypeError) as exc:
            raise ValueError(f"not a task row: {exc}") from exc


@dataclass(frozen=True)
class MalformedTask:
    """An open row of the ``open-tasks`` index that is not a valid task: what could be read, and why.

    ``status`` and ``job_id`` are ``None`` when they cannot be read either; ``problem`` names the field.
    """

    task_id: str
    kind: str
    job_id: str | None
    status: Status | None
    updated_at: str | None
    problem: str

    @classmethod
    def of(cls, item: dict[str, Any], problem: str) -> MalformedTask:
        def text(name: str) -> str | None:
            value = item.get(name)
            return value if isinstance(value, str) and value else None

        status_text = text("status")
        status = Status(status_text) if status_text in {s.value for s in Status} else None
        return cls(
            task_id=text("task_id") or "?",
            kind=text("kind") or "?",
            job_id=text("job_id"),
            status=status,
            updated_at=text("updated_at"),
            problem=problem,
        )
