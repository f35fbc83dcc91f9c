"""DynamoDB's write limit per partition key in the embedded AWS: 1,000 write units a second, table and index.

moto has no throughput at all: any number of writes a second to one partition key succeed, so a hot
key (every open task of a job under one ``open-tasks`` key) never shows, and a benchmark can only
compute on paper when creation would be throttled.

What AWS documents:

- "Each partition on the table can serve up to 3,000 read request units or 1,000 write request
  units", in on-demand mode too, and one partition key value lives on one partition
  (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html,
  https://repost.aws/knowledge-center/on-demand-table-throttling-dynamodb). A write unit is one write
  of an item of up to 1 KB, a transactional write costs two
  (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html).
- A global secondary index has partitions of its own; a table write that changes an indexed
  attribute writes the index as well, a changed index key twice (the old entry deleted, the new one
  put), and "if a request performs heavy write activity on the table, but a global secondary index
  on that table has insufficient write capacity, then the write activity on the table will be
  throttled" (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations,
  https://repost.aws/knowledge-center/dynamodb-gsi-throttling-table).
- A throttled request carries ``ThrottlingReasons``, each a reason
  ``<Table|Index><Read|Write><LimitType>`` (here ``TableWriteKeyRangeThroughputExceeded`` or
  ``IndexWriteKeyRangeThroughputExceeded``) and the ARN of the table or index
  (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_ThrottlingReason.html,
  https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/throttling-key-range-limit-exceeded-mitigation.html).
- TransactWriteItems is cancelled, whole, when there is "insufficient provisioned capacity for the
  transaction to be completed"; its cancellation reason code for that is ``ThrottlingError``
  (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html).

Here, while switched on (``partition_throttling``), every PutItem, UpdateItem and DeleteItem request
and every TransactWriteItems is costed before it is applied: per table partition key the item's write
units (the larger of its size before and after, in 1 KB steps; twice that in a transaction), and per
index partition key the write units of each entry it deletes or puts (the projected entry's size).
Each key has a bucket of 1,000 units that refills at 1,000 units per second of the embedded AWS's
clock; a request that does not fit every bucket it touches is refused whole and consumes nothing:

- a single-item write: ``ProvisionedThroughputExceededException`` with ``ThrottlingReasons``, which
  the SDK's standard retry mode retries with backoff;
- a TransactWriteItems: ``TransactionCanceledException`` whose reason is ``ThrottlingError`` for each
  action that did not fit, ``None`` for the others. The SDK does not retry it: the caller must.

"Per second" is of the embedded AWS's clock (``clock.active_clock``, else the wall clock): on a stack
whose virtual clock runs ten times faster, a key takes 10,000 writes per wall-clock second, which is
1,000 per second of the time the pipeline lives in.

Unconfirmed, chosen here: which exception an on-demand table returns for a key-range throttle (the
developer guide names ``ProvisionedThroughputExceededException`` and ``ThrottlingException``; the
former is used, the SDK retries both); a bucket starting full and holding one second's units (AWS
documents no per-partition burst); an index write inside a transaction costing one unit per KB, not
two (the index is updated outside the transaction); the message texts. Not modelled: reads,
BatchWriteItem (whose throttled items AWS returns in ``UnprocessedItems``; its writes here are never
throttled), adaptive capacity splitting a hot partition, and the table-level on-demand limits.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import math
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from embedded_aws import clock as embedded_clock
from embedded_aws.dynamodb_size_limits import item_size, updated_copy
from embedded_aws.dynamodb_transactions import WRITE_LOCK, make_transactions_atomic

PARTITION_WRITE_UNITS_PER_SECOND = 1_000
WRITE_UNIT_BYTES = 1024
THROTTLED = "ThrottlingError"
_EXCEPTION = "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException"
_MESSAGE = "Throughput exceeds the current throughput limit for your table or index partition key."
_PATCHED = "__outreach_partition_throttling__"

# A partition key: (table name, index name or "" for the table, the key's value as text).
Key = tuple[str, str, str]


def _units(size: int) -> int:
    return max(1, math.ceil(size / WRITE_UNIT_BYTES))


@dataclass
class _Bucket:
    tokens: float
    at: float


@dataclass
class Throttle:
    """Buckets per partition key, refilled at ``limit`` units per second of ``now``; counts refusals."""

    limit: float
    now: Callable[[], float]
    buckets: dict[Key, _Bucket] = field(default_factory=dict)
    throttled_requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, wanted: dict[Key, int]) -> list[Key]:
        """Take ``wanted`` units from each key's bucket, all or none; the keys that lacked them."""
        with self.lock:
            moment = self.now()
            short: list[Key] = []
            for key, units in wanted.items():
                bucket = self.buckets.setdefault(key, _Bucket(self.limit, moment))
                bucket.tokens = min(self.limit, bucket.tokens + (moment - bucket.at) * self.limit)
                bucket.at = moment
                if bucket.tokens < units:
                    short.append(key)
            if short:
                self.throttled_requests += 1
                return short
            for key, units in wanted.items():
                self.buckets[key].tokens -= units
            return []


