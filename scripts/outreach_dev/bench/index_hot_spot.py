"""The ``open-tasks`` index's write rate per partition key, on paper, from the measured job-creation speed.

Unsharded, every open scrape task of every job would sit under one index partition key
(``scrape#Pending``, later ``scrape#Running``): creating a job writes one index entry per task under
that key, so the key takes writes at the rate tasks are created; an update that changes an item's
index key writes the index twice (the old entry deleted, the new one put). One partition serves at
most 1,000 write units per second, and a throttled index write throttles the table write that caused
it. The key is written over ``OPEN_INDEX_SHARDS`` shards (modules/tasks-table's default): the rows
here say how many creators at the measured rate those shards carry. ``sharded_creation`` measures
the same on the embedded AWS with partition throttling on.
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from outreach_dev import function_env
from outreach_dev.bench.report import Figure, MeasurementError, Section

PARTITION_WRITE_UNITS_PER_SECOND = 1_000
JOB_SIZES = (3_575, 100_000)


@dataclass(frozen=True)
class HotSpot:
    tasks_per_second: float  # measured job-creation speed of one creator
    # Index write units per created task: items up to 1 KB, one entry each.
    index_writes_per_task: float = 1.0

    @property
    def key_write_rate(self) -> float:
        return self.tasks_per_second * self.index_writes_per_task

    @property
    def utilisation(self) -> float:
        """Share of one partition's write limit that one creator uses on the key."""
        return self.key_write_rate / PARTITION_WRITE_UNITS_PER_SECOND

    def creators_before_throttling(self) -> int:
        """How many jobs can be created at once before the key passes the partition limit."""
        return math.floor(PARTITION_WRITE_UNITS_PER_SECOND / self.key_write_rate)

    def seconds_on_the_key(self, tasks: int) -> float:
        return tasks / self.tasks_per_second

    def shards_needed(self, concurrent_creators: int) -> int:
        """Key shards (``scrape#Pending#<n>``) that keep each one under the limit."""
        return max(1, math.ceil(concurrent_creators * self.key_write_rate / PARTITION_WRITE_UNITS_PER_SECOND))


def section(tasks_created: int, creation_seconds: float) -> Section:
    if tasks_created <= 0 or creation_seconds <= 0:
        raise MeasurementError("no measured job creation to rate the index against")
    spot = HotSpot(tasks_created / creation_seconds)
    result = Section(
        "index hot spot",
        details={
            "measured_tasks_per_second": spot.tasks_per_second,
            "partition_write_units_per_second": PARTITION_WRITE_UNITS_PER_SECOND,
            "creators_before_throttling": spot.creators_before_throttling(),
            "jobs": {str(n): {"seconds_on_the_key": spot.seconds_on_the_key(n)} for n in JOB_SIZES},
        },
    )
    result.add(
        Figure(
            "open-tasks key writes per second, one creator",
            spot.key_write_rate,
            "writes/s",
            baseline=PARTITION_WRITE_UNITS_PER_SECOND,
        )
    )
    result.add(
        Figure("jobs created at once before the key throttles", spot.creators_before_throttling(), "jobs")
    )
    result.add(Figure("key shards one creator needs at that rate", spot.shards_needed(1), "shards"))
    shards = int(function_env.settings("scrape_reconciler")["OPEN_INDEX_SHARDS"])
    carried = math.floor(shards * PARTITION_WRITE_UNITS_PER_SECOND / spot.key_write_rate)
    result.details["open_index_shards"] = shards
    result.add(
        Figure(
            f"jobs created at once that {shards} shards carry at that rate",
            carried,
            "jobs",
            target=">= 1",
            met=carried >= 1,
        )
    )
    for n in JOB_SIZES:
        result.add(Figure(f"job of {n:,}: seconds at that rate on one key", spot.seconds_on_the_key(n), "s"))
    return result
