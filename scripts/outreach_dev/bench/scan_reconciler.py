"""Baseline reconciler: the same actions as ours, on stale tasks found by a filtered Scan of the table.

What a user would write without a sparse index: page through every row and keep the open scrape
tasks last changed before the thresholds, then act on each exactly as ``outreach.reconcilers.scrape``
does. DynamoDB reads (and bills) every row a Scan passes, filtered out or not. The Scan is left at
DynamoDB's own page size (1 MB), as such code usually is.
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Scan.html#Scan.FilterExpression
"""

from __future__ import annotations

from dataclasses import dataclass

from outreach import clock, config, task_store
from outreach.reconcilers import scrape as reconciler
from outreach.task_model import Status, Task


@dataclass
class ScanReport:
    items_read: int = 0
    pages_read: int = 0
    examined: int = 0


def reconcile(settings: config.ReconcilerSettings) -> ScanReport:
    """One pass over the whole table; every stale open scrape task gets our reconciler's action."""
    now = clock.now()
    report = ScanReport()
    values = {
        ":scrape": "scrape",
        ":pending": Status.PENDING.value,
        ":running": Status.RUNNING.value,
        ":pending_before": clock.iso(now - settings.pending_after_seconds),
        ":running_before": clock.iso(now - settings.running_after_seconds),
    }
    request = {
        "FilterExpression": "kind = :scrape AND ((#s = :pending AND updated_at < :pending_before) "
        "OR (#s = :running AND updated_at < :running_before))",
        "ExpressionAttributeNames": {"#s": "status"},
        "ExpressionAttributeValues": task_store.to_avs(values),
    }
    cost = task_store.IndexRead()
    for row in task_store.rows("scan", request, cost=cost):
        task = Task.from_item(row)
        report.examined += 1
        if task.status is Status.RUNNING:
            reconciler.recover_running(task, settings, now)
        else:
            reconciler.redispatch(task)
    report.items_read, report.pages_read = cost.items, cost.pages
    return report
