"""``outreach dlq``: look into the dead-letter queues, redrive the scrape DLQ, replay the others.

- ``show scrape``: each message with its reason attribute, receive count and its task's status.
- ``redrive scrape``: SQS's own StartMessageMoveTask back to the scrape queue, with progress.
- ``replay pipe``: the dispatch pipe's dead-letter records name a stream batch (shard, sequence range,
  arrival times), not its records; the scrape tasks still Pending that were last changed in that
  window are re-dispatched from the table.
- ``replay reconciler``: a Scheduler schedule's (or EventBridge rule's) dead-letter message is the
  event it could not deliver, with the target in the ``TARGET_ARN`` attribute
  (https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html,
  https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html); the function it names is
  invoked again with that event.

A replay deletes a message only after what it names was done; a message whose replay failed stays.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import boto3
import click
from botocore.config import Config
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from outreach import task_store
from outreach_tools.cli import queue_messages as queue
from outreach_tools.cli.output import BadInput, Failed, PartlyDone, Session, session, table
from outreach_tools.cli.redispatch import pending_in_window, redispatch

_MOVE_DONE = {"COMPLETED", "FAILED", "CANCELLED"}


@click.group()
def dlq() -> None:
    """Dead-letter queues."""


def _task_id(body: str) -> str | None:
    try:
        payload = json.loads(body)
    except json.JSONDecodeError:  # an unreadable body is shown as it is
        return None
    value = payload.get("task_id") if isinstance(payload, dict) else None
    return value if isinstance(value, str) else None


def describe_scrape_message(message: dict[str, Any]) -> dict[str, Any]:
    task_id = _task_id(message.get("Body", ""))
    task = task_store.get_task(task_id) if task_id else None
    receives = queue.attribute(message, "receive_count") or message.get("Attributes", {}).get(
        "ApproximateReceiveCount"
    )
    return {
        "message_id": message["MessageId"],
        "reason": queue.attribute(message, "reason") or "receives exhausted (maxReceiveCount)",
        "receive_count": int(receives) if receives else None,
        "task_id": task_id,
        "task_status": task.status.value if task else None,
        "body": message.get("Body", "")[:200],
    }


@dlq.command("show")
@click.argument("which", type=click.Choice(["scrape"]))
@click.option("--limit", type=int, default=100, show_default=True)
@click.pass_context
def show(ctx: click.Context, which: str, limit: int) -> None:
    """Messages of the scrape DLQ, left in place."""
    s = session(ctx)
    url = s.targets.require("scrape_dlq_url", "--dlq-url")
    messages = queue.receive(url, limit, hold_seconds=30)
    try:
        rows = [describe_scrape_message(m) for m in messages]
    finally:
        queue.release(url, messages)
    columns = ["message_id", "reason", "receive_count", "task_id", "task_status"]
    s.emit(
        rows,
        lambda c: c.print(
            table(f"{len(rows)} messages in the scrape DLQ", columns, [[r[k] for k in columns] for r in rows])
        ),
    )


@dlq.command("redrive")
@click.argument("which", type=click.Choice(["scrape"]))
@click.option("--rate", type=click.IntRange(1, 500), help="Messages per second (default: SQS chooses).")
@click.option("--timeout", type=float, default=600.0, show_default=True, help="Seconds to follow the move.")
@click.option("--dry-run", is_flag=True, help="Show what would be moved; move nothing.")
@click.pass_context
def redrive(ctx: click.Context, which: str, rate: int | None, timeout: float, dry_run: bool) -> None:
    """Move the scrape DLQ's messages back to the scrape queue (StartMessageMoveTask)."""
    s = session(ctx)
    dlq_url = s.targets.require("scrape_dlq_url", "--dlq-url")
    queue_url = s.targets.require("scrape_queue_url", "--queue-url")
    source, destination = queue.queue_arn(dlq_url), queue.queue_arn(queue_url)
    waiting = queue.depth(dlq_url)["visible"]
    if dry_run:
        report = {"dry_run": True, "source": source, "destination": destination, "would_move": waiting}
        s.emit(
            report,
            lambda c: c.print(f"dry run: would move {waiting:,} messages from {source} to {destination}"),
        )
        return
    sqs = boto3.client("sqs")
    request: dict[str, Any] = {"SourceArn": source, "DestinationArn": destination}
    if rate is not None:
        request["MaxNumberOfMessagesPerSecond"] = rate
    handle = sqs.start_message_move_task(**request)["TaskHandle"]
    result = _follow_move(s, sqs, source, handle, timeout)
    report = {
        "dry_run": False,
        "task_handle": handle,
        **{k: v for k, v in result.items() if k != "TaskHandle"},
    }
    s.emit(
        report,
        lambda c: c.print(
            f"redrive {result['Status']}: "
            f"{result.get('ApproximateNumberOfMessagesMoved', 0):,} messages moved"
        ),
    )
    if result["Status"] != "COMPLETED":
        raise Failed(f"redrive ended {result['Status']}: {result.get('FailureReason', 'no reason given')}")