_active: Throttle | None = None
_inside = threading.local()


def active() -> Throttle | None:
    """The throttle switched on now, if any."""
    return _active


def _clock_seconds() -> float:
    virtual = embedded_clock.active_clock()
    return virtual.now() if virtual is not None else time.time()


def _throughput_error(backend: Any, short: list[Key]) -> Exception:
    from moto.dynamodb.exceptions import DynamodbException

    reasons = []
    for table_name, index, _ in short:
        arn = backend.get_table(table_name).table_arn
        reasons.append(
            {
                "reason": "IndexWriteKeyRangeThroughputExceeded"
                if index
                else "TableWriteKeyRangeThroughputExceeded",
                "resource": f"{arn}/index/{index}" if index else arn,
            }
        )
    error = DynamodbException(_EXCEPTION, _MESSAGE)
    error.description = json.dumps({"__type": _EXCEPTION, "message": _MESSAGE, "ThrottlingReasons": reasons})
    return error


def _hash_text(value: Any) -> str:
    return str(getattr(value, "value", value))


def _index_entry(table: Any, index: Any, attrs: dict[str, Any]) -> tuple[str, int] | None:
    """(index hash key value, entry size) of ``attrs`` in ``index``; None when the item is not in it."""
    schema = {key["KeyType"]: key["AttributeName"] for key in index.schema}
    if any(name not in attrs for name in schema.values()):
        return None
    projection = index.projection.get("ProjectionType", "ALL")
    if projection == "ALL":
        size = item_size(attrs)
    else:
        names = set(schema.values()) | {table.hash_key_attr}
        if table.range_key_attr is not None:
            names.add(table.range_key_attr)
        if projection == "INCLUDE":
            names |= set(index.projection.get("NonKeyAttributes", []))
        size = item_size({name: value for name, value in attrs.items() if name in names})
    return _hash_text(attrs[schema["HASH"]]), size


def write_units(
    backend: Any, table_name: str, before: dict[str, Any] | None, after: dict[str, Any] | None, *, factor: int
) -> dict[Key, int]:
    """The write units one item write takes from each partition key: the table's and each index's."""
    table = backend.get_table(table_name)
    either = after if after is not None else before
    if either is None:
        return {}
    wanted: dict[Key, int] = {}
    size = max(item_size(before or {}), item_size(after or {}))
    wanted[(table_name, "", _hash_text(either[table.hash_key_attr]))] = factor * _units(size)
    for index in table.global_indexes:
        old = _index_entry(table, index, before) if before is not None else None
        new = _index_entry(table, index, after) if after is not None else None
        for entry in (old, new) if old is None or new is None or old[0] != new[0] else (new,):
            if entry is not None:
                key = (table_name, index.name, entry[0])
                wanted[key] = wanted.get(key, 0) + _units(entry[1])
    return wanted


def _current(backend: Any, table_name: str, key: dict[str, Any]) -> dict[str, Any] | None:
    table = backend.get_table(table_name)
    hash_value, range_value = backend.get_keys_value(table, key)
    item = table.get_item(hash_value, range_value)
    return None if item is None else dict(item.attrs)


def _key_of_item(backend: Any, table_name: str, attrs: dict[str, Any]) -> dict[str, Any]:
    table = backend.get_table(table_name)
    key = {table.hash_key_attr: attrs[table.hash_key_attr]}
    if table.range_key_attr is not None:
        key[table.range_key_attr] = attrs[table.range_key_attr]
    return key


