"""DynamoDB's size limits in the embedded AWS: 400 KB an item, 4 MB a TransactWriteItems request.

moto sizes an item with its own arithmetic (a number counts its characters, a list or map costs
nothing, binary counts its base64 text) against 405,000 bytes, and only when a top-level attribute
is set. So it refuses a 399 KB item that DynamoDB stores, lets an update inside a map grow an item
without limit, and knows no transaction limit at all. And the project's TransactWriteItems
(``dynamodb_transactions``) applies its actions one by one: an oversized item in the middle of a
transaction failed only when its turn came, leaving the actions before it written.

DynamoDB measures in binary units (1 KB = 1024 bytes) and allows an item of 400 KB, attribute names
included (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Constraints.html, "Items",
"DynamoDB transactions"). An item's size is the sum over its attributes of the name's UTF-8 bytes
and the value's size: a string's UTF-8 bytes, a binary's raw bytes, a number's one byte per two
significant digits plus one, one byte for a Boolean or null, three bytes for a list or map plus one
byte and the size of each element
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html).
"The aggregate size of the items in the transaction cannot exceed 4 MB", and DynamoDB rejects such a
TransactWriteItems whole
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html,
https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html); it
cancels a transaction in which "an item size becomes too large (larger than 400 KB)", the reason
being a ``ValidationError`` (same page, TransactionCanceledException).

Here, with nothing written whenever a limit is exceeded:

- a put of an item over 400 KB (PutItem, BatchWriteItem, any whole-item write): ValidationException
  "Item size has exceeded the maximum allowed size";
- an UpdateItem whose item would be over 400 KB after the update, nested attributes included (the
  update is first run on a copy, unless a cheap bound shows it cannot get there): ValidationException
  "Item size to update has exceeded the maximum allowed size";
- a TransactWriteItems carrying more than 4 MB: ValidationException ``TRANSACTION_TOO_LARGE``, before
  any condition is evaluated;
- a TransactWriteItems with a Put or an Update over 400 KB: TransactionCanceledException whose reason
  for the first such action is ``ValidationError`` with the message above, ``None`` for the others.
  Each action's item is sized once, before the transaction is applied: its updates are then applied
  under the same lock without being sized again (a transaction names an item at most once, so the
  state it was sized on is the state it is applied to).

Not documented, chosen from what ScyllaDB's Alternator tests observed on DynamoDB
(``test/alternator/test_transact.py`` in scylladb/scylladb), so unconfirmed: the 4 MB is of what the
request carries, not of the stored items (a transaction deleting 5 MB of items passes), so an action
counts its Item or Key plus its ExpressionAttributeValues; the 4 MB error is a ValidationException
whose message says the size "cannot exceed" (the wording of ``TRANSACTION_TOO_LARGE`` is ours);
only the first action with a validation error gets a reason other than None. Checking an item's size
before its condition is our choice (moto does the same for PutItem).
"""

from __future__ import annotations

import base64
import binascii
import copy
import functools
import inspect
import json
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any

from embedded_aws.dynamodb_transactions import WRITE_LOCK, make_transactions_atomic

MAX_ITEM_BYTES = 400 * 1024
MAX_TRANSACTION_BYTES = 4 * 1024 * 1024
MAX_TRANSACTION_ACTIONS = 100
ITEM_TOO_LARGE = "Item size has exceeded the maximum allowed size"
UPDATE_TOO_LARGE = "Item size to update has exceeded the maximum allowed size"
TRANSACTION_TOO_LARGE = "Transaction payload size cannot exceed 4 MB"
_PATCHED = "__outreach_size_limits__"
# Set on a thread while it applies a transaction whose items were all sized: its updates are not sized again.
_SIZED = threading.local()
# Anything in an update expression that may name an attribute (and so copy it).
_PATH = re.compile(r"[#A-Za-z_][\w#.\[\]]*")
_NAME = re.compile(r"#\w+")
_VALUE = re.compile(r":\w+")


def _typed(value: Any) -> tuple[str, Any]:
    """(type, content) of an attribute value given as moto's DynamoType or as ``{"S": ...}``."""
    if isinstance(value, Mapping):
        return next(iter(value.items()))
    return str(value.type), value.value


def _utf8(text: str | bytes) -> int:
    return len(text if isinstance(text, bytes) else text.encode("utf-8"))


def _number_size(text: str) -> int:
    mantissa = str(text).strip().lstrip("+-").lower().split("e")[0]
    digits = mantissa.replace(".", "").strip("0")
    return (len(digits) + 1) // 2 + 1


