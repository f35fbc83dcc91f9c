"""One reconciler run: the stale open tasks of one kind, oldest first, one action each, before the deadline.

Every reconciler reads the sparse ``open-tasks`` index (never the table) phase by phase — one phase per
open status, with its own staleness threshold and action — stops between two tasks when its time is
up (the next run continues), and reports what it read and did as logs and metrics.

One task harms one task: a row that is not a valid task is failed (``malformed_task_row``) and an
action that raises is logged with its task id; both are counted, the run goes on with the next task,
and when it is done the handler raises ``ReconcilerRunError`` after publishing, so the function's
error alarm and its DLQ tell a person (the retried run repeats only idempotent actions).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

from aws_lambda_powertools.utilities.typing import LambdaContext

from outreach import clock, errors, task_store
from outreach.errors import ReconcilerRunError
from outreach.observability import MetricUnit, logger, metrics
from outreach.task_model import Kind, MalformedTask, Status, Task

ActionT = TypeVar("ActionT", bound=StrEnum)

# Time kept back from the Lambda deadline: the run stops starting new actions after this.
DEADLINE_RESERVE_SECONDS = 10.0
# Task ids of unhandled tasks kept in a run's report and error (the logs have every one).
_FAILED_IDS_KEPT = 10


@dataclass
class RunReport:
    """What one run did: tasks examined, actions taken, what reading the index cost."""

    examined: int = 0
    actions: dict[str, int] = field(default_factory=dict)
    items_read: int = 0
    pages_read: int = 0
    stopped_early: bool = False
    malformed: int = 0  # rows that are not valid tasks (failed as malformed_task_row where readable)
    errors: int = 0  # tasks whose action raised; the run went on
    failed_task_ids: list[str] = field(default_factory=list)  # of both, the first few

    @classmethod
    def of(cls, actions: Iterable[StrEnum]) -> RunReport:
        """An empty report that lists every one of ``actions`` (at 0)."""
        return cls(actions={action.value: 0 for action in actions})

    def count(self, action: StrEnum) -> None:
        self.actions[action.value] = self.actions.get(action.value, 0) + 1

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def note_failure(self, task_id: str) -> None:
        if len(self.failed_task_ids) < _FAILED_IDS_KEPT:
            self.failed_task_ids.append(task_id)

    def raise_for_failures(self) -> None:
        """``ReconcilerRunError`` when any task could not be handled (after the run did the rest)."""
        if self.malformed or self.errors:
            raise ReconcilerRunError(
                f"{self.malformed} malformed rows and {self.errors} failed actions in this run "
                f"(first: {', '.join(self.failed_task_ids)})"
            )


@dataclass(frozen=True)
class Phase:
    """Tasks in ``status`` unchanged for ``after_seconds`` get ``act``; it returns what it did."""

    status: Status
    after_seconds: float
    act: Callable[[Task], StrEnum]


def sweep(
    kind: Kind,
    phases: Sequence[Phase],
    report: RunReport,
    *,
    now: float,
    page_size: int,
    remaining_seconds: Callable[[], float],
) -> RunReport:
    """Run the phases in order over the index; ``report`` is filled in and returned."""
    cost = task_store.IndexRead()
    try:
        for phase in phases:
            stale = task_store.open_tasks(
                kind, phase.status, clock.iso(now - phase.after_seconds), page_size=page_size, cost=cost
            )
            for task in stale:
                if remaining_seconds() <= 0:
                    report.stopped_early = True
                    return report
                report.examined += 1
                if isinstance(task, MalformedTask):
                    _settle_malformed(task, report)
                    continue
                try:
                    action = phase.act(task)
                except Exception:  # noqa: BLE001 - outcome: logged, counted, ReconcilerRunError after the run
                    logger.exception("reconciler action failed", extra={"task_id": task.task_id})
                    report.errors += 1
                    report.note_failure(task.task_id)
                    continue
                report.count(action)
                logger.info(
                    f"task {action.value}",
                    extra={
                        "task_id": task.task_id,
                        "job_id": task.job_id,
                        "status": phase.status.value,
                        "attempts": task.attempts,
                        "last_error": task.last_error,
                        "updated_at": task.updated_at,
                    },
                )
    finally:
        report.items_read, report.pages_read = cost.items, cost.pages
    return report


def _settle_malformed(row: MalformedTask, report: RunReport) -> None:
    """Fail a row that is not a valid task, so it does not stay open; counted either way."""
    report.malformed += 1
    report.note_failure(row.task_id)
    try:
        task_store.fail_malformed(row)
        settled = "failed as malformed_task_row"
    except errors.TransitionRejectedError:  # outcome: changed since read or unreadable; logged and counted
        settled = "left open: changed since read, or its status or job cannot be read"
    logger.error(
        "malformed task row",
        extra={"task_id": row.task_id, "job_id": row.job_id, "problem": row.problem, "settled": settled},
    )


def time_left(context: LambdaContext) -> Callable[[], float]:
    """Seconds the run may still start actions in, counting down from now."""
    deadline = time.monotonic() + context.get_remaining_time_in_millis() / 1000.0 - DEADLINE_RESERVE_SECONDS
    return lambda: deadline - time.monotonic()


def publish(report: RunReport, metric_by_action: Mapping[ActionT, str]) -> None:
    """The run's metrics (tasks examined, one count per action) and its summary log line."""
    metrics.add_metric(name="TasksExamined", unit=MetricUnit.Count, value=report.examined)
    metrics.add_metric(name="MalformedTasks", unit=MetricUnit.Count, value=report.malformed)
    metrics.add_metric(name="TaskActionErrors", unit=MetricUnit.Count, value=report.errors)
    for action, metric in metric_by_action.items():
        metrics.add_metric(name=metric, unit=MetricUnit.Count, value=report.actions.get(action.value, 0))
    logger.info("reconciler run done", extra=report.as_dict())
