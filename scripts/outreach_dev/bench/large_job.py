"""A job of many sites end to end through creation and dispatch on the embedded AWS, throttling on.

The embedded AWS (moto server on loopback) runs in this process with partition throttling switched on
(``dynamodb_partition_throttling``: 1,000 write units a second per partition key, wall clock), with the
pipeline's table (its ``open-tasks`` key over the module's default shard count), scrape queue and bucket:

1. ``outreach job create`` runs in a child process against it, as an operator runs it: its wall time
   and its peak resident memory (the child's own, ``peak_memory.own_peak_rss_kib``; the emulator
   lives in this process, so the figure is the command's alone, not moto's), and the requests the
   emulator throttled.
2. Every INSERT of the table's stream goes to the dispatcher in this process in the event source
   mapping's batches: the batches, the SQS messages sent (the queue's count) and the time taken.
   Nothing scrapes the messages: dispatch is where this job's run ends.
3. The scrape reconciler runs once, right after: with nothing stale it reads no task, only the first
   page of every shard of each open status.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import boto3

from embedded_aws.server import embedded_aws
from outreach import clients, config, dispatcher
from outreach.reconcilers import scrape as reconciler
from outreach.task_model import OPEN
from outreach_dev import function_env
from outreach_dev.bench.calls_per_task import STREAM_BATCH_SIZE
from outreach_dev.bench.lambda_context import BenchContext
from outreach_dev.bench.report import Figure, MeasurementError, Section
from outreach_dev.bench.sandbox import REGION, Sandbox
from outreach_dev.env_vars import overridden
from outreach_dev.pipeline_resources import create_pipeline_resources

ROOT = Path(__file__).resolve().parents[3]
JOB = "bench-large"
# What `job create` of 100,000 sites weighed before, moto in its process (docs/operator-cli.md): the
# memory target.
CREATE_MEMORY_TARGET_MIB = 692.0
# The child runs the command line, then writes its own peak resident memory (KiB).
_CHILD = """
import sys
from outreach_dev.bench.peak_memory import own_peak_rss_kib
from outreach_operator.cli.app import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as out:
    out.write(str(own_peak_rss_kib()))
