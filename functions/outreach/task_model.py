"""Task statuses, the task record and the rules for which status may follow which."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    PENDING = "Pending"
    RUNNING = "Running"
    FINISHED = "Finished"
    FAILED = "Failed"
    CANCELLED = "Cancelled"

    @property
    def is_terminal(self) -> bool:
        return self in TERMINAL


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


def open_key(kind: str, status: Status) -> str:
    """Partition key of the sparse ``open-tasks`` index; only non-terminal tasks carry it."""
    return f"{kind}#{status.value}"


@dataclass(frozen=True)
class Lease:
    owner: str
    message_id: str
    receive_count: int
    expires_at: int


@dataclass(frozen=True)
class EmailFields:
    """What an email task carries besides the common fields (see docs/task-store.md).

    ``message`` is the stored map of ``outreach.email_task.EmailMessage.to_item``; it is read back with
    ``EmailMessage.from_item`` just before sending, so an unsafe message is refused then as well.
    """

    step: int
    recipient: str
    send_at: str
    timezone: str
    schedule_name: str
    message: dict[str, Any]
    ses_message_id: str | None = None

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> EmailFields:
        message = item["message"]
        if not isinstance(message, dict):
            raise TypeError("message is not a map")
        return cls(
            step=int(item["step"]),
            recipient=str(item["recipient"]),
            send_at=str(item["send_at"]),
            timezone=str(item["timezone"]),
            schedule_name=str(item["schedule_name"]),
            message={str(name): value for name, value in message.items()},
            ses_message_id=str(item["ses_message_id"]) if "ses_message_id" in item else None,
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

    @property
    def is_terminal(self) -> bool:
        return self.status.is_terminal

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
                email=EmailFields.from_item(item) if item["kind"] == Kind.EMAIL.value else None,
            )
        except (KeyError, ValueError, TypeError) as exc:
            raise ValueError(f"not a task row: {exc}") from exc
