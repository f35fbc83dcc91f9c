"""``outreach failures``: the stream mapping's S3 failure records (lambda dispatch mode), and replay.

When the dispatcher's stream mapping gives up on a batch it writes an invocation record to the
failure bucket, with the batch's shard and sequence range and, for an S3 destination, the records
themselves (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html). Stream
records expire after 24 hours, so replay reads the table: each task the record covers that is still a
Pending scrape task is sent to the scrape queue. A record whose tasks were all handled is then tagged
``outreach-replayed`` (or deleted with ``--delete``); a record with any task not re-driven is left as
it was.
"""

from __future__ import annotations

import json
from typing import Any

import click
from rich.console import Console

from outreach import clients, clock
from outreach_operator.cli.confirm import confirm_change
from outreach_operator.cli.operator import operator_name
from outreach_operator.cli.output import PartlyDone, session, table
from outreach_operator.cli.redispatch import pending_in_window, redispatch

PREFIX = "aws/lambda/"
REPLAYED_TAG = "outreach-replayed"


@click.group()
def failures() -> None:
    """Stream batches the dispatcher's mapping gave up on (S3 failure records)."""


def _keys(bucket: str) -> list[str]:
    paginator = clients.s3().get_paginator("list_objects_v2")
    return sorted(
        obj["Key"]
        for page in paginator.paginate(Bucket=bucket, Prefix=PREFIX)
        for obj in page.get("Contents", [])
    )


def _replayed(bucket: str, key: str) -> str | None:
    tags = clients.s3().get_object_tagging(Bucket=bucket, Key=key)["TagSet"]
    return next((t["Value"] for t in tags if t["Key"] == REPLAYED_TAG), None)


def covered_tasks(record: dict[str, Any]) -> list[str]:
    """The task ids a failure record covers: from its records, or (without them) the arrival window."""
    payload = record.get("payload")
    if payload:
        records = (
            json.loads(payload).get("Records", []) if isinstance(payload, str) else payload.get("Records", [])
        )
        return [str(r["dynamodb"]["Keys"]["task_id"]["S"]) for r in records]
    return pending_in_window(record["DDBStreamBatchInfo"])


def read_record(bucket: str, key: str) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(clients.s3().get_object(Bucket=bucket, Key=key)["Body"].read())
    info = record.get("DDBStreamBatchInfo", {})
    context = record.get("requestContext", {})
    return {
        "key": key,
        "shard": info.get("shardId"),
        "sequence_range": [info.get("startSequenceNumber"), info.get("endSequenceNumber")],
        "batch_size": info.get("batchSize"),
        "condition": context.get("condition"),
        "tasks": covered_tasks(record),
        "replayed": _replayed(bucket, key),
    }


def _render(console: Console, title: str, rows: list[dict[str, Any]]) -> None:
    console.print(
        table(
            title,
            ["key", "shard", "sequences", "condition", "tasks", "replayed"],
            [
                [
                    r["key"],
                    r["shard"],
                    " .. ".join(str(x) for x in r["sequence_range"]),
                    r["condition"],
                    "\n".join(r["tasks"]),
                    r["replayed"] or "",
                ]
                for r in rows
            ],
        )
    )


@failures.command("list")
@click.option("--all", "show_all", is_flag=True, help="Also records already replayed.")
@click.pass_context
def list_failures(ctx: click.Context, show_all: bool) -> None:
    """Failure records with their shard, sequence range and the tasks they cover."""
    s = session(ctx)
    bucket = s.targets.require("failure_bucket", "--failure-bucket")
    rows = [read_record(bucket, key) for key in _keys(bucket)]
    rows = [r for r in rows if show_all or not r["replayed"]]
    s.emit(rows, lambda c: _render(c, f"{len(rows)} failure records in {bucket}", rows))


@failures.command("replay")
@click.option("--delete", is_flag=True, help="Delete replayed records instead of tagging them.")
@click.option("--operator", help="Who (recorded in the tag; default: OUTREACH_OPERATOR or the AWS identity).")
@click.option("--dry-run", is_flag=True, help="Show what would be re-driven; change nothing.")
@click.pass_context
def replay(ctx: click.Context, delete: bool, operator: str | None, dry_run: bool) -> None:
    """Re-drive the still-Pending tasks of every failure record not yet replayed."""
    s = session(ctx)
    bucket = s.targets.require("failure_bucket", "--failure-bucket")
    queue_url = s.targets.require("scrape_queue_url", "--queue-url")
    pending = [r for r in (read_record(bucket, key) for key in _keys(bucket)) if not r["replayed"]]
    if not dry_run and pending:
        confirm_change(s, f"re-drive the Pending tasks of {len(pending)} failure records")
    who = None if dry_run else operator_name(operator)
    done: list[dict[str, Any]] = []
    for index, row in enumerate(pending):
        try:
            result = redispatch(queue_url, row["tasks"], dry_run=dry_run)
            if not dry_run:
                _mark(bucket, row["key"], delete=delete, who=str(who))
        except Exception as exc:
            raise PartlyDone(
                "failures replay", [r["key"] for r in done], [r["key"] for r in pending[index:]], exc
            ) from exc
        done.append(
            {**row, **result.as_dict(), "marked": None if dry_run else ("deleted" if delete else "tagged")}
        )
    report = {"dry_run": dry_run, "records": done}

    def render(console: Console) -> None:
        verb = "would re-drive" if dry_run else "re-drove"
        rows = [[r["key"], ", ".join(r["to_send"]) or "(none pending)", r["marked"] or ""] for r in done]
        console.print(
            table(
                f"{verb} {sum(len(r['to_send']) for r in done)} tasks from {len(done)} records",
                ["record", "tasks sent", "record"],
                rows,
            )
        )

    s.emit(report, render)


def _mark(bucket: str, key: str, *, delete: bool, who: str) -> None:
    if delete:
        clients.s3().delete_object(Bucket=bucket, Key=key)
        return
    value = f"{clock.iso()} by {who}"
    allowed = "".join(ch if ch.isalnum() or ch in " +-=._:/@" else "_" for ch in value)[:256]
    clients.s3().put_object_tagging(
        Bucket=bucket, Key=key, Tagging={"TagSet": [{"Key": REPLAYED_TAG, "Value": allowed}]}
    )
