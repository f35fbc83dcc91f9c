"""A queue's in-flight message groups read from a snapshot, so a receive never races a delete.

moto's ``Queue.pending_message_groups`` builds its answer by iterating the queue's set of in-flight
messages, and ReceiveMessage reads it on every call, FIFO queue or not. The threaded server answers
other requests meanwhile: a DeleteMessage (or another receive) that removes or adds an in-flight
message during the iteration changes the set's size, the receive fails with ``RuntimeError: Set
changed size during iteration`` and the server answers 500. The pollers of a busy campaign receive
and delete on the same queues all the time, so their SDKs retry these 500s, and a function's calls
meet them too.

ReceiveMessage documents no such failure: its errors are about the request, the queue, KMS or
throttling (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html,
Errors). Here the groups are read from a copy of the set taken in one step (``set.copy`` runs in C
under the interpreter lock, so no other thread changes the set while it is copied): the answer is the
groups in flight just before or just after a concurrent write, never an error.
"""

from __future__ import annotations

from typing import Any

_PATCHED = "__outreach_pending_groups_snapshot__"


def _pending_message_groups(queue: Any) -> set[str]:
    """The group ids of the queue's in-flight messages, from one snapshot of the set."""
    in_flight: set[Any] = set.copy(queue._pending_messages)
    return {message.group_id for message in in_flight if message.group_id is not None}


def read_pending_groups_from_a_snapshot() -> None:
    """Make moto's ``Queue.pending_message_groups`` read a snapshot of the in-flight set (idempotent)."""
    from moto.sqs.models import Queue

    if getattr(Queue, _PATCHED, False):
        return
    Queue.pending_message_groups = property(_pending_message_groups)  # type: ignore[assignment,method-assign]
    setattr(Queue, _PATCHED, True)
