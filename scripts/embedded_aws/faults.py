"""Fault injection into the in-process emulator, and side effects counted at their source.

The emulator is moto running in this process, and the function workers reach it over HTTP, so a
replaced backend method affects every caller: handlers, pollers and the driver alike. ``inject()``
wraps a few backend methods for the duration of a block:

- ``SQSBackend.send_message`` / ``send_message_batch``: every message that reaches a queue is counted
  (``sqs_sends``); rules can answer a SendMessageBatch with every entry failed (an outage that SQS
  reports per entry, ``SenderFault`` false), fail only the entries carrying a marker (a partial
  failure) or hold it past the caller's timeout (a poison record);
- ``S3Backend.put_object``: every stored object is counted (``s3_puts``); rules can refuse a write;
- ``DynamoDBBackend.transact_write_items``: rules can throttle transactions that update given tasks;
- ``DynamoDBBackend.update_item``: a rule can hold the first UpdateItem of an item whose key carries a
  marker past the caller's timeout (``stall_update``): the invocation dies mid-batch, and the write
  then lands, as a write AWS took just before its caller died does.

One rule acts on Lambda's side of the embedded AWS rather than on moto: ``duplicate_async`` makes the
async invoker (``async_invoke``, which asks ``active()``) run one accepted event 2-3 times, the copies
started together, as Lambda's at-least-once asynchronous delivery may
(https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html).

Each rule counts how often it fired, so a scenario can assert that the fault really happened.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from embedded_aws.clock import VirtualClock
from embedded_aws.fault_rules import (
    DuplicateAsync,
    RefusedEntry,
    RefusedPut,
    SqsOutage,
    SqsSend,
    StalledSend,
    StalledUpdate,
    Throttle,
)


class Faults:
    """Rules and counters of one ``inject()`` block; rules can be added while it is active."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.sqs_sends: list[SqsSend] = []
        self.s3_puts: Counter[tuple[str, str]] = Counter()
        self.outages: list[SqsOutage] = []
        self.stalls: list[StalledSend] = []
        self.update_stalls: list[StalledUpdate] = []
        self.entry_refusals: list[RefusedEntry] = []
        self.throttles: list[Throttle] = []
        self.refusals: list[RefusedPut] = []
        self.duplicates: list[DuplicateAsync] = []

    # -- rules -------------------------------------------------------------------------------------
    def sqs_outage(self, queue: str, calls: int) -> SqsOutage:
        rule = SqsOutage(queue, calls)
        with self._lock:
            self.outages.append(rule)
        return rule

    def refuse_entries(self, marker: str, times: int) -> RefusedEntry:
        rule = RefusedEntry(marker, times)
        with self._lock:
            self.entry_refusals.append(rule)
        return rule

    def stall_send(self, marker: str, clock: VirtualClock, hold_seconds: float) -> StalledSend:
        rule = StalledSend(marker, clock, hold_seconds)
        with self._lock:
            self.stalls.append(rule)
        return rule

    def stall_update(self, marker: str, clock: VirtualClock, hold_seconds: float) -> StalledUpdate:
        rule = StalledUpdate(marker, clock, hold_seconds)
        with self._lock:
            self.update_stalls.append(rule)
        return rule

    def _update_stall(self, key: dict[str, dict[str, Any]]) -> StalledUpdate | None:
        values = [str(value) for attribute in key.values() for value in attribute.values()]
        with self._lock:
            for rule in self.update_stalls:
                if rule.fired == 0 and any(rule.marker in value for value in values):
                    rule.fired += 1
                    return rule
        return None

    def heal(self, rule: StalledSend) -> None:
        """The cause of a stall is fixed: later sends carrying its marker go through."""
        with self._lock:
            self.stalls.remove(rule)

    def throttle(self, task_ids: set[str] | frozenset[str], times: int) -> Throttle:
        rule = Throttle(frozenset(task_ids), times)
        with self._lock:
            self.throttles.append(rule)
        return rule

    def refuse_put(self, markers: set[str] | frozenset[str], times: int = 1) -> RefusedPut:
        rule = RefusedPut(frozenset(markers), times)
        with self._lock:
            self.refusals.append(rule)
        return rule

    def duplicate_async(self, function: str, deliveries: int = 3, events: int = 1) -> DuplicateAsync:
        """Deliver the next ``events`` async events of ``function`` (its name) ``deliveries`` times."""
        rule = DuplicateAsync(function, deliveries, events)
        with self._lock:
            self.duplicates.append(rule)
        return rule

    def async_deliveries(self, function: str) -> int:
        """How many times the async event just accepted for ``function`` runs (1 without a rule)."""
        with self._lock:
            for rule in self.duplicates:
                if rule.applies(function):
                    rule.fired += 1
                    return rule.deliveries
        return 1

    # -- counters ----------------------------------------------------------------------------------
    def sends_of(self, queue: str, task_id: str) -> int:
        """Messages that reached the queue named ``queue`` whose body names ``task_id``."""
        with self._lock:
            sends = list(self.sqs_sends)
        return sum(1 for s in sends if s.queue == queue and _task_id(s.body) == task_id)

    def puts_of(self, bucket: str, prefix: str = "") -> dict[str, int]:
        with self._lock:
            return {k: n for (b, k), n in self.s3_puts.items() if b == bucket and k.startswith(prefix)}

    # -- hooks called by the patched backends ------------------------------------------------------
    def _batch_verdict(self, queue_name: str, entries: dict[str, dict[str, Any]]) -> str | None:
        """The error code every entry of this batch fails with, or None to let it through."""
        bodies = [str(e.get("MessageBody", "")) for e in entries.values()]
        stall: StalledSend | None = None
        with self._lock:
            for rule in self.stalls:
                if any(rule.marker in body for body in bodies):
                    rule.fired += 1
                    stall = rule
                    break
            if stall is None:
                for outage in self.outages:
                    if outage.applies(queue_name):
                        outage.fired += 1
                        return outage.code
        if stall is None:
            return None
        stall.clock.sleep(stall.hold_seconds)
        return "InternalError"

    def _refused_entries(self, entries: dict[str, dict[str, Any]]) -> dict[str, str]:
        """Entry ids of this batch that fail alone, with their error code."""
        refused: dict[str, str] = {}
        with self._lock:
            for key, entry in entries.items():
                body = str(entry.get("MessageBody", ""))
                for rule in self.entry_refusals:
                    if rule.marker in body and rule.fired < rule.times:
                        rule.fired += 1
                        refused[key] = rule.code
                        break
        return refused

    def _count_send(self, queue_name: str, body: str) -> None:
        with self._lock:
            self.sqs_sends.append(SqsSend(queue_name, body))

    def _throttled(self, transact_items: list[dict[str, Any]]) -> bool:
        updated = {
            str(op.get("Key", {}).get("task_id", {}).get("S", ""))
            for item in transact_items
            for kind, op in item.items()
            if kind == "Update" and isinstance(op, dict)
        }
        with self._lock:
            for rule in self.throttles:
                for task_id in sorted(updated & rule.task_ids):
                    if rule.per_task[task_id] < rule.times:
                        rule.per_task[task_id] += 1
                        return True
        return False

    def _put_refused(self, bucket: str, key: str) -> str | None:
        with self._lock:
            for rule in self.refusals:
                if any(m in key for m in rule.markers) and rule.per_key[key] < rule.times:
                    rule.per_key[key] += 1
                    return rule.code
        return None

    def _count_put(self, bucket: str, key: str) -> None:
        with self._lock:
            self.s3_puts[(bucket, key)] += 1


