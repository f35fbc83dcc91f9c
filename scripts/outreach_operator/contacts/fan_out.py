"""An operator's stop reaching the open emails it covers: one address's, or every address's of a domain.

For an address the tasks are the core's (``task_store.email_tasks_to``, the ``recipient-emails``
index) and the cancel is the core's (``contacts.cancel_open_emails``: Pending -> Cancelled with the
stop's reason, only while unclaimed, then the schedule deleted). For a domain the open emails to it
come from the ``open-tasks`` index (``task_queries.open_emails_to_domain``: no index leads from a
domain to its addresses), and each address found is handed to ``cancel_open_emails`` in turn.

A Running email (claimed by a worker) is never interrupted: it is the one send that may still go out
after the stop, because its worker read the ledger before the stop was recorded. ``open_emails``
lists those too, so the operator sees them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from outreach import contacts, task_store
from outreach.task_model import Status, Task
from outreach_operator import task_queries


@dataclass
class OpenEmails:
    """The open emails a stop covers: ``pending`` (will be cancelled), ``running`` (may still go out)."""

    pending: list[Task] = field(default_factory=list)
    running: list[Task] = field(default_factory=list)

    @property
    def recipients(self) -> list[str]:
        """The recipients of the Pending emails, each once, in order."""
        return list(dict.fromkeys(t.email.recipient for t in self.pending if t.email is not None))


@dataclass
class Cancelled:
    """What a fan-out did, summed over the addresses it covered."""

    cancelled: int = 0
    already_moved: int = 0
    schedules_deleted: int = 0
    addresses: int = 0

    def add(self, fan_out: contacts.FanOut) -> None:
        self.cancelled += fan_out.cancelled
        self.already_moved += fan_out.already_moved
        self.schedules_deleted += fan_out.schedules_deleted
        self.addresses += 1

    def merge(self, other: Cancelled) -> None:
        self.cancelled += other.cancelled
        self.already_moved += other.already_moved
        self.schedules_deleted += other.schedules_deleted
        self.addresses += other.addresses

    def as_dict(self) -> dict[str, int]:
        return {
            "cancelled": self.cancelled,
            "already_moved": self.already_moved,
            "schedules_deleted": self.schedules_deleted,
            "addresses": self.addresses,
        }


def open_emails(kind: str, value: str) -> OpenEmails:
    """The open (Pending and Running) emails to the address ``value``, or to every address of the
    domain ``value`` (``kind`` ``address`` or ``domain``)."""
    found = OpenEmails()
    if kind == "address":
        for task in task_store.email_tasks_to(value):
            if task.status is Status.PENDING:
                found.pending.append(task)
            elif task.status is Status.RUNNING:
                found.running.append(task)
        return found
    found.pending = task_queries.open_emails_to_domain(value, Status.PENDING)
    found.running = task_queries.open_emails_to_domain(value, Status.RUNNING)
    return found


def cancel_covered(kind: str, value: str, reason: str, schedule_group: str) -> Cancelled:
    """Cancel the Pending emails the stop of ``value`` covers, with ``reason`` (the stop's
    ``Stop.reason``), and delete their schedules."""
    done = Cancelled()
    addresses = [value] if kind == "address" else open_emails(kind, value).recipients
    for address in addresses:
        done.add(contacts.cancel_open_emails(address, reason, schedule_group))
    return done


def email_view(task: Task) -> dict[str, Any]:
    """An open email as a report shows it."""
    assert task.email is not None  # open_emails keeps email tasks only
    return {
        "task_id": task.task_id,
        "campaign_id": task.job_id,
        "step": task.email.step,
        "recipient": task.email.recipient,
        "send_at": task.email.send_at,
        "status": task.status.value,
    }
