"""Evaluating the Terraform expressions that decide instances: conditions, try/lookup, for-expressions.

Registry modules decide whether a resource exists and what each instance holds with a small set
of expression shapes: ``count = var.create && var.create_dlq ? 1 : 0``, ``for_each = { for k, v in
var.mappings : k => v if local.create }``, ``try(each.value.event_source_arn, null)`` and locals
such as ``flatten([for index, rule in var.rules : [for t in var.targets[index] : merge(t, {...})]])``.
This module parses and evaluates that subset (the collection functions live in
``outreach_policy_expression_values.COLLECTION_FUNCTIONS``); names (``var.*``, ``local.*``,
``each.*``) come from a ``Scope`` the caller supplies, a ``dynamic`` block's iterator from ``bound``,
and anything outside the subset raises ``UnknownValueError`` so that the caller can fail closed. It
has no checkov dependency.
"""

from __future__ import annotations

import re
from typing import Any

from outreach_policy_expression_values import (
    COLLECTION_FUNCTIONS as _COLLECTION_FUNCTIONS,
)
from outreach_policy_expression_values import (
    Lazy,
    Opaque,
    Scope,
    UnknownValueError,
    apply_operator,
    attribute,
    collection_items,
    plain,
    rendered,
    short_circuit,
    truth,
)

__all__ = [
    "Lazy",
    "Opaque",
    "Scope",
    "UnknownValueError",
    "evaluate_expression",
    "plain",
    "rendered",
]

# The value of a for-expression's iteration name while its collection is unknown: reading it is unknown.
_UNBOUND: Any = object()
_RESOURCE_TYPE = re.compile(r"[a-z][a-z0-9]*_[a-z0-9_]+")
_TOKEN = re.compile(
    r"""\s*(?:
    (?P<number>\d+(?:\.\d+)?)
    |(?P<string>"(?:[^"\\$%]|\\.)*")
    |(?P<template>")
    |(?P<name>[A-Za-z_][\w-]*)
    |(?P<op>=>|==|!=|>=|<=|&&|\|\||[!?:.,()\[\]{}<>=+\-*/%])
    )""",
    re.VERBOSE,
)


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    text = text.strip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise UnknownValueError(f"cannot read {text[position : position + 20]!r}")
        kind = match.lastgroup or ""
        if kind == "template":
            end = _template_end(text, match.start("template"))
            tokens.append((kind, text[match.start("template") : end]))
            position = end
        else:
            tokens.append((kind, match.group(kind)))
            position = match.end()
        while position < len(text) and text[position].isspace():
            position += 1
    return tokens


def _template_end(text: str, start: int) -> int:
    """The end of a quoted template starting at ``start`` (``${...}`` and strings inside it skipped)."""
    position, depth = start + 1, 0
    while position < len(text):
        char = text[position]
        if char == "\\":
            position += 2
            continue
        if depth == 0 and char == '"':
            return position + 1
        if char in "$%" and text[position + 1 : position + 2] == "{":
            depth += 1
            position += 2
            continue
        if depth and char == '"':
            position = _template_end(text, position)
            continue
        if depth and char == "{":
            depth += 1
        elif depth and char == "}":
            depth -= 1
        position += 1
    raise UnknownValueError("unterminated string")


def _template_parts(body: str) -> list[tuple[bool, str]]:
    """A template's literal text and ``${...}`` expressions, in order (``True`` for an expression)."""
    parts: list[tuple[bool, str]] = []
    position, start = 0, 0
    while position < len(body):
        if body[position] == "\\":
            position += 2
            continue
        if body[position] == "%" and body[position + 1 : position + 2] == "{":
            raise UnknownValueError("template directives are not evaluated")
        if body[position] == "$" and body[position + 1 : position + 2] == "{":
            parts.append((False, body[start:position]))
            depth, cursor = 1, position + 2
            while cursor < len(body) and depth:
                if body[cursor] == '"':
                    cursor = _template_end(body, cursor)
                    continue
                depth += {"{": 1, "}": -1}.get(body[cursor], 0)
                cursor += 1
            parts.append((True, body[position + 2 : cursor - 1]))
            position = start = cursor
            continue
        position += 1
    parts.append((False, body[start:]))
    return parts