def _typed(attrs: dict[str, Any]) -> dict[str, Any]:
    """Request attributes ({"S": ...}) as moto's DynamoType values, for sizing and comparing."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    return {
        name: value if isinstance(value, DynamoType) else DynamoType(value) for name, value in attrs.items()
    }


def _after_update(
    backend: Any, table_name: str, key: dict[str, Any], op: dict[str, Any]
) -> dict[str, Any] | None:
    item = updated_copy(
        backend,
        table_name,
        key,
        op.get("UpdateExpression") or op.get("update_expression"),
        op.get("ExpressionAttributeNames") or op.get("expression_attribute_names"),
        op.get("ExpressionAttributeValues") or op.get("expression_attribute_values"),
    )
    return None if item is None else dict(item.attrs)


def _action_units(backend: Any, op_type: str, op: dict[str, Any], factor: int) -> dict[Key, int]:
    table_name = op["TableName"]
    if op_type == "Put":
        stored = _current(backend, table_name, _key_of_item(backend, table_name, op["Item"]))
        return write_units(backend, table_name, stored, _typed(op["Item"]), factor=factor)
    if op_type == "Update":
        current = _current(backend, table_name, op["Key"])
        # An update whose result cannot be worked out (moto then refuses it itself) is costed as
        # leaving the item as it is.
        updated = _after_update(backend, table_name, op["Key"], op) or current
        return write_units(backend, table_name, current, updated, factor=factor)
    if op_type == "Delete":
        return write_units(backend, table_name, _current(backend, table_name, op["Key"]), None, factor=factor)
    return {}


def _depth() -> int:
    """How many throttled requests this thread is inside (their item writes are costed already)."""
    return int(getattr(_inside, "depth", 0))


def _merge(into: dict[Key, int], more: dict[Key, int]) -> None:
    for key, units in more.items():
        into[key] = into.get(key, 0) + units


def _single(op_type: str, method: Callable[..., Any]) -> Callable[..., Any]:
    """A backend write method that, while the throttle is on, first takes its units or is refused."""
    signature = inspect.signature(method)

    @functools.wraps(method)
    def throttled(self: Any, *args: Any, **kwargs: Any) -> Any:
        throttle = _active
        if throttle is None or _depth():
            return method(self, *args, **kwargs)
        call = signature.bind(self, *args, **kwargs).arguments
        with WRITE_LOCK:
            if op_type == "Put":
                op = {"TableName": call["table_name"], "Item": call["item_attrs"]}
            else:
                op = {"TableName": call["table_name"], "Key": call["key"], **call}
            wanted = _action_units(self, op_type, op, factor=1)
            short = throttle.take(wanted)
            if short:
                raise _throughput_error(self, short)
            return method(self, *args, **kwargs)

    setattr(throttled, _PATCHED, True)
    return throttled


def _transaction(method: Callable[..., Any]) -> Callable[..., Any]:
    """TransactWriteItems that, while the throttle is on, takes every action's units (transactional
    table writes at twice the units) or is cancelled with ``ThrottlingError`` for the short ones."""

    @functools.wraps(method)
    def throttled(self: Any, transact_items: list[dict[str, Any]]) -> Any:
        from moto.dynamodb.exceptions import TransactionCanceledException

        throttle = _active
        if throttle is None:
            return method(self, transact_items)
        with WRITE_LOCK:
            per_action: list[dict[Key, int]] = []
            for action in transact_items:
                if len(action) != 1:
                    return method(self, transact_items)
                op_type, op = next(iter(action.items()))
                per_action.append(_action_units(self, op_type, op, factor=2))
            wanted: dict[Key, int] = {}
            for units in per_action:
                _merge(wanted, units)
            short = set(throttle.take(wanted))
            if short:
                reasons = [
                    (THROTTLED, _MESSAGE, None) if short & set(units) else (None, None, None)
                    for units in per_action
                ]
                raise TransactionCanceledException(reasons)
            _inside.depth = _depth() + 1
            try:
                return method(self, transact_items)
            finally:
                _inside.depth -= 1

    setattr(throttled, _PATCHED, True)
    return throttled


def _batch(method: Callable[..., Any]) -> Callable[..., Any]:
    """BatchWriteItem's handler with its item writes left unthrottled (not modelled, see above)."""

    @functools.wraps(method)
    def unthrottled(self: Any, *args: Any, **kwargs: Any) -> Any:
        _inside.depth = _depth() + 1
        try:
            return method(self, *args, **kwargs)
        finally:
            _inside.depth -= 1

    return unthrottled


def _install() -> None:
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.responses import DynamoHandler

    make_transactions_atomic()
    if getattr(DynamoDBBackend.transact_write_items, _PATCHED, False):
        return
    DynamoDBBackend.put_item = _single("Put", DynamoDBBackend.put_item)  # type: ignore[method-assign]
    DynamoDBBackend.update_item = _single("Update", DynamoDBBackend.update_item)  # type: ignore[method-assign]
    DynamoDBBackend.delete_item = _single("Delete", DynamoDBBackend.delete_item)  # type: ignore[method-assign]
    DynamoDBBackend.transact_write_items = _transaction(  # type: ignore[method-assign]
        DynamoDBBackend.transact_write_items
    )
    DynamoHandler.batch_write_item = _batch(DynamoHandler.batch_write_item)  # type: ignore[method-assign]


@contextlib.contextmanager
def partition_throttling(
    limit: float = PARTITION_WRITE_UNITS_PER_SECOND, now: Callable[[], float] | None = None
) -> Iterator[Throttle]:
    """Throttle writes per partition key inside the block (off again after it); yields the throttle,
    whose ``throttled_requests`` counts the requests refused. ``now`` is the clock in seconds (default:
    the embedded AWS's virtual clock when one is installed, else the wall clock)."""
    global _active
    _install()
    throttle = Throttle(limit=float(limit), now=now or _clock_seconds)
    previous, _active = _active, throttle
    try:
        yield throttle
    finally:
        _active = previous
