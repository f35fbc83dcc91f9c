"""Queue scans that read the clock once per scan and only when asked for, so SQS stays linear here.

moto decides whether each message of a queue is visible or delayed by reading the clock once per
message (``Message.visible``, ``Message.delayed``), and every SendMessage builds all of the queue's
attributes, three such scans, only to read ``ContentBasedDeduplication``; every ReceiveMessage scans
again. Sending a job's thousands of messages is therefore quadratic in clock reads, and on the
embedded AWS each read goes through the virtual clock (a shared-memory read and a datetime
conversion): a SendMessageBatch into a queue holding a thousand messages took a quarter of a second,
and sixteen pollers receiving from it left the scraper idle between invocations for as long as a
site takes to answer. Neither is SQS's behaviour, whose calls do not slow down as a queue fills up.

The replacement answers exactly what moto answers (visible: the clock is past ``visible_at``;
delayed: the clock is before ``delayed_until``), judging every message of one scan against one
reading of the clock. And a queue's attributes are read one by one as a caller asks for them, as
moto's own ``Queue.attributes`` would have built them: SendMessage's look at
``ContentBasedDeduplication`` scans nothing, so a send into a queue of 100,000 messages costs what a
send into an empty one does (a job of 20,000 sites took 83 s to dispatch, 17 times the time per
message of a job of 2,000).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

_PATCHED = "__outreach_one_clock_read__"


def _now_millis() -> float:
    """The clock as moto's SQS models read it (the virtual clock on the embedded AWS)."""
    from moto.sqs import models

    read: Callable[[], float] = vars(models)["unix_time_millis"]
    return read()


def _visible_now(queue: Any) -> list[Any]:
    """Messages a receive may return: visible and not delayed (moto's ``Queue.messages``)."""
    now = _now_millis()
    return [m for m in queue._messages if now > m.visible_at and not now < m.delayed_until]


def _delayed_count(queue: Any) -> int:
    now = _now_millis()
    return sum(1 for m in queue._messages if now < m.delayed_until)


def _in_flight_count(queue: Any) -> int:
    now = _now_millis()
    return sum(1 for m in queue._messages if not now > m.visible_at)


def _visible_count(queue: Any) -> int:
    return len(_visible_now(queue))


class _QueueAttributes(Mapping[str, Any]):
    """moto's ``Queue.attributes``, each value read when it is asked for, not all of them up front."""

    def __init__(self, queue: Any) -> None:
        self._queue = queue
        names = list(queue.BASE_ATTRIBUTES)
        if queue.fifo_queue:
            names += queue.FIFO_ATTRIBUTES
        if queue.kms_master_key_id:
            names += queue.KMS_ATTRIBUTES
        self._names = dict.fromkeys(names)

    def __getitem__(self, name: str) -> Any:
        from moto.core.utils import camelcase_to_underscores

        if name not in self._names:
            raise KeyError(name)
        queue = self._queue
        if name == "RedrivePolicy" and queue.redrive_policy:
            return json.dumps(queue.redrive_policy)
        value = getattr(queue, camelcase_to_underscores(name))
        return str(value).lower() if isinstance(value, bool) else value

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def _attributes(queue: Any) -> _QueueAttributes:
    return _QueueAttributes(queue)


def scan_queues_with_one_clock_read() -> None:
    """Replace moto's per-message clock reads in its queue scans (idempotent)."""
    from moto.sqs.models import Queue

    if getattr(vars(Queue)["messages"].fget, _PATCHED, False):
        return
    replacements = {
        "messages": _visible_now,
        "approximate_number_of_messages": _visible_count,
        "approximate_number_of_messages_delayed": _delayed_count,
        "approximate_number_of_messages_not_visible": _in_flight_count,
        "attributes": _attributes,
    }
    for name, getter in replacements.items():
        setattr(getter, _PATCHED, True)
        setattr(Queue, name, property(getter))
