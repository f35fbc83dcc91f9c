"""A dispatch pipe dead letter replayed: the Pending scrape tasks of its batch's window, re-dispatched."""

from __future__ import annotations

import json
from typing import Any

from outreach_operator.cli.dlq.replay_queue import Handler
from outreach_operator.cli.redispatch import pending_in_window, redispatch
from outreach_operator.errors import ReplayRefusedError


def jobs_named(record: dict[str, Any]) -> list[str]:
    """The jobs a dead-lettered stream record names: those of the records it carries, if it carries
    any (a Lambda stream mapping's record for an S3 destination does). A pipe's dead letter carries
    only the batch's shard, sequence range and arrival times (``DDBStreamBatchInfo``): no job."""
    payload = record.get("payload")
    if isinstance(payload, str):
        payload = json.loads(payload)
    records = payload.get("Records", []) if isinstance(payload, dict) else []
    jobs: dict[str, None] = {}
    for item in records:
        image = item.get("dynamodb", {})
        job = image.get("NewImage", {}).get("job_id", {}).get("S")
        task_id = image.get("Keys", {}).get("task_id", {}).get("S", "")
        if job is None and task_id.count("#") >= 2:
            job = task_id.split("#")[1]
        if job:
            jobs[str(job)] = None
    return list(jobs)


def pipe_handler(queue_url: str, jobs: tuple[str, ...] = ()) -> Handler:
    """Re-dispatch the Pending scrape tasks of a dead-lettered batch's window, of the jobs the record
    names, or of ``jobs`` (``--job``) when given; a record naming none needs ``--job`` (refused)."""

    def handle(message: dict[str, Any], dry_run: bool) -> dict[str, Any]:
        record = json.loads(message["Body"])
        info = record["DDBStreamBatchInfo"]
        scope = list(jobs) or jobs_named(record)
        if not scope:
            raise ReplayRefusedError(
                "no job",
                "the dead-lettered batch names no job (a pipe's dead letter gives only its shard, "
                "sequence range and arrival times): pass --job ID for each job whose dispatch failed, "
                "so only its Pending tasks are sent (`outreach job list` shows the jobs)",
            )
        covered = pending_in_window(info, scope)
        result = redispatch(queue_url, covered, dry_run=dry_run)
        return {
            "shard": info.get("shardId"),
            "sequence_range": [info.get("startSequenceNumber"), info.get("endSequenceNumber")],
            "arrival": [
                info.get("approximateArrivalOfFirstRecord"),
                info.get("approximateArrivalOfLastRecord"),
            ],
            "jobs": scope,
            **result.as_dict(),
        }

    return handle
