"""``outreach dlq``: look into the dead-letter queues, redrive the scrape DLQ, replay the others.

- ``show scrape``: each message with its reason attribute, receive count and its task's status.
- ``redrive scrape``: SQS's own StartMessageMoveTask back to the scrape queue, with progress.
- ``replay pipe``: the dispatch pipe's dead-letter records name a stream batch (shard, sequence range,
  arrival times), not its records and so not its job; the scrape tasks still Pending that were last
  changed in that window are re-dispatched from the table, of the jobs ``--job`` names (required for
  such a record: the window holds every job's tasks written then) or that a record carrying its
  records names.
- ``replay reconciler``: a Scheduler schedule's (or EventBridge rule's) dead-letter message is the
  event it could not deliver, with the target in the ``TARGET_ARN`` attribute
  (https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html,
  https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html); the function it names is
  invoked again with that event if it is one of this environment's reconcilers (``OwnFunctions``:
  the root's ``scrape_reconciler_function_name`` / ``email_reconciler_function_name`` outputs, or the
  ``--scrape-reconciler-function`` / ``--email-reconciler-function`` flags, in the session's region
  and the caller's account). Any other target is refused (exit 2) and its message stays.

A replay deletes a message only after what it names was done; a message whose replay failed or was
refused stays. Against prod a redrive or replay asks first (``confirm.confirm_change``).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import boto3
import click
from botocore.config import Config
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from outreach import task_store
from outreach.errors import InvalidJobInputError
from outreach.task_ids import validate_job_id
from outreach_operator.cli import queue_messages as queue
from outreach_operator.cli.confirm import confirm_change
from outreach_operator.cli.output import BadInput, Failed, PartlyDone, Session, session, table
from outreach_operator.cli.redispatch import pending_in_window, redispatch
from outreach_operator.cli.targets import TargetError
from outreach_operator.errors import ReplayRefusedError

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
    confirm_change(s, f"move {waiting:,} messages from the scrape DLQ back to the scrape queue")
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
    """Run ``handler`` on each message; delete only those it handled, hand back everything else.

    A message the handler refuses (``ReplayRefusedError``) is not acted on and stays; any refusal ends the
    command with exit 2 naming what was refused, after the other messages were replayed.
    """
    messages = queue.receive(url, limit)
    handled: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    remaining = list(messages)
    try:
        while remaining:
            message = remaining[0]
            try:
                outcome = handler(message, dry_run)
            except ReplayRefusedError as exc:  # not this replay's to act on: stays in the queue
                refused.append({"message_id": message["MessageId"], "subject": exc.subject, "why": exc.why})
                queue.release(url, [remaining.pop(0)])
                continue
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
            [m["MessageId"] for m in remaining]
            + [f["message_id"] for f in failed]
            + [r["message_id"] for r in refused],
            exc,
        ) from exc
    if dry_run:
        queue.release(url, messages)
    report = {
        "dry_run": dry_run,
        "replayed" if not dry_run else "would_replay": handled,
        "failed": failed,
        "refused": refused,
    }

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
        if refused:
            console.print(
                table(
                    "refused (left in the queue)",
                    ["message", "target", "why"],
                    [[r["message_id"], r["subject"], r["why"]] for r in refused],
                )
            )

    s.emit(report, render)
    if refused:
        subjects = ", ".join(sorted({r["subject"] for r in refused}))
        raise BadInput(
            f"{len(refused)} of {len(messages)} messages refused and left in the queue ({subjects}): "
            f"{refused[0]['why']}"
        )
    if failed:
        raise Failed(
            f"{len(failed)} of {len(messages)} messages could not be replayed; they stay in the queue"
        )


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


_LAMBDA_ARN = re.compile(
    r"^arn:(?P<partition>aws[\w-]*):lambda:(?P<region>[\w-]+):(?P<account>\d{12}):function:"
    r"(?P<name>[A-Za-z0-9_-]+)(?::(?P<qualifier>[A-Za-z0-9_$-]+))?$"
)


@dataclass(frozen=True)
class OwnFunctions:
    """The functions a reconciler replay may invoke: this environment's reconcilers (names or ARNs),
    in the session's region and the caller's account."""

    functions: tuple[str, ...]
    region: str | None
    account: Callable[[], str]

    def resolve(self, target: str) -> str:
        """The environment's function ``target`` (a name or an ARN) is: what to invoke. ``ReplayRefusedError``
        naming the target for anything else."""
        named = _LAMBDA_ARN.match(target)
        if named is None and target.startswith("arn:"):
            raise ReplayRefusedError(
                target, "not a Lambda function; only this environment's reconcilers are invoked"
            )
        if named is not None and named["qualifier"] not in (None, "$LATEST"):
            raise ReplayRefusedError(
                target, f"names version or alias {named['qualifier']}; only $LATEST is replayed"
            )
        for own in self.functions:
            if self._same(target, named, own):
                return own
        raise ReplayRefusedError(
            target,
            f"not one of this environment's reconcilers ({', '.join(self.functions)}); "
            "it is not invoked with these credentials",
        )

    def _same(self, target: str, named: re.Match[str] | None, own: str) -> bool:
        own_arn = _LAMBDA_ARN.match(own)
        if own_arn is not None:
            if named is None:
                return target == own_arn["name"]
            keys = ("partition", "region", "account", "name")
            return all(named[k] == own_arn[k] for k in keys)
        if named is None:
            return target == own
        return named["name"] == own and named["region"] == self.region and named["account"] == self.account()


def own_functions(s: Session) -> OwnFunctions:
    t = s.targets
    functions = tuple(f for f in (t.scrape_reconciler_function, t.email_reconciler_function) if f)
    if not functions:
        where = f"environment {t.env!r} has no reconciler outputs" if t.env else "no --env given"
        raise TargetError(
            f"the reconciler functions are unknown ({where}): pass --scrape-reconciler-function "
            "(and --email-reconciler-function), the only functions a replay invokes"
        )
    return OwnFunctions(functions=functions, region=s.region(), account=lambda: s.caller()["account"])


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
    return target, message["Body"].encode(), queue.attribute(message, "ERROR_CODE")


def reconciler_handler(own: OwnFunctions, function: str | None) -> Handler:
    lam = boto3.client(
        "lambda", config=Config(retries={"mode": "standard", "max_attempts": 3}, read_timeout=900)
    )

    def handle(message: dict[str, Any], dry_run: bool) -> dict[str, Any]:
        named, payload, error = _failed_run(message, function)
        target = own.resolve(named)
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
@click.option(
    "--function", help="reconciler: invoke this one of the environment's reconcilers, not the message's."
)
@click.option(
    "--job",
    "jobs",
    multiple=True,
    help="pipe: re-dispatch only this job's Pending tasks (repeatable; required if a record names no job).",
)
@click.option("--dry-run", is_flag=True, help="Show what would be replayed; change nothing.")
@click.pass_context
def replay(
    ctx: click.Context, which: str, limit: int, function: str | None, jobs: tuple[str, ...], dry_run: bool
) -> None:
    """Replay a DLQ whose source is not a queue: re-dispatch or re-invoke what each message names."""
    s = session(ctx)
    if limit < 1:
        raise BadInput("--limit must be at least 1")
    if which == "pipe":
        if function:
            raise BadInput("--function is for replay reconciler")
        for job in jobs:
            try:
                validate_job_id(job)
            except InvalidJobInputError as exc:
                raise BadInput(f"--job: {exc}") from exc
        url = s.targets.require("pipe_dlq_url", "--pipe-dlq-url")
        handler = pipe_handler(s.targets.require("scrape_queue_url", "--queue-url"), jobs)
    else:
        if jobs:
            raise BadInput("--job is for replay pipe")
        url = s.targets.require("reconciler_dlq_url", "--reconciler-dlq-url")
        own = own_functions(s)
        if function:
            try:
                function = own.resolve(function)
            except ReplayRefusedError as exc:
                raise BadInput(f"--function {exc}") from exc
        handler = reconciler_handler(own, function)
    if not dry_run:
        scope = f" (jobs {', '.join(jobs)})" if jobs else ""
        confirm_change(s, f"replay up to {limit} messages of the {which} DLQ{scope}")
    replay_queue(s, url, handler, limit=limit, dry_run=dry_run, what=f"dlq {which}")