sys.exit(code)
"""


def _environment(endpoint: str) -> dict[str, str]:
    return {
        **function_env.all_settings("dispatcher", "scraper", "scrape_reconciler"),
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
        "POWERTOOLS_SERVICE_NAME": "outreach-bench",
        "POWERTOOLS_METRICS_NAMESPACE": "OutreachBench",
        "POWERTOOLS_TRACE_DISABLED": "1",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
    }


def _job_create(sites: int, table: str, endpoint: str, directory: Path) -> dict[str, Any]:
    """Run ``outreach job create`` in a child process; its report, wall time and peak memory."""
    sites_file, rss_file = directory / "sites.txt", directory / "rss.txt"
    sites_file.write_text("".join(f"https://site{i}.example\n" for i in range(sites)))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "functions"), str(ROOT / "scripts")]),
        "OUTREACH_OPERATOR": "bench",
    }
    command = [sys.executable, "-c", _CHILD, str(rss_file)]
    command += ["--table", table, "--endpoint-url", endpoint, "--region", REGION, "--json"]
    command += ["job", "create", "--file", str(sites_file), "--job-id", JOB]
    began = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        raise MeasurementError(f"job create exited {done.returncode}: {done.stderr[-500:]}")
    report = json.loads(done.stdout)
    return {"seconds": seconds, "peak_rss_mib": int(rss_file.read_text()) / 1024, "report": report}


def _dispatch(box: Sandbox) -> dict[str, Any]:
    records = [r for r in box.stream_records() if r.get("eventName") == "INSERT"]
    began = time.perf_counter()
    batches = 0
    for start in range(0, len(records), STREAM_BATCH_SIZE):
        response = dispatcher.lambda_handler(
            {"Records": records[start : start + STREAM_BATCH_SIZE]}, BenchContext()
        )
        if response.get("batchItemFailures"):
            raise MeasurementError(f"dispatch reported failures: {response['batchItemFailures'][:3]}")
        batches += 1
    seconds = time.perf_counter() - began
    attributes = boto3.client("sqs").get_queue_attributes(
        QueueUrl=box.queue_url, AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    return {
        "inserts": len(records),
        "batches": batches,
        "messages": int(attributes["ApproximateNumberOfMessages"]),
        "seconds": seconds,
    }


def run(sites: int) -> Section:
    with (
        embedded_aws(partition_throttling=True) as endpoint,
        overridden(_environment(endpoint)),
        tempfile.TemporaryDirectory() as scratch,
    ):
        from embedded_aws.dynamodb_partition_throttling import active

        clients.reset()
        made = create_pipeline_resources("bench-large", REGION)
        box = Sandbox(made.table, made.stream_arn, made.queue_url, made.dlq_url, made.bucket)
        with overridden(
            {"TASKS_TABLE": made.table, "SCRAPE_QUEUE_URL": made.queue_url, "SCRAPE_DLQ_URL": made.dlq_url}
            | {"RESULTS_BUCKET": made.bucket}
        ):
            throttle = active()
            if throttle is None:
                raise MeasurementError("partition throttling is not on")
            created = _job_create(sites, made.table, endpoint, Path(scratch))
            throttled = throttle.throttled_requests
            dispatched = _dispatch(box)
            shards = config.open_index_shards()
            settings = config.ReconcilerSettings.from_env()
            reconciled = reconciler.reconcile(settings, lambda: 60.0)
        clients.reset()
    if created["report"].get("created") != sites or dispatched["messages"] != sites:
        raise MeasurementError(
            f"{sites} sites: {created['report'].get('created')} created, {dispatched['messages']} messages"
        )
    page_bound = len(OPEN) * shards
    section = Section(
        "large job",
        details={
            "sites": sites,
            "open_index_shards": shards,
            "job_create": {k: v for k, v in created.items() if k != "report"},
            "throttled_requests": throttled,
            "dispatch": dispatched,
            "reconciler": {"items_read": reconciled.items_read, "pages_read": reconciled.pages_read},
        },
    )
    prefix = f"{sites:,} sites"
    section.add(Figure(f"{prefix}: job create time", created["seconds"], "s"))
    section.add(
        Figure(
            f"{prefix}: job create peak memory",
            created["peak_rss_mib"],
            "MiB",
            baseline=CREATE_MEMORY_TARGET_MIB,
            target=f"<= {CREATE_MEMORY_TARGET_MIB:.0f} MiB (100,000 sites with moto, before)",
            met=created["peak_rss_mib"] <= CREATE_MEMORY_TARGET_MIB,
        )
    )
    section.add(
        Figure(f"{prefix}: requests throttled", throttled, "requests", target="0", met=throttled == 0)
    )
    # The stream's inserts are the tasks, the job's row and its counter shards.
    expected_batches = -(-dispatched["inserts"] // STREAM_BATCH_SIZE)
    section.add(
        Figure(
            f"{prefix}: dispatcher batches",
            dispatched["batches"],
            "batches",
            target=f"= {expected_batches:,} (one per {STREAM_BATCH_SIZE} inserts), one message per site",
            met=dispatched["batches"] == expected_batches and dispatched["messages"] == sites,
        )
    )
    section.add(Figure(f"{prefix}: dispatch time", dispatched["seconds"], "s"))
    section.add(
        Figure(
            f"{prefix}: reconciler items read, none stale",
            reconciled.items_read,
            "items",
            target="0",
            met=reconciled.items_read == 0,
        )
    )
    section.add(
        Figure(
            f"{prefix}: reconciler Query pages, {shards} shards",
            reconciled.pages_read,
            "pages",
            target=f"<= {page_bound} (one per shard and open status)",
            met=reconciled.pages_read <= page_bound,
        )
    )
    return section
