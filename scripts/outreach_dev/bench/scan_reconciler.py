"""Baseline reconciler: the same actions as ours, on stale tasks found by a filtered Scan of the table.

What a user would write without a sparse index: page through every row and keep the open scrape
tasks last changed before the thresholds, then act on each exactly as ``outreach.reconcilers.scrape``
does. DynamoDB reads (and bills) every row a Scan passes, filtered out or not. The Scan is left at
DynamoDB's own page size (1 MB), as such code usually is.
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Scan.html#Scan.FilterExpression
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from boto3.dynamodb.types import TypeDeserializer

from outreach import clients, clock, config
from outreach.reconcilers import scrape as reconciler
from outreach.task_model import Status, Task

_deserializer = TypeDeserializer()


@dataclass
class ScanReport:
    items_read: int = 0
    pages_read: int = 0
    examined: int = 0


def reconcile(settings: config.ReconcilerSettings) -> ScanReport:
    """One pass over the whole table; every stale open scrape task gets our reconciler's action."""
    now = clock.now()
    report = ScanReport()
    values: dict[str, Any] = {
        ":scrape": {"S": "scrape"},
        ":pending": {"S": Status.PENDING.value},
        ":running": {"S": Status.RUNNING.value},
        ":pending_before": {"S": clock.iso(now - settings.pending_after_seconds)},
        ":running_before": {"S": clock.iso(now - settings.running_after_seconds)},
    }
    pages = (
        clients.dynamodb()
        .get_paginator("scan")
        .paginate(
            TableName=config.tasks_table(),
            FilterExpression="kind = :scrape AND ((#s = :pending AND updated_at < :pending_before) "
            "OR (#s = :running AND updated_at < :running_before))",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues=values,
        )
    )
    for page in pages:
        report.pages_read += 1
        report.items_read += int(page.get("ScannedCount", 0))
        for item in page.get("Items", []):
            task = Task.from_item({name: _deserializer.deserialize(value) for name, value in item.items()})
            report.examined += 1
            if task.status is Status.RUNNING:
                reconciler.recover_running(task, settings, now)
            else:
                reconciler.redispatch(task)
    return report
