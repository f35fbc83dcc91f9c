"""SQS fair queues on the embedded AWS: a standard queue returns quiet tenants' messages first.

moto keeps a standard queue's ``MessageGroupId`` (and returns it) but orders nothing by it: every
receive takes the oldest visible messages, so a job that queued thousands of messages first holds
every consumer until it is done. SQS fair queues, which every standard queue is, do not ("How Amazon
SQS fair queues work",
https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-fair-queues-detailed.html;
overview: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-fair-queues.html):

- a tenant is a ``MessageGroupId``; a message without one is a tenant of its own;
- a tenant is noisy when its in-flight messages are more than 10 % of the queue's in-flight messages
  and at least 30 of them, or when its share of the consumers' recent processing time is more than
  10 %. AWS calls both thresholds approximate; here they are applied exactly;
- while some tenant is noisy, a receive returns the quiet tenants' messages first; with several noisy
  tenants, those of the noisy tenant with the fewest in-flight messages first; when no quiet tenant's
  message waits, noisy tenants' messages are returned as usual (never dropped, never throttled);
- a tenant stops being noisy when its backlog is drained or when it has sent no message for 5
  consecutive minutes.

Unconfirmed, chosen here and said so: "recent" processing time is the last ``PROCESSING_WINDOW``
seconds; a message's processing time runs from its receive to its delete, or to the moment it became
visible again (SQS sees no other end); a tenant that still meets a threshold is noisy again at once,
even after a stop condition (the page's "prioritization continues until the noisy neighbor's shares
drop"); a tenant alone in the queue may be noisy, which orders nothing as no quiet message waits.
FIFO queues are left to moto: their message groups keep their own ordering rules.

Every decision is made on one reading of the clock (the virtual clock on the embedded AWS), from the
queue's own messages and what this module recorded at sends, receives and deletes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from embedded_aws.sqs_queue_scans import _now_millis

_PATCHED = "__outreach_fair_queues__"
CONCURRENCY_SHARE = 0.10
CONCURRENCY_MINIMUM = 30
PROCESSING_SHARE = 0.10
PROCESSING_WINDOW = 60.0
QUIET_AFTER_NO_SENDS = 300.0


def tenant_of(message: Any) -> str:
    """The message's tenant: its group, or the message itself when it has none."""
    group = message.group_id
    return f"group:{group}" if group is not None else f"message:{message.id}"


@dataclass
class _Receipt:
    """One receive of one message: whose, when, and the message (to see it visible again)."""

    tenant: str
    began_ms: float
    message: Any


@dataclass
class FairState:
    """What one standard queue remembers to tell noisy tenants from quiet ones."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    open: dict[str, _Receipt] = field(default_factory=dict)  # by receipt handle
    open_handle: dict[str, str] = field(default_factory=dict)  # message id -> its open receipt handle
    done: list[tuple[str, float, float]] = field(default_factory=list)  # (tenant, began, ended) ms
    last_sent_ms: dict[str, float] = field(default_factory=dict)
    noisy: set[str] = field(default_factory=set)

    def sent(self, tenant: str, now_ms: float) -> None:
        with self.lock:
            self.last_sent_ms[tenant] = now_ms

    def received(self, messages: list[Any], now_ms: float) -> None:
        with self.lock:
            for message in messages:
                earlier = self.open.pop(self.open_handle.get(message.id, ""), None)
                if earlier is not None:  # received again: the earlier processing ended by now
                    self.done.append((earlier.tenant, earlier.began_ms, now_ms))
                self.open[message.receipt_handle] = _Receipt(tenant_of(message), now_ms, message)
                self.open_handle[message.id] = message.receipt_handle

    def deleted(self, receipt_handle: str, now_ms: float) -> None:
        with self.lock:
            receipt = self.open.pop(receipt_handle, None)
            if receipt is not None:
                self.open_handle.pop(receipt.message.id, None)
                self.done.append((receipt.tenant, receipt.began_ms, now_ms))

    def _close_visible_again(self, now_ms: float) -> None:
        """A message visible again ended its processing when it became visible."""
        for handle, receipt in list(self.open.items()):
            if now_ms > receipt.message.visible_at:
                del self.open[handle]
                self.open_handle.pop(receipt.message.id, None)
                ended = max(receipt.message.visible_at, receipt.began_ms)
                self.done.append((receipt.tenant, receipt.began_ms, ended))

    def noisy_tenants(self, queue: Any, now_ms: float) -> tuple[set[str], dict[str, int]]:
        """The noisy tenants now, and every tenant's in-flight count."""
        with self.lock:
            self._close_visible_again(now_ms)
            window_start = now_ms - PROCESSING_WINDOW * 1000
            self.done = [span for span in self.done if span[2] > window_start]
            in_flight: dict[str, int] = {}
            processing: dict[str, float] = {}
            for receipt in self.open.values():
                in_flight[receipt.tenant] = in_flight.get(receipt.tenant, 0) + 1
                began = max(receipt.began_ms, window_start)
                processing[receipt.tenant] = processing.get(receipt.tenant, 0.0) + now_ms - began
            for tenant, began, ended in self.done:
                processing[tenant] = processing.get(tenant, 0.0) + ended - max(began, window_start)
            all_in_flight = sum(in_flight.values())
            all_processing = sum(processing.values())
            detected = {
                tenant
                for tenant, count in in_flight.items()
                if count > CONCURRENCY_SHARE * all_in_flight and count >= CONCURRENCY_MINIMUM
            } | {
                tenant
                for tenant, spent in processing.items()
                if all_processing > 0 and spent > PROCESSING_SHARE * all_processing
            }
            quiet_after = QUIET_AFTER_NO_SENDS * 1000
            lingering = {
                tenant
                for tenant in self.noisy - detected
                if now_ms - self.last_sent_ms.get(tenant, now_ms) < quiet_after
            }
            if lingering:  # still noisy while some of its messages wait (its backlog is not drained)
                waiting = {tenant_of(m) for m in list(queue._messages) if m.receipt_handle not in self.open}
                lingering &= waiting
            self.noisy = lingering | detected
            return set(self.noisy), in_flight


