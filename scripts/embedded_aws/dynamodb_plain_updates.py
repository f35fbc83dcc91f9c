"""Plain UpdateItem expressions applied without moto's expression machinery, for the embedded AWS.

moto runs every ``UpdateExpression`` through its full parser, an AST validator that walks the tree
node by node and an executor, and deep-copies the item for the stream's old image: about 8 ms an
update on this machine for a task row carrying its rendered message, most of it the validator's
walk. An operator's cancel of a campaign of 7,200 emails is 7,200 such updates (in transactions of
99), so the emulator, not DynamoDB, held ``campaign cancel`` at a minute and more.

Almost every update the project writes is plain: ``SET`` of top-level attributes to placeholders,
``REMOVE`` of top-level attributes, ``ADD`` of a number to a top-level attribute
(``task_store.rule_update``, ``counters.counter_update``). DynamoDB's semantics for those are the
page's: SET replaces the attribute, REMOVE drops it (no error when absent), ADD to a number adds, to
an absent attribute sets it (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html).
Such an update of an existing item is applied here directly: the condition (if any) checked with
moto's own condition evaluator, the new attributes built on a copy of the attribute map (ADD with
moto's own number arithmetic), the item's size checked as moto checks it, then a new item stored in
place of the old one (copy-on-write, as ``dynamodb_read_isolation`` makes moto's updates: a read
holding the old item reads it unchanged) and one stream record written with the old item as the old
image. The response layer (ReturnValues, the check of unused names and values) is moto's, unchanged.
Anything else falls back to moto unchanged, and so does every case where DynamoDB answers with an
error, so moto keeps raising it: an item that does not exist yet, a nested path or a function, an
unknown placeholder, a key attribute as a target, one attribute named twice, an ADD that is not
number to number, an empty string or set or a value of the wrong type for an index key, a bare name
that is a reserved word, ``Expected``, ``AttributeUpdates``, or ``ReturnValuesOnConditionCheckFailure``
with a condition.

``install`` must run before anything wraps ``DynamoDBBackend.update_item`` (``dynamodb_transactions``
calls it first), so the lock and the size limits of the emulator wrap this one; ``wrap_fallback``
wraps only the updates moto applies (``dynamodb_read_isolation``'s copy before moto's in-place update).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Any

# What an update that is not plain goes to: moto's update_item, wrapped by ``wrap_fallback``.
_FALLBACK: list[Callable[..., Any]] = []
_WRAPPED: set[str] = set()
_CLAUSE = re.compile(r"\b(SET|REMOVE|ADD|DELETE)\b", re.IGNORECASE)
_NAME = r"(#[A-Za-z0-9_]+|[A-Za-z_][A-Za-z0-9_]*)"
_SET = re.compile(rf"\s*{_NAME}\s*=\s*(:[A-Za-z0-9_]+)\s*")
_REMOVE = re.compile(rf"\s*{_NAME}\s*")
_ADD = re.compile(rf"\s*{_NAME}\s+(:[A-Za-z0-9_]+)\s*")
# moto's own item limit (LimitedSizeDict); dynamodb_size_limits enforces DynamoDB's, around this.
_MOTO_ITEM_LIMIT = 405000


class _NotPlain(Exception):
    """The update is not one this module applies: moto applies it (and raises what it raises)."""


@functools.cache
def _reserved() -> frozenset[str]:
    from moto.dynamodb.parsing.reserved_keywords import ReservedKeywords

    return frozenset(word.upper() for word in ReservedKeywords.get_reserved_keywords())


def _name(token: str, names: Mapping[str, str] | None) -> str:
    if token.startswith("#"):
        if not names or token not in names:
            raise _NotPlain
        return names[token]
    if token.upper() in _reserved():
        raise _NotPlain
    return token


def _value(token: str, values: Mapping[str, Any] | None) -> dict[str, Any]:
    if not values or token not in values:
        raise _NotPlain
    value = values[token]
    if not isinstance(value, dict) or len(value) != 1:
        raise _NotPlain
    return value


def plan(
    expression: str, names: Mapping[str, str] | None, values: Mapping[str, Any] | None
) -> tuple[dict[str, dict[str, Any]], list[str], dict[str, dict[str, Any]]]:
    """The SETs, REMOVEs and ADDs of a plain expression (attribute names resolved); ``_NotPlain``
    for any other."""
    parts = _CLAUSE.split(expression)
    if parts[0].strip():
        raise _NotPlain
    sets: dict[str, dict[str, Any]] = {}
    removes: list[str] = []
    adds: dict[str, dict[str, Any]] = {}
    seen_clauses: set[str] = set()
    targets: list[str] = []
    for keyword, body in zip(parts[1::2], parts[2::2], strict=True):
        clause = keyword.upper()
        if clause == "DELETE" or clause in seen_clauses:
            raise _NotPlain
        seen_clauses.add(clause)
        for piece in body.split(","):
            if clause == "SET" and (matched := _SET.fullmatch(piece)):
                name = _name(matched[1], names)
                sets[name] = _value(matched[2], values)
            elif clause == "REMOVE" and (matched := _REMOVE.fullmatch(piece)):
                name = _name(matched[1], names)
                removes.append(name)
            elif clause == "ADD" and (matched := _ADD.fullmatch(piece)):
                name = _name(matched[1], names)
                adds[name] = _value(matched[2], values)
            else:
                raise _NotPlain
            targets.append(name)
    if not targets or len(set(targets)) != len(targets):
        raise _NotPlain
    return sets, removes, adds


def _index_key_types(table: Any) -> dict[str, str]:
    """Attribute name -> declared type of every key attribute of the table and its indexes."""
    declared = {a["AttributeName"]: a["AttributeType"] for a in table.attr}
    keys = {table.hash_key_attr, table.range_key_attr}
    for index in [*table.global_indexes, *table.indexes]:
        keys.update(part["AttributeName"] for part in index.schema)
    return {name: declared[name] for name in keys if name is not None and name in declared}


def _apply_plain(
    backend: Any,
    table_name: str,
    key: dict[str, Any],
    expression: str,
    names: Mapping[str, str] | None,
    values: Mapping[str, Any] | None,
    condition: str | None,
) -> Any:
    from moto.dynamodb.comparisons import create_condition_expression_parser
    from moto.dynamodb.exceptions import ConditionalCheckFailed, ItemSizeToUpdateTooLarge
    from moto.dynamodb.models.dynamo_type import DynamoType, Item, LimitedSizeDict
    from moto.dynamodb.models.utilities import bytesize

    sets, removes, adds = plan(expression, names, values)
    table = backend.get_table(table_name)
    if table.hash_key_attr not in key or set(key) - {table.hash_key_attr, table.range_key_attr}:
        raise _NotPlain
    if table.range_key_attr is not None and table.range_key_attr not in key:
        raise _NotPlain
    primary = {table.hash_key_attr, table.range_key_attr}
    if primary & {*sets, *removes, *adds}:
        raise _NotPlain
    typed = _index_key_types(table)
    for name, value in sets.items():
        ((kind, raw),) = value.items()
        if (kind in ("S", "B") and raw == "") or (kind in ("SS", "NS", "BS") and not raw):
            raise _NotPlain
        if name in typed and kind != typed[name]:
            raise _NotPlain
    range_value = DynamoType(key[table.range_key_attr]) if table.range_key_attr else None
    item = table.get_item(DynamoType(key[table.hash_key_attr]), range_value)
    if item is None:
        raise _NotPlain
    for name, value in adds.items():
        current = item.attrs.get(name)
        if "N" not in value or (current is not None and current.type != "N"):
            raise _NotPlain
    if condition:
        check = create_condition_expression_parser(
            condition,
            None if names is None else dict(names),
            None if values is None else dict(values),
        ).parse()
        if not check.expr(item):
            raise ConditionalCheckFailed
    new = LimitedSizeDict.__new__(LimitedSizeDict)
    dict.__init__(new, item.attrs)
    for name, value in sets.items():
        dict.__setitem__(new, name, DynamoType(value))
    for name in removes:
        dict.pop(new, name, None)
    for name, value in adds.items():
        # moto's own arithmetic (DynamoType.__add__, from 0 for an absent attribute), as its ADD does.
        current = dict.get(new, name)
        start = DynamoType({"N": "0"}) if current is None else current
        dict.__setitem__(new, name, start + DynamoType(value))
    if LimitedSizeDict.__setitem__ is not dict.__setitem__:  # moto's check, unless size limits replaced it
        size = sum(bytesize(name) + value.size() for name, value in new.items())
        if size > _MOTO_ITEM_LIMIT:
            raise ItemSizeToUpdateTooLarge()
    # A new stored item (copy-on-write, as dynamodb_read_isolation makes moto's updates): a read
    # holding the old one reads it unchanged, and it is the stream record's old image as it is.
    after: Any = Item.__new__(Item)
    after.hash_key, after.range_key, after.attrs = item.hash_key, item.range_key, new
    if range_value is not None:
        table.items[item.hash_key][range_value] = after
    else:
        table.items[item.hash_key] = after
    if table.stream_shard is not None:
        table.stream_shard.add(item, after)
    return after


def _plain_first(
    self: Any,
    table_name: str,
    key: dict[str, Any],
    update_expression: str,
    expression_attribute_names: dict[str, Any],
    expression_attribute_values: dict[str, Any],
    attribute_updates: dict[str, Any] | None = None,
    expected: dict[str, Any] | None = None,
    condition_expression: str | None = None,
    return_values_on_condition_check_failure: str | None = None,
) -> Any:
    """``DynamoDBBackend.update_item``: the plain path, else what ``_FALLBACK`` holds (moto's)."""
    conditioned_old = condition_expression and return_values_on_condition_check_failure
    if update_expression and not attribute_updates and not expected and not conditioned_old:
        try:
            return _apply_plain(
                self,
                table_name,
                key,
                update_expression,
                expression_attribute_names,
                expression_attribute_values,
                condition_expression,
            )
        except _NotPlain:  # outcome: moto applies it, with its own errors
            pass
    return _FALLBACK[0](
        self,
        table_name,
        key,
        update_expression,
        expression_attribute_names,
        expression_attribute_values,
        attribute_updates,
        expected,
        condition_expression,
        return_values_on_condition_check_failure,
    )


def wrap_fallback(marker: str, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
    """Wrap what an update that is not plain goes to (moto's ``update_item``) in ``wrap``, once per
    ``marker`` (``dynamodb_read_isolation``: moto's in-place update made copy-on-write)."""
    install()
    if marker not in _WRAPPED:
        _WRAPPED.add(marker)
        _FALLBACK[0] = wrap(_FALLBACK[0])


def install() -> None:
    """Put the plain path in front of moto's ``DynamoDBBackend.update_item`` (idempotent)."""
    from moto.dynamodb.models import DynamoDBBackend

    if _FALLBACK:
        return
    _FALLBACK.append(DynamoDBBackend.update_item)
    DynamoDBBackend.update_item = functools.wraps(_FALLBACK[0])(_plain_first)  # type: ignore[method-assign]
