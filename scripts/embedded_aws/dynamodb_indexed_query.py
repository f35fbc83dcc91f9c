"""Query reads one partition: the embedded AWS finds a Query's candidates by its partition key.

moto answers every Query page by listing and sorting every item of the table (``Table.all_items``),
then keeping those whose partition key matches: a page costs the whole table, sorted, whatever the
partition holds. DynamoDB reads a Query from the one partition key it names, in sort-key order
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.html: "You must provide the
name of the partition key attribute and a single value for that attribute. Query returns all items
with that partition key value"), and a global secondary index is a partitioned copy of the table
organised by its own key (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html).
So on the embedded AWS a Query of the ``open-tasks`` index for one status, or of a job's rows, took
as long as a Scan of a table holding 100,000 tasks, and every page again.

The replacement hands moto's own Query only the items of the named partition: the table's partition
itself (one dictionary read), or, for an index, the items whose key attributes equal the Query's
partition-key values (one pass, no sort). moto then sorts, pages, projects and filters those exactly
as it did: the same rows in the same order, the same ``LastEvaluatedKey`` and ``ScannedCount``. A Query
moto answers with no partition value (its own validation errors) is left to moto unchanged.

Reads take no lock here, as moto's do not (``dynamodb_read_isolation``): the partition is listed in
one C-level copy, so a write in another thread cannot change it while it is walked.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

_PATCHED = "__outreach_partition_query__"
# The items a Query running on this thread may read, by table; absent: moto's whole table.
_PARTITION = threading.local()


def _key_values(value: Any) -> tuple[str, Any]:
    return (value.type, value.value)


def _stored(table: Any) -> list[Any]:
    """Every item of ``table``, unsorted, copied in one step (a write may be running)."""
    if table.range_key_attr:
        return [item for partition in list(table.items.values()) for item in list(partition.values())]
    return list(table.items.values())


def partition_items(
    table: Any,
    hash_key: Any,
    index_name: str | None,
    hash_key_conditions: list[tuple[str, Any]] | None,
) -> list[Any] | None:
    """The items a Query of ``hash_key`` (or of ``hash_key_conditions`` on ``index_name``) can
    return; None when the Query names no partition value (moto's own handling applies)."""
    if not index_name:
        if hash_key is None:
            return None
        partition = table.items.get(hash_key)
        if partition is None:
            return []
        return list(partition.values()) if table.range_key_attr else [partition]
    wanted = [(name, _key_values(value)) for name, value in (hash_key_conditions or [])]
    if not wanted:
        return None
    matching = []
    for item in _stored(table):
        attrs = item.attrs
        for name, expected in wanted:
            value = attrs.get(name)
            if value is None or (value.type, value.value) != expected:
                break
        else:
            matching.append(item)
    return matching


def _all_items(original: Callable[[Any], list[Any]]) -> Callable[[Any], list[Any]]:
    @functools.wraps(original)
    def all_items(self: Any) -> list[Any]:
        narrowed = getattr(_PARTITION, "items", None)
        if narrowed is not None and narrowed[0] is self:
            return list(narrowed[1])
        return original(self)

    return all_items


def _query(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def query(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        index_name = kwargs.get("index_name", args[6] if len(args) > 6 else None)
        items = partition_items(self, hash_key, index_name, kwargs.get("hash_key_conditions"))
        if items is None:
            return original(self, hash_key, *args, **kwargs)
        outer = getattr(_PARTITION, "items", None)
        _PARTITION.items = (self, items)
        try:
            return original(self, hash_key, *args, **kwargs)
        finally:
            _PARTITION.items = outer

    setattr(query, _PATCHED, True)
    return query


def query_one_partition() -> None:
    """Make moto's Query read only the partition it names (idempotent)."""
    from moto.dynamodb.models.table import Table

    if getattr(Table.query, _PATCHED, False):
        return
    Table.all_items = _all_items(Table.all_items)  # type: ignore[method-assign,assignment]
    Table.query = _query(Table.query)  # type: ignore[method-assign]