class _Parser:
    def __init__(self, text: str, scope: Scope, bound: dict[str, Any] | None = None) -> None:
        self.tokens = _tokens(text)
        self.position = 0
        self.scope = scope
        self.bound: dict[str, Any] = dict(bound or {})
        # While above zero the parser only moves past an operand whose value does not matter
        # (the untaken branch of a conditional, the right side of a decided && or ||).
        self.skipping = 0

    def peek(self, offset: int = 0) -> str:
        index = self.position + offset
        return self.tokens[index][1] if index < len(self.tokens) else ""

    def take(self, expected: str | None = None) -> tuple[str, str]:
        if self.position >= len(self.tokens):
            raise UnknownValueError("unexpected end of expression")
        token = self.tokens[self.position]
        if expected is not None and token[1] != expected:
            raise UnknownValueError(f"expected {expected!r}, found {token[1]!r}")
        self.position += 1
        return token

    def parse(self) -> Any:
        result = self.conditional()
        if self.position != len(self.tokens):
            raise UnknownValueError(f"unexpected {self.peek()!r}")
        return result

    def conditional(self) -> Any:
        condition = self.binary(0)
        if self.peek() != "?":
            return condition
        self.take("?")
        chosen = None if self.skipping else truth(condition)
        when_true = self.operand(skip=chosen is False)
        self.take(":")
        when_false = self.operand(skip=chosen is True)
        return None if chosen is None else (when_true if chosen else when_false)

    def operand(self, *, skip: bool) -> Any:
        """The next conditional operand, evaluated or, with ``skip``, only moved past."""
        if not skip:
            return self.conditional()
        self.skipping += 1
        try:
            self.conditional()
        finally:
            self.skipping -= 1
        return None

    _LEVELS: tuple[tuple[str, ...], ...] = (("||",), ("&&",), ("==", "!="), (">", "<", ">=", "<="))

    def binary(self, level: int) -> Any:
        if level == len(self._LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in self._LEVELS[level]:
            operator = self.take()[1]
            if self.skipping:
                self.binary(level + 1)
                continue
            decided = short_circuit(operator, plain(left))
            if decided is not None:
                self.skipping += 1
                try:
                    self.binary(level + 1)
                finally:
                    self.skipping -= 1
                left = decided
                continue
            right = self.binary(level + 1)
            left = apply_operator(operator, plain(left), plain(right))
        return left

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            operand = self.unary()
            return None if self.skipping else not truth(operand)
        if self.peek() == "-":
            self.take()
            number = plain(self.unary())
            if self.skipping:
                return None
            if not isinstance(number, int | float) or isinstance(number, bool):
                raise UnknownValueError("negation of a non-number")
            return -number
        return self.postfix(self.primary())

    def postfix(self, current: Any) -> Any:
        while self.peek() in {".", "["}:
            if self.take()[1] == ".":
                key: Any = self.take()[1]
            else:
                key = plain(self.conditional())
                self.take("]")
            current = None if self.skipping else attribute(current, key)
        return current

    def primary(self) -> Any:
        kind, text = self.take()
        if kind == "number":
            return float(text) if "." in text else int(text)
        if kind == "string":
            return text[1:-1].replace('\\"', '"')
        if kind == "template":
            return None if self.skipping else self.template(text)
        if text == "(":
            inner = self.conditional()
            self.take(")")
            return inner
        if text == "{":
            return self.object_or_for()
        if text == "[":
            return self.list_literal()
        if kind != "name":
            raise UnknownValueError(f"unexpected {text!r}")
        if text in {"true", "false"}:
            return text == "true"
        if text == "null":
            return None
        if self.peek() == "(":
            return self.call(text)
        if text in self.bound:
            if self.bound[text] is _UNBOUND and not self.skipping:
                raise UnknownValueError(f"{text} has no value outside its for-expression")
            return self.bound[text]
        if self.skipping:
            return None
        if text in {"var", "local", "each", "count"} and self.peek() == ".":
            self.take(".")
            name = self.take()[1]
            return None if self.skipping else self.scope(text, name)
        if self.peek() == "." and (text in {"module", "data"} or _RESOURCE_TYPE.fullmatch(text)):
            return Opaque(text)
        raise UnknownValueError(f"{text} is not evaluated")

    def call(self, function: str) -> Any:
        self.take("(")
        if function == "try" and not self.skipping:
            while True:
                start = self.position
                try:
                    result = self.conditional()
                    # A missing attribute reads as null here, where Terraform raises an error that
                    # try() catches: a null (alone or as a list item) moves on to the next argument.
                    if self.peek() != "," or not _holds_null(result):
                        self.skip_arguments()
                        return result
                    self.position = start
                    self.skip_argument()
                    self.take(",")
                    continue
                except (UnknownValueError, KeyError, IndexError):
                    self.position = start
                    self.skip_argument()
                    if self.peek() == ")":
                        raise UnknownValueError("no argument of try() evaluates") from None
                    self.take(",")
        arguments = [self.conditional()]
        while self.peek() == ",":
            self.take(",")
            arguments.append(self.conditional())
        self.take(")")
        if self.skipping:
            return None
        if function == "lookup" and len(arguments) in (2, 3):
            mapping, key = plain(arguments[0]), plain(arguments[1])
            if isinstance(mapping, dict) and key in mapping:
                return attribute(arguments[0], key)
            if isinstance(mapping, dict) and len(arguments) == 3:
                return arguments[2]
        if function == "length" and len(arguments) == 1 and isinstance(plain(arguments[0]), dict | list):
            return len(plain(arguments[0]))
        if function in _COLLECTION_FUNCTIONS:
            return _COLLECTION_FUNCTIONS[function](arguments)
        if function == "jsonencode" and len(arguments) == 1:
            return plain(arguments[0])  # checkov renders jsonencode({...}) as the object itself
        if function == "coalesce" and arguments:
            for argument in arguments:
                if plain(argument) not in (None, ""):
                    return argument
            raise UnknownValueError("coalesce() of nothing but null")
        raise UnknownValueError(f"{function}() is not evaluated")

    def skip_argument(self) -> None:
        depth = 0
        while self.position < len(self.tokens):
            token = self.peek()
            if token in {"(", "[", "{"}:
                depth += 1
            elif token in {")", "]", "}"}:
                if depth == 0:
                    return
                depth -= 1
            elif token == "," and depth == 0:
                return
            self.position += 1

    def skip_arguments(self) -> None:
        while self.peek() == ",":
            self.take(",")
            self.skip_argument()
        self.take(")")

    def template(self, text: str) -> Any:
        """A quoted template: its text when every ``${...}`` has a scalar value, else kept opaque."""
        pieces: list[str] = []
        for is_expression, part in _template_parts(text[1:-1]):
            if not is_expression:
                pieces.append(part.replace('\\"', '"'))
                continue
            try:
                value = plain(_Parser(part, self.scope, self.bound).parse())
            except (UnknownValueError, KeyError, IndexError, TypeError):
                return Opaque(text)
            if isinstance(value, bool):
                pieces.append("true" if value else "false")
            elif isinstance(value, str | int | float):
                pieces.append(str(value))
            else:
                return Opaque(text)
        return "".join(pieces)

    def list_literal(self) -> Any:
        items: list[Any] = []
        while self.peek() != "]":
            if self.peek() == "for":
                return self.for_expression("]")
            items.append(self.conditional())
            if self.peek() == ",":
                self.take(",")
        self.take("]")
        return items

    def object_or_for(self) -> Any:
        if self.peek() == "for":
            return self.for_expression("}")
        result: dict[str, Any] = {}
        while self.peek() != "}":
            key_kind, key = self.take()
            if key_kind == "string":
                key = key[1:-1]
            if self.peek() not in {"=", ":"}:
                raise UnknownValueError("object keys must be plain names or strings")
            self.take()
            result[key] = self.conditional()  # kept lazy: an unknown value fails only where read
            if self.peek() == ",":
                self.take(",")
        self.take("}")
        return result

    def for_expression(self, closing: str) -> Any:
        """``{ for k, v in c : k => v if cond }`` (``closing`` ``}``) or ``[ for v in c : v if cond ]``."""
        self.take("for")
        names = [self.take()[1]]
        if self.peek() == ",":
            self.take(",")
            names.append(self.take()[1])
        self.take("in")
        collection_start = self.position
        try:
            evaluated = self.conditional()
            collection: Any = [] if self.skipping else collection_items(evaluated)
            self.take(":")
        except (UnknownValueError, KeyError, IndexError, TypeError) as error:
            collection = error if isinstance(error, UnknownValueError) else UnknownValueError(str(error))
            self.position = collection_start
            self.skip_to((closing,), stop=":")
            self.take(":")
        body_start = self.position
        self.skip_to((closing,))
        body_end = self.position
        self.take(closing)
        if self.skipping:
            return None
        empty: Any = {} if closing == "}" else []
        if isinstance(collection, UnknownValueError):
            # The collection is unknown, but a condition that reads none of the iteration names and
            # is false (``if var.create``) leaves the result empty whatever the collection holds.
            unbound = dict.fromkeys(names, _UNBOUND)
            if self.condition_alone(body_start, body_end, unbound) is False:
                return empty
            raise collection
        result: Any = empty
        for key, item in collection:
            bound = dict(zip(names, (key, item) if len(names) == 2 else (item,), strict=True))
            entry_key, entry_value, keep = self.for_body(body_start, body_end, bound, closing == "}")
            if not keep:
                continue
            if closing == "}":
                result[str(plain(entry_key))] = entry_value
            else:
                result.append(entry_value)
        return result

    def condition_alone(self, start: int, end: int, bound: dict[str, Any]) -> bool | None:
        """The value of a for-expression's ``if`` condition on its own (``None`` when unknown or absent)."""
        saved_position, saved_bound = self.position, self.bound
        self.position, self.bound = start, {**self.bound, **bound}
        try:
            self.skip_to(("}", "]"), stop="if")
            if self.peek() != "if" or self.position >= end:
                return None
            self.take("if")
            return truth(self.conditional())
        except UnknownValueError:
            return None
        finally:
            self.position, self.bound = saved_position, saved_bound

    def for_body(self, start: int, end: int, bound: dict[str, Any], keyed: bool) -> tuple[Any, Any, bool]:
        """One entry of a for-expression; its ``if`` condition is read first, as Terraform does."""
        saved_position, saved_bound = self.position, self.bound
        self.position, self.bound = start, {**self.bound, **bound}
        try:
            self.skip_to(("}", "]"), stop="if")
            if self.peek() == "if" and self.position < end:
                self.take("if")
                if not truth(self.conditional()):
                    return None, None, False
            if self.position != end:
                raise UnknownValueError("unsupported for-expression")
            self.position = start
            entry_key = None
            if keyed:
                entry_key = self.conditional()
                self.take("=>")
            entry_value = self.conditional()
            return entry_key, entry_value, True
        finally:
            self.position, self.bound = saved_position, saved_bound

    def skip_to(self, closing: tuple[str, ...], stop: str | None = None) -> None:
        """To the closing bracket of the current level, or to ``stop`` at this level when it comes first."""
        depth = 0
        while self.position < len(self.tokens):
            token = self.peek()
            if depth == 0 and stop is not None and token == stop:
                return
            if token in {"(", "[", "{"}:
                depth += 1
            elif token in {")", "]", "}"}:
                if depth == 0 and token in closing:
                    return
                depth -= 1
            self.position += 1
        raise UnknownValueError("unbalanced brackets")


def _holds_null(value: Any) -> bool:
    value = rendered(value)
    return value is None or (isinstance(value, list) and any(item is None for item in value))


def evaluate_expression(text: str, scope: Scope, bound: dict[str, Any] | None = None) -> Any:
    """The value of ``text``; raises ``UnknownValueError`` outside the subset the module describes.

    ``bound`` names values by plain identifier, as a ``dynamic`` block's iterator
    (``source_parameters`` for ``source_parameters.value.batch_size``).
    """
    try:
        return _Parser(text, scope, bound).parse()
    except (KeyError, IndexError, TypeError) as error:
        raise UnknownValueError(str(error)) from error
