"""DynamoDB reads that see each write whole: an UpdateItem changes a copy, never the item a read holds.

moto applies UpdateItem to the stored item in place (its attribute dict gains, loses and replaces
entries) while the threaded server answers reads of the same item: a Query that sizes or copies the
item at that moment fails with ``RuntimeError: dictionary changed size during iteration``, answered
as a 500, or returns an item with some of the update's actions and not others. On a busy table (the
email worker's claims and the campaign status reads of ``make local``) that happens.

DynamoDB's item operations (PutItem, GetItem, UpdateItem, DeleteItem) are each atomic
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/WorkingWithItems.html): a read gets
the item before an update or after it, never part of one, and never an error because a write ran.
Here an update is copy-on-write: under the lock every write holds (``dynamodb_transactions``), the
stored item is replaced by a copy and moto updates the copy, so a read that holds the old item reads
it unchanged. Reads take no lock: a long Scan never holds up the writes (PutItem already stores a new
item; DeleteItem removes one).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any

from embedded_aws import dynamodb_plain_updates
from embedded_aws.dynamodb_transactions import WRITE_LOCK

_PATCHED = "__outreach_copy_on_write__"


def _store_copy(backend: Any, table_name: str, key: dict[str, dict[str, Any]]) -> None:
    """Replace the stored item of ``key`` (if any) by a deep copy of itself."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    table = backend.get_table(table_name)
    hash_value = DynamoType(key[table.hash_key_attr])
    range_attr = table.range_key_attr
    range_value = DynamoType(key[range_attr]) if range_attr and range_attr in key else None
    item = table.get_item(hash_value, range_value)
    if item is None:
        return
    if range_value is not None:
        table.items[hash_value][range_value] = copy.deepcopy(item)
    else:
        table.items[hash_value] = copy.deepcopy(item)


def _copy_on_write(update_item: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(update_item)
    def wrapper(self: Any, table_name: str, key: dict[str, dict[str, Any]], *args: Any, **kwargs: Any) -> Any:
        with WRITE_LOCK:
            _store_copy(self, table_name, key)
            return update_item(self, table_name, key, *args, **kwargs)

    return wrapper


def isolate_dynamodb_reads() -> None:
    """Make moto's UpdateItem change a copy of the stored item (idempotent). A plain update
    (``dynamodb_plain_updates``) stores a new item by itself; only the updates moto applies are
    copied first."""
    dynamodb_plain_updates.wrap_fallback(_PATCHED, _copy_on_write)