def state_of(queue: Any) -> FairState:
    """The queue's fair-queue state, made on first use."""
    state: FairState | None = queue.__dict__.get("_outreach_fair_state")
    if state is None:
        state = queue.__dict__.setdefault("_outreach_fair_state", FairState())
    return state


def fair_order(queue: Any, visible: list[Any]) -> list[Any]:
    """``visible`` (oldest first), quiet tenants first, then noisy ones by fewest in flight."""
    if queue.fifo_queue or not visible:
        return visible
    noisy, in_flight = state_of(queue).noisy_tenants(queue, _now_millis())
    if not noisy:
        return visible
    quiet = [m for m in visible if tenant_of(m) not in noisy]
    loud = [m for m in visible if tenant_of(m) in noisy]
    loud.sort(key=lambda m: in_flight.get(tenant_of(m), 0))  # stable: oldest first within a tenant
    return quiet + loud


def share_standard_queues_fairly() -> None:
    """Make moto's standard queues return messages as SQS fair queues do (idempotent).

    The order applies to whatever scan of visible messages is installed (``sqs_queue_scans``'s, which
    replaces its own whenever it finds another getter there; this one then wraps it again).
    """
    from moto.sqs.models import Queue, SQSBackend

    visible_now: Callable[[Any], list[Any]] = vars(Queue)["messages"].fget
    if not getattr(visible_now, _PATCHED, False):

        def messages(queue: Any) -> list[Any]:
            return fair_order(queue, visible_now(queue))

        setattr(messages, _PATCHED, True)
        Queue.messages = property(messages)  # type: ignore[assignment,method-assign]
    if getattr(Queue, _PATCHED, False):
        return
    add_message = Queue.add_message
    delete_message = Queue.delete_message
    receive_message = SQSBackend.receive_message

    def add(queue: Any, message: Any) -> None:
        add_message(queue, message)
        if not queue.fifo_queue:
            state_of(queue).sent(tenant_of(message), _now_millis())

    def delete(queue: Any, receipt_handle: str) -> None:
        delete_message(queue, receipt_handle)
        if not queue.fifo_queue:
            state_of(queue).deleted(receipt_handle, _now_millis())

    def receive(backend: Any, queue_name: str, *args: Any, **kwargs: Any) -> list[Any]:
        result: list[Any] = receive_message(backend, queue_name, *args, **kwargs)
        queue = backend.get_queue(queue_name)
        if result and not queue.fifo_queue:
            ids = {m.id for m in result}
            state = state_of(queue)
            now_ms = _now_millis()
            state.received([m for m in list(queue._messages) if m.id in ids], now_ms)
            state.noisy_tenants(queue, now_ms)  # detection sees the receive at once, as SQS's does
        return result

    Queue.add_message = add  # type: ignore[method-assign,assignment]
    Queue.delete_message = delete  # type: ignore[method-assign,assignment]
    SQSBackend.receive_message = receive  # type: ignore[method-assign,assignment]
    setattr(Queue, _PATCHED, True)