def _task_id(body: str) -> str | None:
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    value = payload.get("task_id") if isinstance(payload, dict) else None
    return value if isinstance(value, str) else None


_active: Faults | None = None
_install_lock = threading.Lock()


def _current() -> Faults | None:
    return _active


def active() -> Faults | None:
    """The rules of the ``inject()`` block running now, if any."""
    return _current()


def _patches() -> list[tuple[Any, str, Callable[[Callable[..., Any]], Callable[..., Any]]]]:
    from moto.core.exceptions import JsonRESTError
    from moto.dynamodb.models import DynamoDBBackend
    from moto.s3.exceptions import S3ClientError
    from moto.s3.models import S3Backend
    from moto.sqs.models import SQSBackend

    def send_message(original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(self: Any, queue_name: str, message_body: str, *args: Any, **kwargs: Any) -> Any:
            message = original(self, queue_name, message_body, *args, **kwargs)
            faults = _current()
            if faults is not None:
                faults._count_send(queue_name, message_body)
            return message

        return wrapper

    def send_message_batch(original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(self: Any, queue_name: str, entries: dict[str, dict[str, Any]]) -> Any:
            faults = _current()
            code = None if faults is None else faults._batch_verdict(queue_name, entries)
            refused = {} if faults is None or code is not None else faults._refused_entries(entries)
            if code is None and not refused:
                return original(self, queue_name, entries)
            self.get_queue(queue_name)
            codes = dict.fromkeys(entries, code) if code is not None else refused
            failed = [
                {
                    "Id": entries[key]["Id"],
                    "SenderFault": False,
                    "Code": failure,
                    "Message": "The request failed because of an unknown error, exception or failure.",
                }
                for key, failure in codes.items()
            ]
            rest = {key: entry for key, entry in entries.items() if key not in codes}
            sent, also_failed = original(self, queue_name, rest) if rest else ([], [])
            return sent, failed + also_failed

        return wrapper

    def put_object(original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(self: Any, bucket_name: str, key_name: str, *args: Any, **kwargs: Any) -> Any:
            faults = _current()
            if faults is not None:
                code = faults._put_refused(bucket_name, key_name)
                if code is not None:
                    raise S3ClientError(code, "Access Denied")
            stored = original(self, bucket_name, key_name, *args, **kwargs)
            if faults is not None:
                faults._count_put(bucket_name, key_name)
            return stored

        return wrapper

    def transact_write_items(original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(self: Any, transact_items: list[dict[str, Any]]) -> Any:
            faults = _current()
            if faults is not None and faults._throttled(transact_items):
                raise JsonRESTError(
                    "com.amazonaws.dynamodb.v20120810#ThrottlingException",
                    "Throughput exceeds the current capacity for one or more global secondary indexes.",
                )
            return original(self, transact_items)

        return wrapper

    def update_item(original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(
            self: Any, table_name: str, key: dict[str, dict[str, Any]], *args: Any, **kwargs: Any
        ) -> Any:
            faults = _current()
            stall = faults._update_stall(key) if faults is not None else None
            if stall is not None:
                stall.clock.sleep(stall.hold_seconds)
            return original(self, table_name, key, *args, **kwargs)

        return wrapper

    return [
        (SQSBackend, "send_message", send_message),
        (SQSBackend, "send_message_batch", send_message_batch),
        (S3Backend, "put_object", put_object),
        (DynamoDBBackend, "transact_write_items", transact_write_items),
        (DynamoDBBackend, "update_item", update_item),
    ]


@contextlib.contextmanager
def inject() -> Iterator[Faults]:
    """Count side effects and apply the rules added to the yielded ``Faults`` until the block ends."""
    global _active
    with _install_lock:
        if _active is not None:
            raise RuntimeError("fault injection is already active")
        originals: list[tuple[Any, str, Any]] = []
        for owner, name, wrap in _patches():
            original = owner.__dict__[name]
            originals.append((owner, name, original))
            setattr(owner, name, wrap(original))
        faults = Faults()
        _active = faults
    try:
        yield faults
    finally:
        with _install_lock:
            _active = None
            for owner, name, original in reversed(originals):
                setattr(owner, name, original)
