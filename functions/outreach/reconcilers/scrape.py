"""Scrape reconciler: every open scrape task the retries can no longer reach is moved on, every 5 minutes.

Retries only help work that still has a message. Three paths leave a scrape task with none: its
message used up its receives (it went to the DLQ with the task still ``Running``), the stream batch
that held it was given up (its record is in the failure bucket, the task still ``Pending``), or its
worker died and the message was lost. This handler reads the open tasks through the sparse
``open-tasks`` index only (oldest first, page by page, never a scan) and, for those unchanged for
longer than the thresholds Terraform derived from the applied settings:

- ``Running``, lease expired, unchanged for ``running_after_seconds`` (no SQS message can come back
  for it): re-queued (``Running -> Pending``, the stream dispatches it again) while it has attempts
  left, otherwise ``Failed`` with reason ``abandoned``, its attempt count and its last error;
- ``Pending``, unchanged for ``pending_after_seconds`` (the stream can no longer send it): its
  message is sent again to the scrape queue; the claim makes an extra message harmless.

Every action is one conditional write on the state that was read, so overlapping runs, or a run
racing a worker, can neither act twice nor move a task backwards. The run stops before the Lambda
deadline between two tasks; the next run continues with what is left.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from outreach import clients, clock, config, task_store
from outreach.observability import MetricUnit, logger, metrics
from outreach.task_model import Kind, Status, Task

# Time kept back from the Lambda deadline: the run stops starting new actions after this.
_DEADLINE_RESERVE_SECONDS = 10.0


class Action(StrEnum):
    REDISPATCHED = "redispatched"
    REQUEUED = "requeued"
    ABANDONED = "abandoned"
    LEFT_ALONE = "left_alone"  # changed by a worker or another run since it was read, or leased


_METRIC_BY_ACTION = {
    Action.REDISPATCHED: "TasksRedispatched",
    Action.REQUEUED: "TasksRequeued",
    Action.ABANDONED: "TasksAbandoned",
    Action.LEFT_ALONE: "TasksLeftAlone",
}


@dataclass
class RunReport:
    """What one run did: tasks examined, actions taken, what reading the index cost."""

    examined: int = 0
    actions: dict[str, int] = field(default_factory=lambda: {a.value: 0 for a in Action})
    items_read: int = 0
    pages_read: int = 0
    stopped_early: bool = False

    def count(self, action: Action) -> None:
        self.actions[action.value] += 1

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def redispatch(task: Task) -> Action:
    """Send a stale Pending task's message again; only the run whose mark succeeds sends."""
    try:
        task_store.mark_redispatched(task)
    except task_store.TransitionRejected:  # outcome: changed since read, another run or a worker has it
        return Action.LEFT_ALONE
    clients.sqs().send_message(
        QueueUrl=config.scrape_queue_url(), MessageBody=json.dumps({"task_id": task.task_id})
    )
    return Action.REDISPATCHED


def recover_running(task: Task, settings: config.ReconcilerSettings, now: float) -> Action:
    """Re-queue a Running task no message can reach any more, or fail it when its attempts are spent."""
    if task.lease_is_live(now):
        return Action.LEFT_ALONE
    try:
        if task.attempts >= settings.max_attempts:
            task_store.abandon(task, max_attempts=settings.max_attempts)
            return Action.ABANDONED
        task_store.requeue(task)
        return Action.REQUEUED
    except task_store.TransitionRejected:  # outcome: changed since read, another run or a worker has it
        return Action.LEFT_ALONE


def reconcile(settings: config.ReconcilerSettings, remaining_seconds: Callable[[], float]) -> RunReport:
    """One pass: Running tasks first (the rarer, older trouble), then Pending ones."""
    report = RunReport()
    cost = task_store.IndexRead()
    now = clock.now()
    phases: list[tuple[Status, float, Callable[[Task], Action]]] = [
        (Status.RUNNING, settings.running_after_seconds, lambda t: recover_running(t, settings, now)),
        (Status.PENDING, settings.pending_after_seconds, redispatch),
    ]
    try:
        for status, after_seconds, act in phases:
            stale = task_store.open_tasks(
                Kind.SCRAPE, status, clock.iso(now - after_seconds), page_size=settings.page_size, cost=cost
            )
            for task in stale:
                if remaining_seconds() <= 0:
                    report.stopped_early = True
                    return report
                report.examined += 1
                action = act(task)
                report.count(action)
                logger.info(
                    f"task {action.value}",
                    extra={
                        "task_id": task.task_id,
                        "job_id": task.job_id,
                        "status": status.value,
                        "attempts": task.attempts,
                        "last_error": task.last_error,
                        "updated_at": task.updated_at,
                    },
                )
    finally:
        report.items_read, report.pages_read = cost.items, cost.pages
    return report


def _publish(report: RunReport) -> None:
    metrics.add_metric(name="TasksExamined", unit=MetricUnit.Count, value=report.examined)
    for action, metric in _METRIC_BY_ACTION.items():
        metrics.add_metric(name=metric, unit=MetricUnit.Count, value=report.actions[action.value])


@metrics.log_metrics
@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    deadline = time.monotonic() + context.get_remaining_time_in_millis() / 1000.0 - _DEADLINE_RESERVE_SECONDS
    report = reconcile(config.ReconcilerSettings.from_env(), lambda: deadline - time.monotonic())
    _publish(report)
    logger.info("reconciler run done", extra=report.as_dict())
    return report.as_dict()
