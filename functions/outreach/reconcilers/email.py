"""Email reconciler: every 30 minutes, open email tasks no schedule or retry will move any more are moved on.

It reads the open email tasks through the sparse ``open-tasks`` index (never a scan), oldest first, in
the shared reconciler sweep (``reconcilers.sweep``), and for those unchanged longer than the
thresholds:

- ``Running`` with its lease run out: the worker claimed it and never recorded the outcome — it may
  have sent the email. ``Failed`` with reason ``delivery_unknown``; never sent again.
- ``Pending`` whose ``send_at`` is more than ``schedule_horizon_seconds`` ahead: not due yet, left to
  its schedule without a call (a later run checks it before it is due), so a large healthy backlog
  costs no GetSchedule and never crowds out the few broken ones.
- ``Pending`` due within the horizon or past it, whose schedule is missing (lost, deleted, or fired
  into failures that ended in the email DLQ): with ``send_at`` ahead, the schedule is created again;
  overdue within the grace period, a one-time schedule sends it soon ("send now"); later than that,
  ``Failed`` with reason ``too_late`` (and any leftover schedule deleted).

Send-now times are spread at the campaign's own rate (``max_per_minute`` on the task, else
``DEFAULT_CATCH_UP_PER_MINUTE``), starting a minute after the moment each schedule is created, so a
run that finds hundreds of overdue emails does not send them all in one minute; one that would be
past the grace period by its turn is ``too_late`` instead.

Send now goes through a schedule rather than a direct asynchronous invoke of the worker: the email
then takes the one delivery path every email takes (the schedule's retry policy and DLQ, then the
worker's async retries and its DLQ), and the reconciler needs no permission on the worker itself.

Whether a schedule is there is one GetSchedule per stale Pending task, which IAM can restrict to the
group's schedules (ListSchedules would need a policy on every resource). Every action is one
conditional write on the state that was read (the Pending mark, ``fail_stale``), so overlapping runs, or
a run racing the worker, neither act twice nor move a task backwards; the worker's claim makes an
extra invocation harmless.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from outreach import clock, config, email_schedules, errors, task_store
from outreach.email_schedules import ScheduleTarget
from outreach.observability import logger, metrics
from outreach.reconcilers.sweep import Phase, RunReport, publish, sweep, time_left
from outreach.task_model import Kind, Status, Task

# The rate of send-now schedules of a campaign whose tasks carry no ``max_per_minute``.
DEFAULT_CATCH_UP_PER_MINUTE = 10


class Action(StrEnum):
    RESCHEDULED = "rescheduled"
    NOT_DUE = "not_due"  # send_at beyond the horizon: not looked at yet
    SENT_NOW = "sent_now"
    TOO_LATE = "too_late"
    DELIVERY_UNKNOWN = "delivery_unknown"
    SCHEDULED = "scheduled"  # its schedule is there: nothing to do
    LEFT_ALONE = "left_alone"  # changed by a worker or another run since it was read, or leased


_METRIC_BY_ACTION = {
    Action.RESCHEDULED: "EmailsRescheduled",
    Action.NOT_DUE: "EmailsNotDueYet",
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
        task_store.fail_stale(
            task,
            reason=f"delivery_unknown: claimed at {task.updated_at}, the worker never recorded the outcome",
        )
    except errors.TransitionRejectedError:  # outcome: changed since read, the worker or another run has it
        return Action.LEFT_ALONE
    return Action.DELIVERY_UNKNOWN


class CatchUp:
    """Send-now times of one run: per campaign, ``max_per_minute`` schedules a minute, in order."""

    def __init__(self) -> None:
        self._taken: dict[str, int] = {}

    def next_time(self, task: Task, now: float) -> datetime:
        """The fire time of the campaign's next send-now schedule created at ``now``."""
        fields = task.email
        per_minute = (fields.max_per_minute if fields else None) or DEFAULT_CATCH_UP_PER_MINUTE
        taken = self._taken.get(task.job_id, 0)
        self._taken[task.job_id] = taken + 1
        offset = (taken // per_minute) * 60 + (taken % per_minute) * 60 // per_minute
        return email_schedules.fire_time(datetime.fromtimestamp(now, UTC), now) + timedelta(seconds=offset)


class PendingEmails:
    """For each stale Pending email task: leave it to its schedule, recreate that, or fail it too late."""

    def __init__(
        self, target: ScheduleTarget, grace_seconds: int, now: float, horizon_seconds: int = 3_600
    ) -> None:
        self._target = target
        self._grace_seconds = grace_seconds
        self._now = now
        self._horizon_seconds = horizon_seconds
        self._catch_up = CatchUp()

    def act(self, task: Task) -> Action:
        fields = task.email
        if fields is None:
            return Action.LEFT_ALONE
        send_at = fields.send_time.timestamp()
        if send_at - self._now > self._horizon_seconds:
            return Action.NOT_DUE
        late = self._now - send_at
        if late > self._grace_seconds:
            return self._too_late(task, late)
        if email_schedules.schedule_exists(fields.schedule_name, self._target):
            return Action.SCHEDULED
        if late <= 0:
            return self._mark_and_schedule(task, None, Action.RESCHEDULED)
        soon = self._catch_up.next_time(task, clock.now())
        if soon.timestamp() - send_at > self._grace_seconds:
            return self._too_late(task, soon.timestamp() - send_at)
        return self._mark_and_schedule(task, soon, Action.SENT_NOW)

    def _mark_and_schedule(self, task: Task, at: datetime | None, done: Action) -> Action:
        try:
            task_store.mark_redispatched(task)
        except (
            errors.TransitionRejectedError
        ):  # outcome: changed since read, the worker or another run has it
            return Action.LEFT_ALONE
        email_schedules.ensure_schedule(task, self._target, at=at)
        return done

    def _too_late(self, task: Task, late: float) -> Action:
        fields = task.email
        if fields is None:
            return Action.LEFT_ALONE
        try:
            task_store.fail_stale(task, reason=f"too_late: {int(late)} s after send_at {fields.send_at}")
        except (
            errors.TransitionRejectedError
        ):  # outcome: changed since read, the worker or another run has it
            return Action.LEFT_ALONE
        email_schedules.delete_schedule(fields.schedule_name, self._target)
        return Action.TOO_LATE


def reconcile(
    settings: config.EmailReconcilerSettings, target: ScheduleTarget, remaining_seconds: Callable[[], float]
) -> RunReport:
    """One pass: Running tasks first (possibly sent, settle them), then Pending ones."""
    now = clock.now()
    pending = PendingEmails(target, settings.send_grace_seconds, now, settings.schedule_horizon_seconds)
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
    report = reconcile(config.for_email_reconciler(), ScheduleTarget.from_env(), time_left(context))
    publish(report, _METRIC_BY_ACTION)
    report.raise_for_failures()
    return report.as_dict()
