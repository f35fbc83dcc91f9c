"""A condition expression is parsed once per text and bindings, not again for every write that carries it.

moto reads a ``ConditionExpression`` (and a ``FilterExpression``) by splitting its text into tokens
with a list of regular expressions tried at each position, building a tree of them, putting the
names and values in and turning the tree into operators, and it does so for every action of every
request: twice for each action of a TransactWriteItems (its request checks, then the condition
itself). The conditions the task store writes are a handful of texts carried by thousands of writes:
an operator's cancel of 7,200 emails parsed the same condition, with the same names and values, 14,400
times, a fifth of the embedded AWS's time for the cancel.

The parse depends on the text, the names and the values alone, and what it returns is only read (an
operator evaluated on an item; the placeholders found, which moto's request checks compare with those
given). Here:

- the tokens of each text are remembered (the last 4,096 texts) and handed out as fresh tokens, so a
  text carried with other values (a lease, a time read) is tokenised once;
- the whole parse of a text with the names and values it refers to is remembered (the last 4,096),
  operator and placeholders found, and handed to each parser that asks again as moto's parse would
  have left it (a write's other values, those of its update, are not part of the parse).

A text, a name or a value that does not parse raises as it always did, every time: a failure is never
remembered.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Any

_REMEMBERED = 4096
_PATCHED = "__outreach_remembered_condition_parses__"
# (text, names, values) -> (operator, names found, values found), least recently used first.
_PARSES: OrderedDict[tuple[str, str, str], tuple[Any, tuple[str, ...], tuple[str, ...]]] = OrderedDict()
_LOCK = threading.Lock()
# moto's own methods, by name, as they were before the install (for the tests to compare with).
ORIGINAL: dict[str, Any] = {}
# A name or value placeholder, as moto's tokeniser reads one (its operand characters, ``A-z`` range
# included), so a key names every binding the parse can look up.
_PLACEHOLDER = re.compile(r"[#:][A-z0-9\-_]+")


def _plain(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return ["bytes", bytes(value).hex()]
    raise TypeError(f"not plain data: {type(value).__name__}")


def _key(text: str, names: Any, values: Any) -> tuple[str, str, str] | None:
    """The text with the names and values it refers to (a cache key); None when one is missing or
    the bindings are not plain data (moto parses it, and raises what it raises)."""
    used = set(_PLACEHOLDER.findall(text))
    try:
        named = {name: names[name] for name in used if name.startswith("#")}
        valued = {name: values[name] for name in used if name.startswith(":")}
        return text, json.dumps(named, sort_keys=True), json.dumps(valued, sort_keys=True, default=_plain)
    except (KeyError, TypeError, ValueError):  # outcome: None, so moto's own parse answers
        return None


def _lexing(lex: Callable[[Any], deque[Any]]) -> Callable[[Any], deque[Any]]:
    """moto's tokeniser ``lex``, each text's tokens remembered and handed out fresh."""
    from moto.dynamodb.comparisons import ConditionExpressionParser

    node: Any = ConditionExpressionParser.Node

    @functools.lru_cache(maxsize=_REMEMBERED)
    def tokens(text: str) -> tuple[tuple[Any, ...], ...]:
        parser = ConditionExpressionParser(text, {}, {})
        return tuple((n.nonterminal, n.kind, n.text, n.value) for n in lex(parser))

    @functools.wraps(lex)
    def lexed(self: Any) -> deque[Any]:
        if not isinstance(self.condition_expression, str):
            return lex(self)
        return deque(node(*token, []) for token in tokens(self.condition_expression))

    return lexed


def _remembering(parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """moto's ``parse``, each parse of a text with its bindings remembered (``_PARSES``)."""

    @functools.wraps(parse)
    def remembered(self: Any) -> Any:
        if not isinstance(self.condition_expression, str):
            return parse(self)
        key = _key(
            self.condition_expression, self.expression_attribute_names, self.expression_attribute_values
        )
        if key is None:
            return parse(self)
        with _LOCK:
            known = _PARSES.get(key)
            if known is not None:
                _PARSES.move_to_end(key)
        if known is None:
            op = parse(self)  # raises for what does not parse, every time
            known = (op, tuple(self.expr_attr_names_found), tuple(self.expr_attr_values_found))
            with _LOCK:
                _PARSES[key] = known
                while len(_PARSES) > _REMEMBERED:
                    _PARSES.popitem(last=False)
            return op
        op, names_found, values_found = known
        self.expr_attr_names_found.extend(names_found)
        self.expr_attr_values_found.extend(values_found)
        return op

    setattr(remembered, _PATCHED, True)
    return remembered


def remember_condition_parses() -> None:
    """Make moto's condition parser tokenise each text and parse each text with its bindings once
    (idempotent)."""
    from moto.dynamodb.comparisons import ConditionExpressionParser

    if getattr(ConditionExpressionParser.parse, _PATCHED, False):
        return
    ORIGINAL.update(
        lex=ConditionExpressionParser._lex_condition_expression, parse=ConditionExpressionParser.parse
    )
    ConditionExpressionParser._lex_condition_expression = _lexing(ORIGINAL["lex"])  # type: ignore[method-assign,assignment]
    ConditionExpressionParser.parse = _remembering(ORIGINAL["parse"])  # type: ignore[method-assign,assignment]
