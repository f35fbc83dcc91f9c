"""``dlq redrive scrape|ses-events``: SQS's StartMessageMoveTask from a DLQ back to its queue, followed."""

from __future__ import annotations

import time
from typing import Any

import boto3
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from outreach_operator.cli import queue_messages as queue
from outreach_operator.cli.confirm import confirm_change
from outreach_operator.cli.output import Failed, Session

_MOVE_DONE = {"COMPLETED", "FAILED", "CANCELLED"}


# Each DLQ that is redriven to the queue it came from: (DLQ target, its flag, queue target, its flag).
REDRIVEN = {
    "scrape": ("scrape_dlq_url", "--dlq-url", "scrape_queue_url", "--queue-url"),
    "ses-events": (
        "ses_events_dlq_url",
        "--ses-events-dlq-url",
        "ses_events_queue_url",
        "--ses-events-queue-url",
    ),
}


def redrive_dlq(s: Session, which: str, rate: int | None, timeout: float, dry_run: bool) -> None:
    """Start the move of ``which`` DLQ (at ``rate`` per second if given) back to its queue and follow
    it for up to ``timeout`` seconds."""
    dlq_name, dlq_flag, queue_name, queue_flag = REDRIVEN[which]
    dlq_url = s.targets.require(dlq_name, dlq_flag)
    queue_url = s.targets.require(queue_name, queue_flag)
    source, destination = queue.queue_arn(dlq_url), queue.queue_arn(queue_url)
    waiting = queue.depth(dlq_url)["visible"]
    if dry_run:
        report = {"dry_run": True, "source": source, "destination": destination, "would_move": waiting}
        s.emit(
            report,
            lambda c: c.print(f"dry run: would move {waiting:,} messages from {source} to {destination}"),
        )
        return
    confirm_change(s, f"move {waiting:,} messages from the {which} DLQ back to the {which} queue")
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
