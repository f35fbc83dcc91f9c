"""Creating one job's tasks with partition throttling on: the ``open-tasks`` key unsharded against sharded.

The same job (``tasks`` sites) is created twice on moto in-process with the embedded AWS's partition
throttling switched on (``dynamodb_partition_throttling``: 1,000 write units a second per partition
key of the table and of each index, on the wall clock): once with every open task under one
``open-tasks`` key (``OPEN_INDEX_SHARDS=1``, the layout before sharding), once over the default shard
count of modules/tasks-table. Each run reports its creation time, the requests the emulator refused
for throttling and the pauses job creation took before sending them again. The two runs follow each
other with nothing between them, so load on the machine falls on both alike. One key throttles only
where the creator writes faster than 1,000 tasks a second: the one-key rate's ratio to that limit
says whether this machine's moto got there.
"""

from __future__ import annotations

import time

from embedded_aws.dynamodb_partition_throttling import PARTITION_WRITE_UNITS_PER_SECOND, partition_throttling
from outreach import task_store
from outreach_dev import function_env
from outreach_dev.bench.report import Figure, MeasurementError, Section
from outreach_dev.bench.sandbox import sandbox

JOB = "bench-sharded"


def _create(tasks: int, shards: int) -> dict[str, float]:
    urls = [f"https://s{i}.example" for i in range(tasks)]
    with (
        sandbox(f"bench-shards-{shards}", extra_env={"OPEN_INDEX_SHARDS": str(shards)}),
        partition_throttling() as throttle,
    ):
        began = time.perf_counter()
        created = task_store.create_scrape_job(JOB, urls)
        seconds = time.perf_counter() - began
        pending = task_store.job_counts(JOB)["Pending"]
    if len(created.created) != tasks or pending != tasks:
        raise MeasurementError(
            f"{shards} shards: {len(created.created)} created, {pending} counted of {tasks}"
        )
    return {
        "seconds": seconds,
        "tasks_per_second": tasks / seconds,
        "throttled_requests": throttle.throttled_requests,
        "retries": created.throttling.retries,
        "paused_seconds": created.throttling.paused_seconds,
    }


def run(tasks: int) -> Section:
    default = int(function_env.settings("scrape_reconciler")["OPEN_INDEX_SHARDS"])
    one_key = _create(tasks, 1)
    sharded = _create(tasks, default)
    section = Section(
        "sharded creation",
        details={
            "tasks": tasks,
            "partition_write_units_per_second": PARTITION_WRITE_UNITS_PER_SECOND,
            "shards": default,
            "one_key": one_key,
            "sharded": sharded,
        },
    )
    prefix = f"{tasks:,} tasks"
    section.add(
        Figure(
            f"{prefix}, one key: tasks created per second",
            one_key["tasks_per_second"],
            "tasks/s",
            baseline=PARTITION_WRITE_UNITS_PER_SECOND,
        )
    )
    section.add(Figure(f"{prefix}, one key: creation time", one_key["seconds"], "s"))
    section.add(Figure(f"{prefix}, one key: throttled requests", one_key["throttled_requests"], "requests"))
    section.add(
        Figure(
            f"{prefix}, {default} shards: creation time",
            sharded["seconds"],
            "s",
            baseline=one_key["seconds"],
        )
    )
    section.add(
        Figure(
            f"{prefix}, {default} shards: throttled requests",
            sharded["throttled_requests"],
            "requests",
            baseline=one_key["throttled_requests"],
            target="0",
            met=sharded["throttled_requests"] == 0,
        )
    )
    return section
