"""One EventBridge Scheduler one-time schedule per email task: create it once, find it, delete it.

The schedule fires at the task's ``send_at`` (the whole second at or after it), written as ``at(<UTC
time>)`` with ``ScheduleExpressionTimezone`` = ``UTC``: an absolute instant, so the hour the clocks go
back, whose local wall times happen twice, cannot make it fire an hour early or late. It is never
created in the past: the ``at()`` is at least ``MIN_LEAD_SECONDS`` after the moment of the call (AWS
documents no answer for a past one-time schedule), and invokes the email worker with ``{"task_id":
...}``. Scheduler retries a failed delivery to Lambda twice and then puts the event in the email DLQ;
after it has fired, the schedule deletes itself (``ActionAfterCompletion`` = ``DELETE``). Schedule
names derive from the task id (``email_task.email_schedule_name``), so creating a schedule twice finds
the first (``ConflictException``) and creates nothing.

AWS: https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html#one-time (one-time
schedules, time zones), https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateSchedule.html
(ActionAfterCompletion, RetryPolicy, DeadLetterConfig, ConflictException).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from outreach import clients, clock, config, errors, sdk_features
from outreach.email_task import PlannedEmail
from outreach.task_model import Task

if TYPE_CHECKING:
    from mypy_boto3_scheduler.type_defs import TargetTypeDef

# Scheduler retries a failed delivery to the worker this often before the event goes to the DLQ.
MAXIMUM_RETRY_ATTEMPTS = 2
# An at() is never less than this ahead of the CreateSchedule call that writes it.
MIN_LEAD_SECONDS = 60
SCHEDULE_TIMEZONE = "UTC"

# The reconciler and the operator's commands create schedules with ActionAfterCompletion.
sdk_features.require(sdk_features.SCHEDULER_ACTION_AFTER_COMPLETION)

_ENV = {
    "group": "EMAIL_SCHEDULE_GROUP",
    "worker_arn": "EMAIL_WORKER_ARN",
    "role_arn": "EMAIL_SCHEDULER_ROLE_ARN",
    "dlq_arn": "EMAIL_DLQ_ARN",
}


@dataclass(frozen=True)
class ScheduleTarget:
    """Where email schedules live and what they invoke: the schedule group, the worker function, the
    role Scheduler assumes to invoke it, and the email DLQ for deliveries that failed every retry."""

    group: str
    worker_arn: str
    role_arn: str
    dlq_arn: str

    @classmethod
    def from_env(cls) -> ScheduleTarget:
        """From the environment Terraform sets on the email reconciler (``EMAIL_SCHEDULE_GROUP``,
        ``EMAIL_WORKER_ARN``, ``EMAIL_SCHEDULER_ROLE_ARN``, ``EMAIL_DLQ_ARN``)."""
        missing = [name for name in _ENV.values() if not os.environ.get(name, "").strip()]
        if missing:
            raise errors.ConfigurationError(f"environment variables {', '.join(missing)} are required")
        return cls(**{field: os.environ[name].strip() for field, name in _ENV.items()})


def at_expression(moment: datetime) -> str:
    """``at(yyyy-mm-ddThh:mm:ss)`` of ``moment`` in UTC (the schedules' ``ScheduleExpressionTimezone``),
    a fraction of a second rounded up: ``at()`` names whole seconds, so a time written down would fire
    before ``moment``, and the email would go out before its planned send time."""
    utc = moment.astimezone(UTC)
    if utc.microsecond:
        utc = utc.replace(microsecond=0) + timedelta(seconds=1)
    return f"at({utc.strftime('%Y-%m-%dT%H:%M:%S')})"


def fire_time(wanted: datetime, now: float) -> datetime:
    """When a schedule created at ``now`` fires for ``wanted``: ``wanted``, or ``MIN_LEAD_SECONDS``
    after ``now`` (to the whole second) if that is later."""
    earliest = datetime.fromtimestamp(math.ceil(now + MIN_LEAD_SECONDS), UTC)
    return max(wanted.astimezone(UTC), earliest)


def _when(email: PlannedEmail | Task) -> tuple[str, datetime]:
    """Schedule name and send time of a planned email or a stored email task."""
    if isinstance(email, PlannedEmail):
        return email.schedule_name, email.send_at
    if email.email is None:
        raise ValueError(f"{email.task_id} is not an email task")
    return email.email.schedule_name, email.email.send_time


def _is(error: ClientError, code: str) -> bool:
    return str(error.response.get("Error", {}).get("Code", "")) == code


def ensure_schedule(
    email: PlannedEmail | Task, target: ScheduleTarget, *, at: datetime | None = None
) -> bool:
    """Create the email's one-time schedule; ``False`` if a schedule of that name is already there.

    ``at`` overrides the send time (the reconciler's send-now of an overdue task); otherwise the
    schedule fires at the email's ``send_at``. Either is moved to ``MIN_LEAD_SECONDS`` from the moment
    of the call if it is earlier (``fire_time``), so no schedule is ever created in the past.
    """
    name, send_at = _when(email)
    request_target: TargetTypeDef = {
        "Arn": target.worker_arn,
        "RoleArn": target.role_arn,
        "Input": json.dumps({"task_id": email.task_id}),
        "RetryPolicy": {
            "MaximumRetryAttempts": MAXIMUM_RETRY_ATTEMPTS,
            "MaximumEventAgeInSeconds": config.email_send_grace_seconds(),
        },
        "DeadLetterConfig": {"Arn": target.dlq_arn},
    }
    try:
        clients.scheduler().create_schedule(
            Name=name,
            GroupName=target.group,
            ScheduleExpression=at_expression(fire_time(at or send_at, clock.now())),
            ScheduleExpressionTimezone=SCHEDULE_TIMEZONE,
            FlexibleTimeWindow={"Mode": "OFF"},
            ActionAfterCompletion="DELETE",
            State="ENABLED",
            Target=request_target,
        )
    except ClientError as exc:
        if _is(exc, "ConflictException"):
            return False
        raise
    return True


def delete_schedule(name: str, target: ScheduleTarget | str) -> bool:
    """Delete a schedule of ``target``'s group (or the group named); ``False`` if there was none (it
    fired and deleted itself, or never existed)."""
    group = target if isinstance(target, str) else target.group
    try:
        clients.scheduler().delete_schedule(Name=name, GroupName=group)
    except ClientError as exc:
        if _is(exc, "ResourceNotFoundException"):
            return False
        raise
    return True


def schedule_exists(name: str, target: ScheduleTarget) -> bool:
    """Whether the schedule is there (one GetSchedule)."""
    try:
        clients.scheduler().get_schedule(Name=name, GroupName=target.group)
    except ClientError as exc:
        if _is(exc, "ResourceNotFoundException"):
            return False
        raise
    return True


def _fires_at(name: str, target: ScheduleTarget) -> str | None:
    """The schedule's ``ScheduleExpression``, or ``None`` when there is none."""
    try:
        found = clients.scheduler().get_schedule(Name=name, GroupName=target.group)
    except ClientError as exc:
        if _is(exc, "ResourceNotFoundException"):
            return None
        raise
    return str(found.get("ScheduleExpression", ""))


def move_schedule(task: Task, target: ScheduleTarget) -> bool:
    """Make the task's schedule fire at its ``send_at``; ``True`` when it had to be (re)created.

    One GetSchedule; a schedule at another time is deleted and created again, so a task moved later
    (an absence, the send governor) is invoked at its new time. Run again, it changes nothing.
    https://docs.aws.amazon.com/scheduler/latest/APIReference/API_GetSchedule.html
    """
    if task.email is None:
        raise ValueError(f"{task.task_id} is not an email task")
    wanted = at_expression(fire_time(task.email.send_time, clock.now()))
    current = _fires_at(task.email.schedule_name, target)
    if current == wanted:
        return False
    if current is not None:
        delete_schedule(task.email.schedule_name, target)
    ensure_schedule(task, target)
    return True