def _binary_size(content: str | bytes) -> int:
    if isinstance(content, bytes):
        return len(content)
    try:
        return len(base64.b64decode(content, validate=True))
    except (binascii.Error, ValueError):
        return _utf8(content)


def value_size(value: Any) -> int:
    """Bytes of one attribute value, without its name, as DynamoDB counts them."""
    kind, content = _typed(value)
    if kind == "S":
        return _utf8(content)
    if kind == "N":
        return _number_size(content)
    if kind == "B":
        return _binary_size(content)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(_utf8(v) for v in content)
    if kind == "NS":
        return sum(_number_size(v) for v in content)
    if kind == "BS":
        return sum(_binary_size(v) for v in content)
    if kind == "L":
        return 3 + sum(1 + value_size(v) for v in content)
    if kind == "M":
        return 3 + sum(1 + _utf8(k) + value_size(v) for k, v in content.items())
    return 0


def item_size(attributes: Mapping[str, Any]) -> int:
    """Bytes of an item (attribute names and values), as DynamoDB counts them."""
    return sum(_utf8(name) + value_size(value) for name, value in attributes.items())


def _at_most(current: int, update_expression: str, names: Any, values: Any) -> int:
    """An upper bound on the item's size after the update, cheap to work out: each path the
    expression names may copy at most the whole item, and each use of a placeholder adds at most its
    JSON text, never shorter than the bytes (and per-element overhead) DynamoDB counts for it."""
    names, values = names or {}, values or {}
    paths = len(_PATH.findall(update_expression))
    used = [names.get(n, "") for n in _NAME.findall(update_expression)]
    used += [values.get(v, "") for v in _VALUE.findall(update_expression)]
    carried = sum(len(json.dumps(part, default=str)) for part in used) + len(update_expression)
    return current * (1 + paths) + carried + 8 * paths


def updated_copy(
    backend: Any,
    table_name: str,
    key: dict[str, Any],
    update_expression: str | None,
    names: dict[str, Any] | None,
    values: dict[str, Any] | None,
) -> Any:
    """The item as it would be once the update is applied, worked out on a copy (the stored item is
    left as it is); None without an UpdateExpression (the legacy AttributeUpdates are not worked out)
    or when moto refuses the update for another reason (it then says why itself)."""
    from moto.dynamodb.models.dynamo_type import Item
    from moto.dynamodb.parsing.executors import UpdateExpressionExecutor
    from moto.dynamodb.parsing.expressions import UpdateExpressionParser  # type: ignore[attr-defined]
    from moto.dynamodb.parsing.validators import UpdateExpressionValidator

    if not update_expression:
        return None
    try:
        table = backend.get_table(table_name)
        hash_value, range_value = backend.get_keys_value(table, key)
        current = table.get_item(hash_value, range_value)
        if current is None:
            attributes = {table.hash_key_attr: key[table.hash_key_attr]}
            if table.range_key_attr is not None:
                attributes[table.range_key_attr] = key[table.range_key_attr]
            item = Item(hash_value, range_value, attributes)
        else:
            item = copy.deepcopy(current)
        names = copy.deepcopy(names or {})
        validated = UpdateExpressionValidator(
            UpdateExpressionParser.make(update_expression),
            expression_attribute_names=names,
            expression_attribute_values=copy.deepcopy(values or {}),
            item=item,
            table=table,
        ).validate()
        validated.normalize()
        UpdateExpressionExecutor(validated, item, names).execute()
    except Exception:
        return None
    return item


def _grows_too_large(
    backend: Any,
    table_name: str,
    key: dict[str, Any],
    update_expression: str | None,
    names: dict[str, Any] | None,
    values: dict[str, Any] | None,
) -> bool:
    """Whether the item would be over 400 KB once the update is applied, worked out on a copy
    (``updated_copy``) when a cheap bound does not settle it; False when no copy can be worked out."""
    if not update_expression:
        return False
    try:
        table = backend.get_table(table_name)
        hash_value, range_value = backend.get_keys_value(table, key)
        current = table.get_item(hash_value, range_value)
    except Exception:
        return False
    size = 0 if current is None else item_size(current.attrs)
    if _at_most(size + item_size(key), update_expression, names, values) <= MAX_ITEM_BYTES:
        return False
    item = updated_copy(backend, table_name, key, update_expression, names, values)
    return item is not None and item_size(item.attrs) > MAX_ITEM_BYTES


