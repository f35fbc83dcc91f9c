"""A stop reaches every open email to the address: each Pending one is cancelled and its schedule deleted.

The tasks come from the tasks table's ``recipient-emails`` index (every campaign), read back with
strongly consistent reads. A Pending task is cancelled with the rule ``cancel for stop`` (only while
unclaimed), then its one-time schedule is deleted. A Running task is left alone: its worker holds the
claim and may already have sent; it is the one send that may still go out after the stop, and its
worker reads the ledger after its claim, so only a worker that read before the stop was recorded can
send. Running it again (a retried event) cancels nothing twice and deletes what is left.

A reply stops less than an opt-out: ``only`` narrows the fan-out to the tasks a predicate accepts (the
inbound processor's: the replied campaign's, and the other campaigns' whose rules say a reply elsewhere
stops them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from outreach import email_schedules
from outreach.errors import TransitionRejectedError
from outreach.task_model import Status, Task
from outreach.task_store.reads import email_tasks_to
from outreach.task_store.transitions import cancel_for_stop


@dataclass(frozen=True)
class FanOut:
    """What ``cancel_open_emails`` did: tasks it cancelled, open tasks it found moved on (claimed by a
    worker, or changed before its write), and schedules it deleted."""

    cancelled: int = 0
    already_moved: int = 0
    schedules_deleted: int = 0


def cancel_open_emails(
    address: str, reason: str, schedule_group: str, *, only: Callable[[Task], bool] | None = None
) -> FanOut:
    """Cancel every Pending email task to ``address`` in every campaign with ``reason`` (a
    ``Stop.reason``) and delete its schedule in ``schedule_group``; a task some earlier run cancelled
    has its schedule deleted too (the run may have stopped between the two). With ``only``, the tasks
    it refuses are left as they are."""
    cancelled = moved = deleted = 0
    for task in email_tasks_to(address):
        if task.email is None or (only is not None and not only(task)):
            continue
        if task.status is Status.PENDING:
            try:
                cancel_for_stop(task, reason=reason)
            except TransitionRejectedError:  # outcome: counted; its worker reads the ledger after its claim
                moved += 1
                continue
            cancelled += 1
        elif task.status is Status.RUNNING:
            moved += 1
            continue
        elif task.status is not Status.CANCELLED:
            continue
        if email_schedules.delete_schedule(task.email.schedule_name, schedule_group):
            deleted += 1
    return FanOut(cancelled=cancelled, already_moved=moved, schedules_deleted=deleted)