def _follow_move(s: Session, sqs: Any, source: str, handle: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    with Progress(
        TextColumn("redrive"), BarColumn(), MofNCompleteColumn(), console=s.err, disable=s.as_json
    ) as bar:
        step = bar.add_task("redrive", total=None)
        while True:
            results = sqs.list_message_move_tasks(SourceArn=source, MaxResults=10)["Results"]
            current = next(
                (r for r in results if r.get("TaskHandle") == handle), results[0] if results else {}
            )
            bar.update(
                step,
                total=current.get("ApproximateNumberOfMessagesToMove"),
                completed=current.get("ApproximateNumberOfMessagesMoved", 0),
            )
            if current.get("Status") in _MOVE_DONE:
                return dict(current)
            if time.monotonic() > deadline:
                raise Failed(
                    f"redrive still {current.get('Status')} after {timeout:.0f}s (task {handle} goes on)"
                )
            time.sleep(1.0)


# ---- replay -----------------------------------------------------------------------------------

Handler = Callable[[dict[str, Any], bool], dict[str, Any]]


def replay_queue(s: Session, url: str, handler: Handler, *, limit: int, dry_run: bool, what: str) -> None:
    """Run ``handler`` on each message; delete only those it handled, hand back everything else."""
    messages = queue.receive(url, limit)
    handled: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    remaining = list(messages)
    try:
        while remaining:
            message = remaining[0]
            try:
                outcome = handler(message, dry_run)
            except (RuntimeError, ValueError, KeyError) as exc:  # this message stays in the queue
                failed.append({"message_id": message["MessageId"], "error": str(exc)})
                queue.release(url, [remaining.pop(0)])
                continue
            if not dry_run:
                queue.delete(url, message)
            remaining.pop(0)
            handled.append({"message_id": message["MessageId"], **outcome})
    except Exception as exc:
        queue.release(url, remaining)
        raise PartlyDone(
            f"replay {what}",
            [h["message_id"] for h in handled],
            [m["MessageId"] for m in remaining] + [f["message_id"] for f in failed],
            exc,
        ) from exc
    if dry_run:
        queue.release(url, messages)
    report = {"dry_run": dry_run, "replayed" if not dry_run else "would_replay": handled, "failed": failed}

    def render(console: Console) -> None:
        verb = "would replay" if dry_run else "replayed (deleted)"
        console.print(
            table(
                f"{verb} {len(handled)} of {len(messages)} messages",
                ["message", "result"],
                [
                    [
                        h["message_id"],
                        json.dumps({k: v for k, v in h.items() if k != "message_id"}, default=str)[:300],
                    ]
                    for h in handled
                ],
            )
        )
        if failed:
            console.print(
                table(
                    "left in the queue", ["message", "error"], [[f["message_id"], f["error"]] for f in failed]
                )
            )

    s.emit(report, render)
    if failed:
        raise Failed(
            f"{len(failed)} of {len(messages)} messages could not be replayed; they stay in the queue"
        )


def pipe_handler(queue_url: str) -> Handler:
    def handle(message: dict[str, Any], dry_run: bool) -> dict[str, Any]:
        record = json.loads(message["Body"])
        info = record["DDBStreamBatchInfo"]
        covered = pending_in_window(info)
        result = redispatch(queue_url, covered, dry_run=dry_run)
        return {
            "shard": info.get("shardId"),
            "sequence_range": [info.get("startSequenceNumber"), info.get("endSequenceNumber")],
            "arrival": [
                info.get("approximateArrivalOfFirstRecord"),
                info.get("approximateArrivalOfLastRecord"),
            ],
            **result.as_dict(),
        }

    return handle


def _failed_run(message: dict[str, Any], override: str | None) -> tuple[str, bytes, str | None]:
    """The function to run again, its event and why it failed, from one reconciler dead letter.

    The DLQ gets two shapes: a Scheduler or EventBridge dead letter (the event as the body, the target in the
    ``TARGET_ARN`` attribute) and Lambda's on-failure record of a run whose retries ran out (the
    function in ``requestContext.functionArn``, the event in ``requestPayload``).
    https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html
    """
    try:
        record = json.loads(message["Body"])
    except ValueError:  # a body that is not JSON is not an on-failure record: read it as a dead letter
        record = None
    if (
        isinstance(record, dict)
        and isinstance(record.get("requestContext"), dict)
        and "requestPayload" in record
    ):
        context = record["requestContext"]
        function_arn = str(context.get("functionArn", ""))
        named = override or function_arn.removesuffix(":$LATEST")
        if not named:
            raise ValueError("on-failure record names no function (pass --function)")
        return named, json.dumps(record["requestPayload"]).encode(), context.get("condition")
    target = override or queue.attribute(message, "TARGET_ARN")
    if not target:
        raise ValueError("message has no TARGET_ARN attribute (pass --function)")
    if ":lambda:" not in target and not override:
        raise ValueError(f"target {target} is not a Lambda function")
    return target, message["Body"].encode(), queue.attribute(message, "ERROR_CODE")


def reconciler_handler(function: str | None) -> Handler:
    lam = boto3.client(
        "lambda", config=Config(retries={"mode": "standard", "max_attempts": 3}, read_timeout=900)
    )

    def handle(message: dict[str, Any], dry_run: bool) -> dict[str, Any]:
        target, payload, error = _failed_run(message, function)
        outcome: dict[str, Any] = {
            "function": target,
            "rule": queue.attribute(message, "RULE_ARN"),
            "schedule": queue.attribute(message, "X-Amz-Scheduler-Schedule-Arn"),
            "error": error,
        }
        if dry_run:
            return outcome
        response = lam.invoke(FunctionName=target, InvocationType="RequestResponse", Payload=payload)
        if response.get("FunctionError"):
            raise RuntimeError(f"{target} failed again: {response['Payload'].read()[:300]!r}")
        return {**outcome, "status_code": response.get("StatusCode")}

    return handle


@dlq.command("replay")
@click.argument("which", type=click.Choice(["pipe", "reconciler"]))
@click.option("--limit", type=int, default=100, show_default=True, help="Messages to replay in this run.")
@click.option("--function", help="reconciler: invoke this function instead of the message's TARGET_ARN.")
@click.option("--dry-run", is_flag=True, help="Show what would be replayed; change nothing.")
@click.pass_context
def replay(ctx: click.Context, which: str, limit: int, function: str | None, dry_run: bool) -> None:
    """Replay a DLQ whose source is not a queue: re-dispatch or re-invoke what each message names."""
    s = session(ctx)
    if which == "pipe":
        url = s.targets.require("pipe_dlq_url", "--pipe-dlq-url")
        handler = pipe_handler(s.targets.require("scrape_queue_url", "--queue-url"))
    else:
        url = s.targets.require("reconciler_dlq_url", "--reconciler-dlq-url")
        handler = reconciler_handler(function)
    if limit < 1:
        raise BadInput("--limit must be at least 1")
    replay_queue(s, url, handler, limit=limit, dry_run=dry_run, what=f"dlq {which}")
