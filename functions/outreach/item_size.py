"""An item's size as DynamoDB counts it against its limits, never less: names and values, in bytes.

DynamoDB sums the UTF-8 bytes of every attribute name and value, with numbers at about one byte per
two significant digits plus one, binary values at their raw length, null and Boolean at one byte, and
a list or map at 3 bytes plus its elements (the names of a map's entries count like attribute names)
plus one byte per element (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html).
Where the page says "approximately" this counts high: a number's every digit, leading and trailing
zeroes included, and one byte more for the digit pairs a decimal point can split; a set (the page
gives no rule) like a list. So a size here is never under DynamoDB's.

The limits it is measured against: an item of at most 400 KB, names included
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Constraints.html#limits-items),
and a TransactWriteItems of at most 100 actions whose items come to at most 4 MB together
(https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html); DynamoDB
counts KB and MB in 1,024s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

ITEM_LIMIT_BYTES = 400 * 1024
TRANSACTION_LIMIT_BYTES = 4 * 1024 * 1024
TRANSACTION_ACTION_LIMIT = 100

_LIST_OR_MAP_OVERHEAD = 3
_ELEMENT_OVERHEAD = 1


def _utf8(text: str) -> int:
    return len(text.encode("utf-8"))


def _number(text: str) -> int:
    digits = sum(character.isdigit() for character in text)
    return math.ceil(digits / 2) + 2


def value_size(value: Mapping[str, Any]) -> int:
    """The size of one attribute value in DynamoDB's wire form (``{"S": "..."}``, ``{"M": {...}}``)."""
    ((kind, content),) = value.items()
    if kind == "S":
        return _utf8(content)
    if kind == "N":
        return _number(content)
    if kind == "B":
        return len(content)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "M":
        return _LIST_OR_MAP_OVERHEAD + sum(
            _utf8(name) + value_size(element) + _ELEMENT_OVERHEAD for name, element in content.items()
        )
    if kind == "L":
        return _LIST_OR_MAP_OVERHEAD + sum(value_size(element) + _ELEMENT_OVERHEAD for element in content)
    if kind in ("SS", "NS", "BS"):
        single = kind[0]
        return _LIST_OR_MAP_OVERHEAD + sum(
            value_size({single: element}) + _ELEMENT_OVERHEAD for element in content
        )
    raise ValueError(f"not a DynamoDB attribute value type: {kind!r}")


def item_size(item: Mapping[str, Mapping[str, Any]]) -> int:
    """The size of an item in wire form (attribute name -> attribute value), as DynamoDB counts it."""
    return sum(_utf8(name) + value_size(value) for name, value in item.items())
