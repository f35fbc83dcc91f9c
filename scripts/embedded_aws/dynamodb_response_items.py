"""DynamoDB items in a response written out directly, not walked member by member against the model.

moto serialises every response through its generic serialiser, which walks the botocore output
shape: each attribute of each item is an ``AttributeValue`` structure of ten members (S, N, B, SS,
NS, BS, M, L, NULL, BOOL), and for each member it builds a picker context, tries four alias
providers and two spellings of the name, then recurses. A Query page of a thousand task rows of
twenty-odd attributes is a quarter of a million such steps: on this machine about 6 ms a row, so an
operator's ``campaign cancel``, which reads its 7,200 Pending emails with their rows, spent most of
its time here before it wrote anything.

The wire format of an attribute value is the one documented for ``AttributeValue``: an object with
exactly one member named by the data type, a string for S and N, base64 text for B, arrays for the
sets and L, an object for M, a Boolean for NULL and BOOL
(https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_AttributeValue.html). Here a
map of attribute values (an item, a key: ``AttributeMap``, ``Key`` and the like) of the ``dynamodb``
service is written in that form in one recursive pass, producing what moto's walk produces. Any
value that is not of the plain shape moto's backend hands over (one member, of its Python type)
sends that whole map back to moto's walk, which serialises it as it always did.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

_SERVICE = "dynamodb"
_VALUE_SHAPE = "AttributeValue"
_ORIGINAL: list[Callable[..., None]] = []


class _NotPlain(Exception):
    """A value of a form this module does not write: moto's walk serialises the map."""


def _blob(value: Any) -> str:
    if not isinstance(value, bytes):
        raise _NotPlain
    return base64.b64encode(value).strip().decode("utf-8")


def _strings(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(type(v) is str for v in value):
        raise _NotPlain
    return list(value)


def attribute_value(value: Any) -> dict[str, Any]:
    """One attribute value as moto's serialiser writes it (``_NotPlain`` for any other form)."""
    if type(value) is not dict or len(value) != 1:
        raise _NotPlain
    ((kind, raw),) = value.items()
    if kind in ("S", "N") and type(raw) is str:
        return {kind: raw}
    if kind in ("BOOL", "NULL") and type(raw) is bool:
        return {kind: raw}
    if kind == "M" and type(raw) is dict:
        return {"M": attribute_map(raw)}
    if kind == "L" and type(raw) is list:
        return {"L": [attribute_value(element) for element in raw]}
    if kind in ("SS", "NS"):
        return {kind: _strings(raw)}
    if kind == "B":
        return {"B": _blob(raw)}
    if kind == "BS" and isinstance(raw, list):
        return {"BS": [_blob(element) for element in raw]}
    raise _NotPlain


def attribute_map(value: Any) -> dict[str, Any]:
    """A map of attribute names to values (an item, a key), written as moto's serialiser writes it."""
    if type(value) is not dict or not all(type(name) is str for name in value):
        raise _NotPlain
    return {name: attribute_value(element) for name, element in value.items()}


def _serialize_type_map(self: Any, serialized: Any, value: Any, shape: Any, key: str) -> None:
    member = getattr(shape, "value", None)
    if getattr(member, "name", None) == _VALUE_SHAPE and self.service_model.service_name == _SERVICE:
        try:
            written = attribute_map(value)
        except _NotPlain:  # outcome: moto's own walk serialises this map, as it always did
            pass
        else:
            self._default_serialize(serialized, written, shape, key)
            return
    _ORIGINAL[0](self, serialized, value, shape, key)


def write_dynamodb_items_directly() -> None:
    """Install the direct form for DynamoDB's maps of attribute values in moto's JSON serialiser
    (idempotent)."""
    from moto.core.serialize import BaseJSONSerializer

    if _ORIGINAL:
        return
    _ORIGINAL.append(BaseJSONSerializer._serialize_type_map)
    BaseJSONSerializer._serialize_type_map = _serialize_type_map  # type: ignore[method-assign]
