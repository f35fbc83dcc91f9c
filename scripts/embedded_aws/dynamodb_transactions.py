"""All-or-nothing, thread-safe TransactWriteItems for the embedded AWS.

moto applies a transaction's actions one by one after deep-copying every table it touches, and on a
failed condition puts the copies back in place of the live tables. Under concurrent requests that is
wrong twice over: writes other threads made meanwhile are thrown away with the restored copy (stream
records included), and each transaction costs a copy of the whole table and its stream, which grows
the emulator to tens of gigabytes on a job of a few thousand tasks.

DynamoDB checks every condition of a transaction against one state and then applies all of it or
nothing (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html).
This replacement does the same under one lock that single-item writes share: check every condition,
and only when all hold, apply every action. Nothing has to be rolled back and nothing is copied.
"""

from __future__ import annotations

import threading
from typing import Any

from embedded_aws import dynamodb_plain_updates
from embedded_aws.locked_methods import hold_lock

# Held by every write (and by dynamodb_size_limits while it sizes a write), so a write is checked and
# applied against one state.
WRITE_LOCK = threading.RLock()
_PATCHED = "__outreach_atomic__"


def _key_of(backend: Any, op_type: str, op: dict[str, Any]) -> dict[str, Any]:
    if op_type != "Put":
        return dict(op["Key"])
    table = backend.get_table(op["TableName"])
    key = {table.hash_key_attr: op["Item"][table.hash_key_attr]}
    if table.range_key_attr is not None:
        key[table.range_key_attr] = op["Item"][table.range_key_attr]
    return key


def _condition_error(backend: Any, op: dict[str, Any], key: dict[str, Any]) -> tuple[Any, ...]:
    from moto.dynamodb.comparisons import get_filter_expression

    expression = op.get("ConditionExpression")
    if expression is None:
        return (None, None, None)
    current = backend.get_item(op["TableName"], key)
    condition = get_filter_expression(
        expression, op.get("ExpressionAttributeNames"), op.get("ExpressionAttributeValues")
    )
    if condition.expr(current):
        return (None, None, None)
    old = None
    if op.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD" and current is not None:
        old = current.to_json()["Attributes"]
    return ("ConditionalCheckFailed", "The conditional request failed", old)


def _apply(backend: Any, op_type: str, op: dict[str, Any], key: dict[str, Any]) -> None:
    names = op.get("ExpressionAttributeNames")
    values = op.get("ExpressionAttributeValues")
    if op_type == "Put":
        backend.put_item(
            op["TableName"], op["Item"], expression_attribute_names=names, expression_attribute_values=values
        )
    elif op_type == "Delete":
        backend.delete_item(
            op["TableName"], key, expression_attribute_names=names, expression_attribute_values=values
        )
    elif op_type == "Update":
        backend.update_item(
            op["TableName"],
            key,
            update_expression=op["UpdateExpression"],
            expression_attribute_names=names,
            expression_attribute_values=values,
        )


def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
    from moto.dynamodb.exceptions import (
        MultipleTransactionsException,
        TooManyTransactionsException,
        TransactionCanceledException,
        TransactWriteSingleOpException,
    )

    if len(transact_items) > 100:
        raise TooManyTransactionsException()
    actions: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    seen: set[tuple[str, str]] = set()
    with WRITE_LOCK:
        for item in transact_items:
            if len(item) != 1:
                raise TransactWriteSingleOpException
            op_type, op = next(iter(item.items()))
            if op_type not in {"ConditionCheck", "Put", "Delete", "Update"}:
                raise TransactionCanceledException([("ValidationError", "unsupported operation", None)])
            key = _key_of(self, op_type, op)
            identity = (str(op["TableName"]), str(dict(sorted(key.items()))))
            if identity in seen:
                raise MultipleTransactionsException()
            seen.add(identity)
            actions.append((op_type, op, key))
        errors = [_condition_error(self, op, key) for _, op, key in actions]
        if any(code is not None for code, _, _ in errors):
            raise TransactionCanceledException(errors)
        for op_type, op, key in actions:
            _apply(self, op_type, op, key)


def make_transactions_atomic() -> None:
    """Install the replacement on moto's DynamoDB backend (idempotent)."""
    from moto.dynamodb.models import DynamoDBBackend

    if getattr(DynamoDBBackend.transact_write_items, _PATCHED, False):
        return
    # Innermost: the lock (and the size limits, installed after this) wrap the plain updates.
    dynamodb_plain_updates.install()
    hold_lock(DynamoDBBackend, ("put_item", "update_item", "delete_item"), WRITE_LOCK)
    setattr(transact_write_items, _PATCHED, True)
    DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]
