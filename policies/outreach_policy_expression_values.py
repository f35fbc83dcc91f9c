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