def _put_checked(put_item: Callable[..., Any]) -> Callable[..., Any]:
    """Table.put_item, which every whole-item write goes through, refusing an item over 400 KB."""

    @functools.wraps(put_item)
    def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
        from moto.dynamodb.exceptions import ItemSizeTooLarge

        attributes = kwargs["item_attrs"] if "item_attrs" in kwargs else args[0]
        if item_size(attributes) > MAX_ITEM_BYTES:
            raise ItemSizeTooLarge()
        return put_item(self, *args, **kwargs)

    return checked


def _update_checked(update_item: Callable[..., Any]) -> Callable[..., Any]:
    """DynamoDBBackend.update_item refusing, before it changes anything, an update past 400 KB."""
    signature = inspect.signature(update_item)

    @functools.wraps(update_item)
    def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
        from moto.dynamodb.exceptions import ItemSizeToUpdateTooLarge

        if getattr(_SIZED, "transaction", False):
            return update_item(self, *args, **kwargs)
        call = signature.bind(self, *args, **kwargs).arguments
        with WRITE_LOCK:
            if _grows_too_large(
                self,
                call["table_name"],
                call["key"],
                call.get("update_expression"),
                call.get("expression_attribute_names"),
                call.get("expression_attribute_values"),
            ):
                raise ItemSizeToUpdateTooLarge()
            return update_item(self, *args, **kwargs)

    return checked


def _carried(action: dict[str, Any]) -> int:
    """Bytes of item data one TransactWriteItems action carries: its Item or Key, and its values."""
    if len(action) != 1:
        return 0
    op_type, op = next(iter(action.items()))
    data = op.get("Item") if op_type == "Put" else op.get("Key")
    values = op.get("ExpressionAttributeValues") or {}
    return item_size(data or {}) + sum(value_size(v) for v in values.values())


def _too_large(backend: Any, action: dict[str, Any]) -> str | None:
    """The ValidationError message for an action whose item would be over 400 KB, else None."""
    if len(action) != 1:
        return None
    op_type, op = next(iter(action.items()))
    if op_type == "Put" and item_size(op.get("Item") or {}) > MAX_ITEM_BYTES:
        return ITEM_TOO_LARGE
    if op_type == "Update" and _grows_too_large(
        backend,
        op["TableName"],
        op["Key"],
        op.get("UpdateExpression"),
        op.get("ExpressionAttributeNames"),
        op.get("ExpressionAttributeValues"),
    ):
        return UPDATE_TOO_LARGE
    return None


def _transaction_checked(transact_write_items: Callable[..., Any]) -> Callable[..., Any]:
    """The atomic TransactWriteItems, first refusing a request over 4 MB or an item over 400 KB."""

    @functools.wraps(transact_write_items)
    def checked(self: Any, transact_items: list[dict[str, Any]]) -> Any:
        from moto.dynamodb.exceptions import MockValidationException, TransactionCanceledException

        if len(transact_items) > MAX_TRANSACTION_ACTIONS:
            return transact_write_items(self, transact_items)
        if sum(_carried(action) for action in transact_items) > MAX_TRANSACTION_BYTES:
            raise MockValidationException(TRANSACTION_TOO_LARGE)
        with WRITE_LOCK:
            reasons: list[tuple[Any, Any, Any]] = [(None, None, None)] * len(transact_items)
            for index, action in enumerate(transact_items):
                message = _too_large(self, action)
                if message is not None:
                    reasons[index] = ("ValidationError", message, None)
                    raise TransactionCanceledException(reasons)
            _SIZED.transaction = True
            try:
                return transact_write_items(self, transact_items)
            finally:
                _SIZED.transaction = False

    setattr(checked, _PATCHED, True)
    return checked


def enforce_dynamodb_size_limits() -> None:
    """Install the 400 KB item and 4 MB transaction limits on moto's DynamoDB (idempotent).

    Installs ``make_transactions_atomic`` first: the limits are checked on the state the atomic
    TransactWriteItems then applies, under the same lock.
    """
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.dynamo_type import LimitedSizeDict
    from moto.dynamodb.models.table import Table

    make_transactions_atomic()
    if getattr(DynamoDBBackend.transact_write_items, _PATCHED, False):
        return
    # moto's own check (its arithmetic, 405,000 bytes, top-level attributes only) gives way to these.
    LimitedSizeDict.__setitem__ = dict.__setitem__  # type: ignore[method-assign]
    Table.put_item = _put_checked(Table.put_item)  # type: ignore[method-assign]
    DynamoDBBackend.update_item = _update_checked(DynamoDBBackend.update_item)  # type: ignore[method-assign]
    DynamoDBBackend.transact_write_items = _transaction_checked(  # type: ignore[method-assign]
        DynamoDBBackend.transact_write_items
    )
