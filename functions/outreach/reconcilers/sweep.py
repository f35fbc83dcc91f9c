"""One reconciler run: the stale open tasks of one kind, oldest first, one action each, before the deadline.

Every reconciler reads the sparse ``open-tasks`` index (never the table) phase by phase — one phase per
open status, with its own staleness threshold and action — stops between two tasks when its time is
up (the next run continues), and reports what it read and did as logs and metrics.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

from aws_lambda_powertools.utilities.typing import LambdaContext

from outreach import clock, task_store
from outreach.observability import MetricUnit, logger, metrics
from outreach.task_model import Kind, Status, Task

ActionT = TypeVar("ActionT", bound=StrEnum)

# Time kept back from the Lambda deadline: the run stops starting new actions after this.
DEADLINE_RESERVE_SECONDS = 10.0


@dataclass
class RunReport:
    """What one run did: tasks examined, actions taken, what reading the index cost."""

    examined: int = 0
    actions: dict[str, int] = field(default_factory=dict)
    items_read: int = 0
    pages_read: int = 0
    stopped_early: bool = False

    @classmethod
    def of(cls, actions: Iterable[StrEnum]) -> RunReport:
        """An empty report that lists every one of ``actions`` (at 0)."""
        return cls(actions={action.value: 0 for action in actions})

    def count(self, action: StrEnum) -> None:
        self.actions[action.value] = self.actions.get(action.value, 0) + 1

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


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
                action = phase.act(task)
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


def time_left(context: LambdaContext) -> Callable[[], float]:
    """Seconds the run may still start actions in, counting down from now."""
    deadline = time.monotonic() + context.get_remaining_time_in_millis() / 1000.0 - DEADLINE_RESERVE_SECONDS
    return lambda: deadline - time.monotonic()


def publish(report: RunReport, metric_by_action: Mapping[ActionT, str]) -> None:
    """The run's metrics (tasks examined, one count per action) and its summary log line."""
    metrics.add_metric(name="TasksExamined", unit=MetricUnit.Count, value=report.examined)
    for action, metric in metric_by_action.items():
        metrics.add_metric(name=metric, unit=MetricUnit.Count, value=report.actions.get(action.value, 0))
    logger.info("reconciler run done", extra=report.as_dict())
