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
  message is sent again to the scrape queue, in the tenant its row names (``Task.tenant``, as the
  dispatcher sends it); the claim makes an extra message harmless.

Every action is one conditional write on the state that was read, so overlapping runs, or a run
racing a worker, can neither act twice nor move a task backwards. The run stops before the Lambda
deadline between two tasks; the next run continues with what is left.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from outreach import clients, clock, config, errors, task_store
from outreach.observability import logger, metrics
from outreach.reconcilers.sweep import Phase, RunReport, publish, sweep, time_left
from outreach.scrape_messages import scrape_message
from outreach.task_model import Kind, Status, Task

__all__ = ["Action", "RunReport", "lambda_handler", "reconcile", "recover_running", "redispatch"]


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


def redispatch(task: Task) -> Action:
    """Send a stale Pending task's message again; only the run whose mark succeeds sends."""
    try:
        task_store.mark_redispatched(task)
    except errors.TransitionRejectedError:  # outcome: changed since read, another run or a worker has it
        return Action.LEFT_ALONE
    message = scrape_message(task.task_id, task.tenant)
    clients.sqs().send_message(QueueUrl=config.scrape_queue_url(), **message)
    return Action.REDISPATCHED


def recover_running(task: Task, settings: config.ReconcilerSettings, now: float) -> Action:
    """Re-queue a Running task no message can reach any more, or fail it when its attempts are spent."""
    if task.lease_is_live(now):
        return Action.LEFT_ALONE
    try:
        if task.attempts >= settings.max_attempts:
            task_store.fail_after_attempts(task, max_attempts=settings.max_attempts)
            return Action.ABANDONED
        task_store.requeue_stuck(task)
        return Action.REQUEUED
    except errors.TransitionRejectedError:  # outcome: changed since read, another run or a worker has it
        return Action.LEFT_ALONE


def reconcile(settings: config.ReconcilerSettings, remaining_seconds: Callable[[], float]) -> RunReport:
    """One pass: Running tasks first (the rarer, older trouble), then Pending ones."""
    now = clock.now()
    phases = [
        Phase(Status.RUNNING, settings.running_after_seconds, lambda t: recover_running(t, settings, now)),
        Phase(Status.PENDING, settings.pending_after_seconds, redispatch),
    ]
    return sweep(
        Kind.SCRAPE,
        phases,
        RunReport.of(Action),
        now=now,
        page_size=settings.page_size,
        remaining_seconds=remaining_seconds,
    )


@metrics.log_metrics
@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    report = reconcile(config.for_scrape_reconciler(), time_left(context))
    publish(report, _METRIC_BY_ACTION)
    report.raise_for_failures()
    return report.as_dict()
