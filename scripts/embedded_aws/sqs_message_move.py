"""SQS dead-letter queue redrive for the embedded AWS: StartMessageMoveTask and its two companions.

moto has no StartMessageMoveTask, ListMessageMoveTasks or CancelMessageMoveTask. These replacements
follow the API reference (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/
API_StartMessageMoveTask.html and the SQS developer guide's "configure a dead-letter queue redrive"):

- the source must be a queue that is some queue's dead-letter queue; only one active task per source;
- without ``DestinationArn`` messages go back to the queue whose redrive policy names the source;
- a task runs asynchronously, oldest message first, at most ``MaxNumberOfMessagesPerSecond`` (≤ 500)
  per second, and moves the messages that were in the source when it started;
- a moved message is a new message (new id, receive count 0) with the same body and attributes, and
  its ``MessageGroupId``: a FIFO message keeps its group; that a redriven message of a standard queue
  keeps its group (its tenant in SQS fair queues, sqs-fair-queues.html) is unconfirmed, the redrive
  page speaks only of new ids and enqueue times;
- ListMessageMoveTasks reports RUNNING, COMPLETED, CANCELLING, CANCELLED or FAILED with the
  approximate numbers moved and to move; CancelMessageMoveTask stops a running task.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

_PATCHED = "__outreach_message_move__"
_MAX_RATE = 500
_LOCK = threading.Lock()


@dataclass
class MoveTask:
    handle: str
    source_arn: str
    destination_arn: str
    rate: int | None
    to_move: int
    started_ms: int
    status: str = "RUNNING"
    moved: int = 0
    failure_reason: str | None = None
    stop: threading.Event = field(default_factory=threading.Event)

    def as_result(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "Status": self.status,
            "SourceArn": self.source_arn,
            "DestinationArn": self.destination_arn,
            "ApproximateNumberOfMessagesMoved": self.moved,
            "ApproximateNumberOfMessagesToMove": self.to_move,
            "StartedTimestamp": self.started_ms,
        }
        if self.status == "RUNNING":
            result["TaskHandle"] = self.handle
        if self.rate is not None:
            result["MaxNumberOfMessagesPerSecond"] = self.rate
        if self.failure_reason:
            result["FailureReason"] = self.failure_reason
        return result


# Tasks per backend (account and region), newest last.
_TASKS: dict[int, list[MoveTask]] = {}


def _queue_by_arn(backend: Any, arn: str) -> Any:
    from moto.sqs.exceptions import QueueDoesNotExist

    for queue in backend.queues.values():
        if queue.queue_arn == arn:
            return queue
    raise QueueDoesNotExist()


def _move(backend: Any, task: MoveTask) -> None:
    source = _queue_by_arn(backend, task.source_arn)
    destination = _queue_by_arn(backend, task.destination_arn)
    interval = 1.0 / task.rate if task.rate else 0.0
    try:
        while task.moved < task.to_move and not task.stop.is_set():
            with source._messages_lock:
                candidates = [m for m in source._messages if m.visible and not m.delayed]
                message = candidates[0] if candidates else None
                if message is not None:
                    source._messages.remove(message)
            if message is None:
                break
            backend.send_message(
                destination.name,
                message.body,
                message_attributes=dict(message.message_attributes),
                group_id=message.group_id,
            )
            task.moved += 1
            if interval:
                task.stop.wait(interval)
        task.status = "CANCELLED" if task.stop.is_set() else "COMPLETED"
    except Exception as exc:  # the task reports FAILED with the reason, as SQS does
        task.status = "FAILED"
        task.failure_reason = f"{type(exc).__name__}: {exc}"


def start_message_move_task(
    backend: Any, source_arn: str, destination_arn: str | None, rate: int | None
) -> str:
    from moto.sqs.exceptions import InvalidParameterValue

    source = _queue_by_arn(backend, source_arn)
    if rate is not None and not 1 <= rate <= _MAX_RATE:
        raise InvalidParameterValue(f"MaxNumberOfMessagesPerSecond must be between 1 and {_MAX_RATE}")
    origins = [q for q in backend.queues.values() if q.dead_letter_queue is source]
    if not origins:
        raise InvalidParameterValue("Source queue must be configured as a Dead Letter Queue.")
    if destination_arn is None:
        destination_arn = origins[0].queue_arn
    _queue_by_arn(backend, destination_arn)
    with _LOCK:
        tasks = _TASKS.setdefault(id(backend), [])
        if any(t.source_arn == source_arn and t.status == "RUNNING" for t in tasks):
            raise InvalidParameterValue(
                "There is already a task running. Only one active task is allowed for a source queue "
                "arn at a given time."
            )
        task = MoveTask(
            handle=str(uuid.uuid4()),
            source_arn=source_arn,
            destination_arn=destination_arn,
            rate=rate,
            to_move=len(source.messages),
            started_ms=int(time.time() * 1000),
        )
        tasks.append(task)
    threading.Thread(
        target=_move, args=(backend, task), name=f"sqs-move-{task.handle[:8]}", daemon=True
    ).start()
    return task.handle


def list_message_move_tasks(backend: Any, source_arn: str, max_results: int) -> list[dict[str, Any]]:
    _queue_by_arn(backend, source_arn)
    tasks = [t for t in _TASKS.get(id(backend), []) if t.source_arn == source_arn]
    return [t.as_result() for t in reversed(tasks)][: max(1, min(max_results, 10))]


def cancel_message_move_task(backend: Any, handle: str) -> int:
    from moto.sqs.exceptions import InvalidParameterValue

    for task in _TASKS.get(id(backend), []):
        if task.handle == handle and task.status == "RUNNING":
            task.stop.set()
            task.status = "CANCELLING"
            return task.moved
    raise InvalidParameterValue("Task does not exist or is not running.")


def _responses() -> dict[str, Any]:
    from moto.core.responses import ActionResult

    def start(self: Any) -> Any:
        rate = self._get_param("MaxNumberOfMessagesPerSecond")
        handle = start_message_move_task(
            self.sqs_backend,
            self._get_param("SourceArn"),
            self._get_param("DestinationArn"),
            None if rate is None else int(rate),
        )
        return ActionResult({"TaskHandle": handle})

    def listed(self: Any) -> Any:
        results = list_message_move_tasks(
            self.sqs_backend, self._get_param("SourceArn"), int(self._get_param("MaxResults") or 1)
        )
        return ActionResult({"Results": results})

    def cancel(self: Any) -> Any:
        moved = cancel_message_move_task(self.sqs_backend, self._get_param("TaskHandle"))
        return ActionResult({"ApproximateNumberOfMessagesMoved": moved})

    return {
        "start_message_move_task": start,
        "list_message_move_tasks": listed,
        "cancel_message_move_task": cancel,
    }


def support_message_move_tasks() -> None:
    """Install the three actions on moto's SQS responses (in-process and server mode). Idempotent."""
    from moto.sqs.responses import SQSResponse

    if getattr(SQSResponse, _PATCHED, False):
        return
    for name, method in _responses().items():
        setattr(SQSResponse, name, method)
    setattr(SQSResponse, _PATCHED, True)
