"""The values an evaluated Terraform expression holds, and the operators and lookups on them.

A value is plain data, a ``Lazy`` value resolved only when read, or an ``Opaque`` reference to
another block; anything without a known value raises ``UnknownValueError`` so that the caller can
fail closed. Loaded by plain file name, as checkov loads ``policies/``; it has no checkov dependency.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class UnknownValueError(Exception):
    """The expression is outside the evaluated subset or names something without a known value."""


class Lazy(abc.ABC):
    """A value resolved only when read, so that an attribute path below it is resolved as a whole."""

    @abc.abstractmethod
    def at(self, key: str) -> Any:
        """The value below ``key``, still lazy where it can be."""

    @abc.abstractmethod
    def resolve(self) -> Any:
        """The value itself."""


@dataclass(frozen=True)
class Opaque:
    """A reference to another block (``module.dlq.queue_arn``): kept as text, never compared."""

    text: str


def rendered(value: Any) -> Any:
    """``value`` with lazy parts resolved and references as their text, as checkov would render them."""
    value = plain(value)
    if isinstance(value, Opaque):
        return value.text
    if isinstance(value, dict):
        return {key: rendered(item) for key, item in value.items()}
    if isinstance(value, list):
        return [rendered(item) for item in value]
    return value


def resolved(value: Any) -> Any:
    """``value`` rendered (references as their text), where a part without a known value stays ``Opaque``.

    One unknown leaf (an argument passed an unset variable) then fails only the expression that
    reads it, not every reader of the object around it.
    """
    try:
        value = plain(value)
    except UnknownValueError:
        return Opaque(str(value))
    if isinstance(value, Opaque):
        return value.text
    if isinstance(value, dict):
        return {key: resolved(item) for key, item in value.items()}
    if isinstance(value, list):
        return [resolved(item) for item in value]
    return value


# A scope resolves a root name (``var``, ``local``, ``each``, ``count``) and its first attribute.
Scope = Callable[[str, str], Any]


def plain(value: Any) -> Any:
    """The value, resolved if it was lazy."""
    return plain(value.resolve()) if isinstance(value, Lazy) else value


def collection_items(collection: Any) -> list[tuple[Any, Any]]:
    value = plain(collection)
    if isinstance(value, dict):
        if isinstance(collection, Lazy):
            return [(key, collection.at(key)) for key in value]
        return list(value.items())
    if isinstance(value, list):
        if isinstance(collection, Lazy):
            return [(index, collection.at(str(index))) for index in range(len(value))]
        return list(enumerate(value))
    raise UnknownValueError("for-expression over something that is not a collection")


def attribute(current: Any, key: Any) -> Any:
    if isinstance(current, Opaque):
        return Opaque(f"{current.text}.{key}" if isinstance(key, str) else f"{current.text}[{key}]")
    if isinstance(current, Lazy):
        return current.at(str(key))
    if isinstance(current, dict):
        return current[key]
    if isinstance(current, list) and isinstance(key, int):
        return current[key]
    raise UnknownValueError(f"attribute {key!r} of a value that is not an object")


def short_circuit(operator: str, left: Any) -> bool | None:
    """The result of ``left && ...`` / ``left || ...`` when ``left`` alone decides it."""
    if operator == "&&" and left is False:
        return False
    if operator == "||" and left is True:
        return True
    return None


def truth(value: Any) -> bool:
    value = plain(value)
    if isinstance(value, bool):
        return value
    raise UnknownValueError(f"{value!r} is not a boolean")


def apply_operator(operator: str, left: Any, right: Any) -> Any:
    if isinstance(left, Opaque) or isinstance(right, Opaque):
        raise UnknownValueError("a reference to another block has no value here")
    if operator in {"&&", "||"}:
        if not isinstance(left, bool) or not isinstance(right, bool):
            raise UnknownValueError("logical operator on a non-boolean")
        return (left and right) if operator == "&&" else (left or right)
    if operator == "==":
        return left == right
    if operator == "!=":
        return left != right
    if not all(isinstance(side, int | float) and not isinstance(side, bool) for side in (left, right)):
        raise UnknownValueError("comparison of non-numbers")
    return {">": left > right, "<": left < right, ">=": left >= right, "<=": left <= right}[operator]


def _flatten(value: Any) -> list[Any]:
    flat: list[Any] = []
    for item in plain(value) if isinstance(plain(value), list) else [value]:
        if isinstance(plain(item), list):
            flat.extend(_flatten(item))
        else:
            flat.append(item)
    return flat


def _merge(arguments: list[Any]) -> dict[str, Any]:
    """``merge(a, b, ...)``: later keys win; a lazy argument's entries stay lazy."""
    merged: dict[str, Any] = {}
    for argument in arguments:
        if plain(argument) is None:
            continue
        merged.update(dict(collection_items(argument)) if isinstance(plain(argument), dict) else _not_a_map())
    return merged


def _not_a_map() -> dict[str, Any]:
    raise UnknownValueError("merge() of something that is not a map")


def _one(arguments: list[Any], kinds: type | tuple[type, ...]) -> Any:
    if len(arguments) != 1 or not isinstance(plain(arguments[0]), kinds):
        raise UnknownValueError("unexpected arguments")
    return arguments[0]


def _concat(arguments: list[Any]) -> list[Any]:
    joined: list[Any] = []
    for argument in arguments:
        if not isinstance(plain(argument), list):
            raise UnknownValueError("concat() of something that is not a list")
        joined.extend(item for _index, item in collection_items(argument))
    return joined


def _as_set(arguments: list[Any]) -> list[Any]:
    items = [plain(item) for _index, item in collection_items(_one(arguments, list))]
    if not all(isinstance(item, str | int | float | bool) for item in items):
        raise UnknownValueError("toset() of values that are not scalars")
    return list(dict.fromkeys(items))


def _contains(arguments: list[Any]) -> bool:
    if len(arguments) != 2 or not isinstance(plain(arguments[0]), list):
        raise UnknownValueError("unexpected arguments")
    needle = plain(arguments[1])
    items = [plain(item) for item in plain(arguments[0])]
    if isinstance(needle, Opaque) or any(isinstance(item, Opaque) for item in items):
        raise UnknownValueError("contains() over references to other blocks")
    return needle in items


# Collection functions of Terraform's language that registry modules build for_each from, by name;
# each takes the evaluated arguments and raises UnknownValueError outside its plain use.
COLLECTION_FUNCTIONS: dict[str, Callable[[list[Any]], Any]] = {
    "flatten": lambda arguments: _flatten(_one(arguments, list)),
    "merge": _merge,
    "concat": _concat,
    "toset": _as_set,
    "tolist": lambda arguments: _one(arguments, list),
    "tomap": lambda arguments: _one(arguments, dict),
    "keys": lambda arguments: list(plain(_one(arguments, dict))),
    "values": lambda arguments: [item for _key, item in collection_items(_one(arguments, dict))],
    "contains": _contains,
}
