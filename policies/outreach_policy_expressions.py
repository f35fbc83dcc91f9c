"""Evaluating the Terraform expressions that decide instances: conditions, try/lookup, for-expressions.

Registry modules decide whether a resource exists and what each instance holds with a small set
of expression shapes: ``count = var.create && var.create_dlq ? 1 : 0``, ``for_each = { for k, v in
var.mappings : k => v if local.create }`` and ``try(each.value.event_source_arn, null)``. This
module parses and evaluates that subset; names (``var.*``, ``local.*``, ``each.*``) come from a
``Scope`` the caller supplies, and anything outside the subset raises ``UnknownValueError`` so that the
caller can fail closed. It has no checkov dependency.
"""

from __future__ import annotations

import re
from typing import Any

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

_RESOURCE_TYPE = re.compile(r"[a-z][a-z0-9]*_[a-z0-9_]+")
_TOKEN = re.compile(
    r"""\s*(?:
    (?P<number>\d+(?:\.\d+)?)
    |(?P<string>"(?:[^"\\$%]|\\.)*")
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
        tokens.append((kind, match.group(kind)))
        position = match.end()
        while position < len(text) and text[position].isspace():
            position += 1
    return tokens


class _Parser:
    def __init__(self, text: str, scope: Scope) -> None:
        self.tokens = _tokens(text)
        self.position = 0
        self.scope = scope
        self.bound: dict[str, Any] = {}
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
                    self.skip_arguments()
                    return result
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

    def list_literal(self) -> Any:
        items: list[Any] = []
        while self.peek() != "]":
            if self.peek() == "for":
                raise UnknownValueError("list for-expressions are not evaluated")
            items.append(plain(self.conditional()))
            if self.peek() == ",":
                self.take(",")
        self.take("]")
        return items

    def object_or_for(self) -> Any:
        if self.peek() == "for":
            return self.for_object()
        result: dict[str, Any] = {}
        while self.peek() != "}":
            key_kind, key = self.take()
            if key_kind == "string":
                key = key[1:-1]
            if self.peek() not in {"=", ":"}:
                raise UnknownValueError("object keys must be plain names or strings")
            self.take()
            result[key] = plain(self.conditional())
            if self.peek() == ",":
                self.take(",")
        self.take("}")
        return result

    def for_object(self) -> Any:
        self.take("for")
        names = [self.take()[1]]
        if self.peek() == ",":
            self.take(",")
            names.append(self.take()[1])
        self.take("in")
        collection = self.conditional()
        self.take(":")
        body_start = self.position
        self.skip_to(("}",))
        body_end = self.position
        self.take("}")
        if self.skipping:
            return None
        items = collection_items(collection)
        result: dict[str, Any] = {}
        for key, item in items:
            bound = dict(zip(names, (key, item) if len(names) == 2 else (item,), strict=True))
            entry_key, entry_value, keep = self.for_body(body_start, body_end, bound)
            if keep:
                result[str(plain(entry_key))] = entry_value
        return result

    def for_body(self, start: int, end: int, bound: dict[str, Any]) -> tuple[Any, Any, bool]:
        saved_position, saved_bound = self.position, self.bound
        self.position, self.bound = start, {**self.bound, **bound}
        try:
            entry_key = self.conditional()
            self.take("=>")
            entry_value = self.conditional()
            keep = True
            if self.peek() == "if":
                self.take("if")
                keep = truth(self.conditional())
            if self.position != end:
                raise UnknownValueError("unsupported for-expression")
            return entry_key, entry_value, keep
        finally:
            self.position, self.bound = saved_position, saved_bound

    def skip_to(self, closing: tuple[str, ...]) -> None:
        depth = 0
        while self.position < len(self.tokens):
            token = self.peek()
            if token in {"(", "[", "{"}:
                depth += 1
            elif token in {")", "]", "}"}:
                if depth == 0 and token in closing:
                    return
                depth -= 1
            self.position += 1
        raise UnknownValueError("unbalanced brackets")


def evaluate_expression(text: str, scope: Scope) -> Any:
    """The value of ``text``; raises ``UnknownValueError`` outside the subset the module describes."""
    try:
        return _Parser(text, scope).parse()
    except (KeyError, IndexError, TypeError) as error:
        raise UnknownValueError(str(error)) from error
