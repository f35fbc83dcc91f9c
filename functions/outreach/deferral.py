"""A claimed email the send governor refuses now goes later, inside its window, its later steps with it.

``defer(claimed, not_before, reason, target)``, for the email worker, after its claim and before any
send:

- the new time is the first whole minute at or after ``not_before`` (and at least
  ``email_schedules.MIN_LEAD_SECONDS`` from now) inside the task's window, at its own local time of day
  where the window allows (``inbound.send_window.first_inside``), read in the task's time zone;
- the task goes Running -> Pending there in one conditional write by the claim's holder
  (``task_store.defer_email``), and its schedule is moved to fire then (``email_schedules.move_schedule``);
- each later step of the same campaign to the recipient that is still Pending keeps at least its
  planned spacing after the step before it (``task_store.postpone_email``, only while unclaimed and at
  the time read, then its schedule): the worker cancels a follow-up whose earlier step has not gone
  out, so a deferred first step must never be overtaken by its own follow-up.

Nothing is dropped: the email goes out at the new time if the governor then allows it, or is deferred
again. A crash between the writes leaves a Pending task whose schedule is missing or early: an early
invocation is refused (``EarlyInvocations``) and the email reconciler creates a missing schedule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from outreach import clock, email_schedules, task_store
from outreach.email_schedules import ScheduleTarget
from outreach.email_task import utc_iso
from outreach.errors import TransitionRejectedError
from outreach.inbound.send_window import first_inside
from outreach.sequence_rules import SequenceRules
from outreach.task_model import Status, Task


@dataclass(frozen=True)
class Deferral:
    """Where the deferred email went (UTC ``send_at``) and how many later steps moved with it."""

    send_at: str
    later_steps_moved: int


def _inside(task: Task, not_before: datetime) -> datetime:
    """The first moment inside ``task``'s window at or after ``not_before``, at its own time of day."""
    fields = task.email
    assert fields is not None
    zone = ZoneInfo(fields.timezone)
    local = fields.send_time.astimezone(zone)
    keep = local.time().replace(tzinfo=None, microsecond=0)
    return first_inside(not_before, keep, fields.rules or SequenceRules(), zone)


def new_send_time(task: Task, not_before: float) -> datetime:
    """Where a task refused until ``not_before`` (epoch seconds) goes (module docstring)."""
    earliest = max(not_before, clock.now() + email_schedules.MIN_LEAD_SECONDS)
    minute = datetime.fromtimestamp(math.ceil(earliest / 60) * 60, UTC)
    return _inside(task, minute)


def _later_steps(task: Task) -> list[Task]:
    """The campaign's steps after ``task``'s to the same recipient, in order, up to the first missing."""
    fields = task.email
    assert fields is not None
    found: list[Task] = []
    step = fields.step + 1
    while (later := task_store.email_tasks_of(task.job_id, fields.recipient, [step])) != []:
        found.extend(later)
        step += 1
    return found


def _keep_spacing(task: Task, moved_to: datetime, target: ScheduleTarget) -> int:
    """Move the later Pending steps so each keeps its planned spacing after the one before; how many."""
    fields = task.email
    assert fields is not None
    previous_planned, previous_new = fields.send_time, moved_to
    moved = 0
    for later in _later_steps(task):
        assert later.email is not None
        planned = later.email.send_time
        spaced = previous_new + max(planned - previous_planned, timedelta(0))
        wanted = planned if spaced <= planned else _inside(later, spaced)
        previous_planned, previous_new = planned, wanted
        if wanted <= planned or later.status is not Status.PENDING:
            continue
        try:
            task_store.postpone_email(later, send_at=utc_iso(wanted))
        except TransitionRejectedError:  # outcome: claimed by its worker (which cancels it) or moved
            continue
        current = task_store.get_task(later.task_id)
        if current is not None and current.status is Status.PENDING:
            email_schedules.move_schedule(current, target)
        moved += 1
    return moved


def defer(claimed: Task, not_before: float, reason: str, target: ScheduleTarget) -> Deferral:
    """Move the claimed ``task`` to its first allowed minute at or after ``not_before`` (module docstring).

    ``TransitionRejectedError`` when the claim was lost meanwhile (nothing moved).
    """
    wanted = new_send_time(claimed, not_before)
    send_at = utc_iso(wanted)
    task_store.defer_email(claimed, send_at=send_at, reason=reason)
    current = task_store.get_task(claimed.task_id)
    if current is not None and current.status is Status.PENDING:
        email_schedules.move_schedule(current, target)
    return Deferral(send_at=send_at, later_steps_moved=_keep_spacing(claimed, wanted, target))
