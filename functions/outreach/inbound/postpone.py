"""An absence moves the sequence: every open email of the campaign to an away recipient goes past the
return date, inside the window, and its schedule goes with it.

``postpone_for_absence(address, campaign_id, back_on, target)`` reads the campaign's email tasks to the
address (``task_store.reads.email_tasks_to``) and takes the Pending ones in step order:

- a task whose ``send_at`` falls (in its own time zone) on a day before ``back_on`` moves to the first
  moment inside its rules' window on or after ``back_on`` (``send_window.first_inside``), at its own
  local time of day where the window allows it. ``back_on`` is the day the reply names: "back on" and
  "until" are not told apart (``inbound.return_date``), so an email may come on the last day away;
- a later step keeps at least its planned spacing after the step before it, moved or not (the worker
  cancels a follow-up whose earlier step has not gone out yet, so two steps must never swap or meet);
- nothing moves earlier than planned, or to less than ``email_schedules.MIN_LEAD_SECONDS`` from now.

Each move is one conditional write (``task_store.transitions.postpone_email``: only while the task is
unclaimed and its ``send_at`` is still the one read). Then its schedule is moved: read
(GetSchedule), and if it does not fire at the new time, deleted and created again
(``email_schedules.move_schedule``). Moving the task first is the safe order: an old schedule that
fires before it is replaced invokes the worker early, and the worker refuses an early invocation
(``EarlyInvocations``) and leaves the task Pending. Run again (a retried record), every task is where
it should be and only a schedule a crash left behind is moved. A task claimed meanwhile is its
worker's, and is left alone. https://docs.aws.amazon.com/scheduler/latest/APIReference/API_GetSchedule.html
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from outreach import clock, email_schedules
from outreach.email_schedules import ScheduleTarget
from outreach.email_task import utc_iso
from outreach.errors import TransitionRejectedError
from outreach.inbound.send_window import first_inside
from outreach.sequence_rules import SequenceRules
from outreach.task_model import Status, Task
from outreach.task_store.reads import email_tasks_to, get_task
from outreach.task_store.transitions import postpone_email


@dataclass(frozen=True)
class Postponement:
    """What ``postpone_for_absence`` did: tasks moved, tasks claimed (or moved by another run) before
    its write, and schedules it moved."""

    moved: int = 0
    already_moved: int = 0
    schedules_moved: int = 0


def _open_steps(address: str, campaign_id: str) -> list[Task]:
    found = [
        task
        for task in email_tasks_to(address)
        if task.job_id == campaign_id and task.email is not None and task.status is Status.PENDING
    ]
    return sorted(found, key=lambda task: task.email.step if task.email else 0)


def _new_time(task: Task, back_on: date, earliest: datetime, spaced: datetime | None) -> datetime:
    """Where the task's email belongs (its own ``send_at`` when it need not move)."""
    fields = task.email
    assert fields is not None
    rules = fields.rules or SequenceRules()
    zone = ZoneInfo(fields.timezone)
    planned = fields.send_time
    local = planned.astimezone(zone)
    keep = time(local.hour, local.minute, local.second)
    wanted = planned
    if local.date() < back_on:
        start_of_day = datetime.combine(back_on, time(0), tzinfo=zone)
        wanted = first_inside(max(start_of_day, earliest), keep, rules, zone)
    if spaced is not None and wanted < spaced:
        wanted = first_inside(max(spaced, earliest), keep, rules, zone)
    return max(wanted, planned)


def _schedulable(task: Task, earliest: datetime) -> bool:
    """Whether ``task`` is Pending and due late enough for its schedule to be written again."""
    if task.email is None or task.status is not Status.PENDING:
        return False
    return task.email.send_time > earliest


def postpone_for_absence(
    address: str, campaign_id: str, back_on: date, target: ScheduleTarget
) -> Postponement:
    """Move the campaign's open emails to ``address`` past ``back_on`` (module docstring)."""
    earliest = datetime.fromtimestamp(clock.now() + email_schedules.MIN_LEAD_SECONDS, UTC)
    moved = already = schedules = 0
    previous: tuple[datetime, datetime] | None = None  # (planned, new) of the step before
    for task in _open_steps(address, campaign_id):
        assert task.email is not None
        planned = task.email.send_time
        spaced = None if previous is None else previous[1] + max(planned - previous[0], timedelta(0))
        wanted = _new_time(task, back_on, earliest, spaced)
        previous = (planned, wanted)
        current: Task | None = task
        if wanted > planned:
            try:
                postpone_email(task, send_at=utc_iso(wanted))
            except TransitionRejectedError:  # outcome: claimed (its worker's) or moved by another run
                already += 1
                continue
            moved += 1
            current = get_task(task.task_id)
        if (
            current is not None
            and _schedulable(current, earliest)
            and email_schedules.move_schedule(current, target)
        ):
            schedules += 1
    return Postponement(moved=moved, already_moved=already, schedules_moved=schedules)
