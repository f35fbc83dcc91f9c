"""Email reconciler: every 30 minutes, open email tasks no schedule or retry will move any more are moved on.

It reads the open email tasks through the sparse ``open-tasks`` index (never a scan), oldest first, in
the shared reconciler sweep (``reconcilers.sweep``), and for those unchanged longer than the
thresholds:

- ``Running`` with its lease run out: the worker claimed it and never recorded the outcome — it may
  have sent the email. ``Failed`` with reason ``delivery_unknown``; never sent again.
- ``Pending`` whose schedule is missing (lost, deleted, or fired into failures that ended in the email
  DLQ): with ``send_at`` ahead, the schedule is created again; overdue within the grace period, a
  one-time schedule a minute from now sends it ("send now"); later than that, ``Failed`` with reason
  ``too_late`` (and any leftover schedule deleted).

Send now goes through a schedule rather than a direct asynchronous invoke of the worker: the email
then takes the one delivery path every email takes (the schedule's retry policy and DLQ, then the
worker's async retries and its DLQ), and the reconciler needs no permission on the worker itself.

Whether a schedule is there is one GetSchedule per stale Pending task, which IAM can restrict to the
group's schedules (ListSchedules would need a policy on every resource). Every action is one
conditional write on the state that was read (the Pending mark, ``give_up``), so overlapping runs, or
a run racing the worker, neither act twice nor move a task backwards; the worker's claim makes an
extra invocation harmless.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from outreach import clock, config, email_schedules, task_store
from outreach.email_schedules import ScheduleTarget
from outreach.observability import logger, metrics
from outreach.reconcilers.sweep import Phase, RunReport, publish, sweep, time_left
from outreach.task_model import Kind, Status, Task

# How far ahead a send-now schedule is put: Scheduler fires a one-time schedule within a minute of it.
SEND_NOW_DELAY_SECONDS = 60


class Action(StrEnum):
    RESCHEDULED = "rescheduled"
    SENT_NOW = "sent_now"
    TOO_LATE = "too_late"
    DELIVERY_UNKNOWN = "delivery_unknown"
    SCHEDULED = "scheduled"  # its schedule is there: nothing to do
    LEFT_ALONE = "left_alone"  # changed by a worker or another run since it was read, or leased


_METRIC_BY_ACTION = {
    Action.RESCHEDULED: "EmailsRescheduled",
    Action.SENT_NOW: "EmailsSentNow",
    Action.TOO_LATE: "EmailsTooLate",
    Action.DELIVERY_UNKNOWN: "EmailsDeliveryUnknown",
    Action.SCHEDULED: "EmailsScheduled",
    Action.LEFT_ALONE: "TasksLeftAlone",
}


def settle_running(task: Task, now: float) -> Action:
    """A Running email task whose lease ran out: ``Failed`` (``delivery_unknown``), never re-sent."""
    if task.lease_is_live(now):
        return Action.LEFT_ALONE
    try:
        task_store.give_up(
            task,
            reason=f"delivery_unknown: claimed at {task.updated_at}, the worker never recorded the outcome",
        )
    except task_store.TransitionRejected:  # outcome: changed since read, the worker or another run has it
        return Action.LEFT_ALONE
    return Action.DELIVERY_UNKNOWN


class PendingEmails:
    """For each stale Pending email task: leave it to its schedule, recreate that, or fail it too late."""

    def __init__(self, target: ScheduleTarget, grace_seconds: int, now: float) -> None:
        self._target = target
        self._grace_seconds = grace_seconds
        self._now = now

    def act(self, task: Task) -> Action:
        fields = task.email
        if fields is None:
            return Action.LEFT_ALONE
        late = self._now - task_store.parse_utc_iso(fields.send_at).timestamp()
        if late > self._grace_seconds:
            return self._too_late(task, late)
        if email_schedules.schedule_exists(fields.schedule_name, self._target):
            return Action.SCHEDULED
        try:
            task_store.mark_redispatched(task)
        except task_store.TransitionRejected:  # outcome: changed since read, the worker or another run has it
            return Action.LEFT_ALONE
        if late <= 0:
            email_schedules.ensure_schedule(task, self._target)
            return Action.RESCHEDULED
        soon = datetime.fromtimestamp(self._now + SEND_NOW_DELAY_SECONDS, tz=UTC)
        email_schedules.ensure_schedule(task, self._target, at=soon)
        return Action.SENT_NOW

    def _too_late(self, task: Task, late: float) -> Action:
        fields = task.email
        if fields is None:
            return Action.LEFT_ALONE
        try:
            task_store.give_up(task, reason=f"too_late: {int(late)} s after send_at {fields.send_at}")
        except task_store.TransitionRejected:  # outcome: changed since read, the worker or another run has it
            return Action.LEFT_ALONE
        email_schedules.delete_schedule(fields.schedule_name, self._target)
        return Action.TOO_LATE


def reconcile(
    settings: config.EmailReconcilerSettings, target: ScheduleTarget, remaining_seconds: Callable[[], float]
) -> RunReport:
    """One pass: Running tasks first (possibly sent, settle them), then Pending ones."""
    now = clock.now()
    pending = PendingEmails(target, settings.send_grace_seconds, now)
    phases = [
        Phase(Status.RUNNING, settings.running_after_seconds, lambda task: settle_running(task, now)),
        Phase(Status.PENDING, settings.pending_after_seconds, pending.act),
    ]
    return sweep(
        Kind.EMAIL,
        phases,
        RunReport.of(Action),
        now=now,
        page_size=settings.page_size,
        remaining_seconds=remaining_seconds,
    )


@metrics.log_metrics
@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    report = reconcile(
        config.EmailReconcilerSettings.from_env(), ScheduleTarget.from_env(), time_left(context)
    )
    publish(report, _METRIC_BY_ACTION)
    return report.as_dict()
