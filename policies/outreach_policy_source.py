"""Reading Terraform source text where checkov's rendering stops: block bodies and attribute expressions.

checkov renders plain variables, locals and tfvars, but not every expression: an attribute of an
object variable whose value comes from an ``optional(type, default)`` type constraint renders as
``{}``, and a ``module.<name>[0].<output>`` reference can stay unrendered. The policies then go
back to the source: this module finds the expression text of an attribute path inside a block
(``destination_config.on_failure.destination_arn``, ``redrive_policy.maxReceiveCount`` inside a
``jsonencode({...})``, ``scraper.timeout_seconds`` inside a module call's object argument) and the
``optional()`` default of an object variable's attribute. ``SourceFiles`` is the one place that
reads a file, each once per scan. It has no checkov dependency.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_IDENTIFIER = re.compile(r'"?([A-Za-z_][\w-]*)"?')
_OPTIONAL_DEFAULT = (
    r"\b{key}\s*=\s*optional\(\s*[\w()]+\s*,\s*(\"(?:[^\"\\]|\\.)*\"|-?\d+(?:\.\d+)?|true|false|null)\s*\)"
)


class SourceFiles:
    """The Terraform files one scan reads, each read once; a block is addressed by file and lines."""

    def __init__(self) -> None:
        self._lines: dict[str, list[str]] = {}
        self._locals: dict[str, dict[str, str]] = {}

    def lines(self, path: str) -> list[str]:
        if path not in self._lines:
            try:
                with open(path, encoding="utf-8") as handle:
                    self._lines[path] = handle.read().splitlines()
            except OSError:
                self._lines[path] = []
        return self._lines[path]

    def local_expression(self, path: str, name: str) -> str | None:
        """The expression of ``local.<name>`` in a ``locals`` block of file ``path``.

        checkov keeps no line numbers on its ``locals`` nodes, so the file's ``locals`` blocks are read.
        """
        if path not in self._locals:
            found: dict[str, str] = {}
            text = "\n".join(self.lines(path))
            for header in re.finditer(r"^\s*locals\s*\{", text, re.MULTILINE):
                scanner = _Scanner(text)
                scanner.pos = header.end()
                scanner.skip_until_close("}")
                for key, entry in parse_body(text[header.end() : scanner.pos - 1]).items():
                    if entry.kind == "attribute":
                        found.setdefault(key, entry.text)
            self._locals[path] = found
        return self._locals[path].get(name)

    def block_body(self, path: str, start: object, end: object) -> str | None:
        """The body of the block on lines ``start..end`` (1-based, inclusive) of ``path``."""
        lines = self.lines(path)
        if not lines or not isinstance(start, int) or not isinstance(end, int):
            return None
        return block_body("\n".join(lines[start - 1 : end]))


@dataclass(frozen=True)
class Entry:
    kind: str  # "attribute" or "block"
    text: str  # the expression, or the body between the block's braces
    # A ``dynamic "<name>"`` block is listed under its name with its ``content`` body and the
    # expression that decides how many blocks it generates.
    for_each: str | None = None


@dataclass(frozen=True)
class Located:
    """Where a path ended: at an expression (with the segments left below it) or nowhere."""

    expression: str | None
    remaining: tuple[str, ...]
    matched: int


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def peek(self, offset: int = 0) -> str:
        index = self.pos + offset
        return self.text[index] if index < len(self.text) else ""

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def skip_space_and_comments(self, newlines: bool) -> None:
        while not self.at_end():
            char = self.peek()
            if char in " \t\r," or (newlines and char == "\n"):
                self.pos += 1
            elif char == "#" or (char == "/" and self.peek(1) == "/"):
                self.skip_line_comment()
            elif char == "/" and self.peek(1) == "*":
                end = self.text.find("*/", self.pos + 2)
                self.pos = len(self.text) if end < 0 else end + 2
            else:
                return

    def skip_line_comment(self) -> None:
        end = self.text.find("\n", self.pos)
        self.pos = len(self.text) if end < 0 else end

    def skip_string(self) -> None:
        """From an opening quote to after its closing quote, including nested ``${...}``."""
        self.pos += 1
        while not self.at_end():
            char = self.peek()
            if char == "\\":
                self.pos += 2
            elif char == '"':
                self.pos += 1
                return
            elif char in "$%" and self.peek(1) == "{":
                self.pos += 2
                self.skip_until_close("}")
            else:
                self.pos += 1

    def skip_heredoc(self) -> None:
        match = re.match(r"<<-?([A-Za-z_]\w*)[^\n]*\n", self.text[self.pos :])
        if match is None:
            self.pos += 2
            return
        marker = match.group(1)
        self.pos += match.end()
        while not self.at_end():
            end = self.text.find("\n", self.pos)
            line = self.text[self.pos : len(self.text) if end < 0 else end]
            self.pos = len(self.text) if end < 0 else end + 1
            if line.strip() == marker:
                return

    def skip_until_close(self, closing: str) -> None:
        """Past the bracket closing the one just opened (strings, heredocs and nesting respected)."""
        pairs = {"{": "}", "(": ")", "[": "]"}
        stack = [closing]
        while not self.at_end() and stack:
            char = self.peek()
            if char == '"':
                self.skip_string()
            elif char == "<" and self.peek(1) == "<":
                self.skip_heredoc()
            elif char == "#" or (char == "/" and self.peek(1) == "/"):
                self.skip_line_comment()
            elif char in pairs:
                stack.append(pairs[char])
                self.pos += 1
            elif char == stack[-1]:
                stack.pop()
                self.pos += 1
            else:
                self.pos += 1

    def read_expression(self) -> str:
        """An attribute's expression: up to a newline or comma outside brackets."""
        start = self.pos
        pairs = {"{": "}", "(": ")", "[": "]"}
        while not self.at_end():
            char = self.peek()
            if char in "\n,}" or char == "#" or (char == "/" and self.peek(1) in "/*"):
                break
            if char == '"':
                self.skip_string()
            elif char == "<" and self.peek(1) == "<":
                self.skip_heredoc()
                break
            elif char in pairs:
                self.pos += 1
                self.skip_until_close(pairs[char])
            else:
                self.pos += 1
        return self.text[start : self.pos].strip()


def parse_body(text: str) -> dict[str, Entry]:
    """Attributes and blocks at the top level of a block body or object literal (first one wins)."""
    entries: dict[str, Entry] = {}
    for key, entry in body_items(text):
        entries.setdefault(key, entry)
    return entries


def repeated_blocks(text: str) -> set[str]:
    """Names of the blocks written more than once at the top level of a block body (``filter``)."""
    names = [key for key, entry in body_items(text) if entry.kind == "block"]
    return {name for name in names if names.count(name) > 1}


def body_items(text: str) -> Iterator[tuple[str, Entry]]:
    """Attributes and blocks at the top level of a block body or object literal, in order."""
    scanner = _Scanner(text)
    while True:
        scanner.skip_space_and_comments(newlines=True)
        if scanner.at_end():
            return
        match = _IDENTIFIER.match(text, scanner.pos)
        if match is None:
            # Not a key (a stray token, a closing brace): move past it.
            if scanner.peek() in "{([":
                opening = scanner.peek()
                scanner.pos += 1
                scanner.skip_until_close({"{": "}", "(": ")", "[": "]"}[opening])
            elif scanner.peek() == '"':
                scanner.skip_string()
            else:
                scanner.pos += 1
            continue
        key = match.group(1)
        scanner.pos = match.end()
        scanner.skip_space_and_comments(newlines=False)
        if scanner.peek() in ("=", ":") and scanner.peek(1) != "=":
            scanner.pos += 1
            scanner.skip_space_and_comments(newlines=False)
            yield key, Entry("attribute", scanner.read_expression())
            continue
        labels: list[str] = []
        while scanner.peek() == '"' or (_IDENTIFIER.match(text, scanner.pos) and scanner.peek() != "{"):
            label = _IDENTIFIER.match(text, scanner.pos)
            if label is not None:
                labels.append(label.group(1))
            if scanner.peek() == '"':
                scanner.skip_string()
            elif label is not None:
                scanner.pos = label.end()
            scanner.skip_space_and_comments(newlines=False)
        if scanner.peek() == "{":
            scanner.pos += 1
            body_start = scanner.pos
            scanner.skip_until_close("}")
            body = text[body_start : scanner.pos - 1]
            if key == "dynamic" and labels:
                inner = parse_body(body)
                content = inner.get("content")
                generator = inner.get("for_each")
                yield (
                    labels[0],
                    Entry(
                        "block",
                        content.text if content is not None else "",
                        generator.text if generator is not None else None,
                    ),
                )
            else:
                yield key, Entry("block", body)
        else:
            scanner.skip_line_comment()


def object_body(expression: str) -> str | None:
    """The inside of an object literal, also when wrapped in ``jsonencode(...)``."""
    text = expression.strip()
    wrapped = re.fullmatch(r"jsonencode\s*\((.*)\)", text, re.DOTALL)
    if wrapped is not None:
        text = wrapped.group(1).strip()
    if not text.startswith("{"):
        return None
    scanner = _Scanner(text)
    scanner.pos = 1
    scanner.skip_until_close("}")
    if scanner.pos != len(text):
        return None
    return text[1:-1]


def block_body(block_text: str) -> str:
    """The body of a block given its full text (header line to closing brace)."""
    start = block_text.find("{")
    end = block_text.rfind("}")
    return block_text[start + 1 : end] if 0 <= start < end else ""


def locate(body: str, path: tuple[str, ...] | list[str]) -> Located:
    """Follow ``path`` through blocks and object literals of a block body."""
    entries = parse_body(body)
    for index, segment in enumerate(path):
        entry = entries.get(segment)
        if entry is None:
            return Located(None, (), index)
        rest = tuple(path[index + 1 :])
        if entry.kind == "block":
            entries = parse_body(entry.text)
            continue
        if not rest:
            return Located(entry.text, (), index + 1)
        inner = object_body(entry.text)
        if inner is None:
            return Located(entry.text, rest, index + 1)
        entries = parse_body(inner)
    return Located(None, (), len(path))


def conditional_branches(expression: str) -> tuple[str, str] | None:
    """The two results of a top-level ``condition ? a : b`` expression (``None`` for anything else)."""
    parts = conditional_parts(expression)
    return None if parts is None else (parts[1], parts[2])


def conditional_parts(expression: str) -> tuple[str, str, str] | None:
    """Condition and results of a top-level ``condition ? a : b`` expression (``None`` for anything else)."""
    scanner = _Scanner(expression.strip())
    pairs = {"{": "}", "(": ")", "[": "]"}
    question = -1
    while not scanner.at_end():
        char = scanner.peek()
        if char == '"':
            scanner.skip_string()
            continue
        if char in pairs:
            scanner.pos += 1
            scanner.skip_until_close(pairs[char])
            continue
        if char == "?" and question < 0:
            question = scanner.pos
        elif char == ":" and question >= 0:
            text = scanner.text
            return (
                text[:question].strip(),
                text[question + 1 : scanner.pos].strip(),
                text[scanner.pos + 1 :].strip(),
            )
        scanner.pos += 1
    return None


def optional_default(type_expression: str, key: str) -> tuple[bool, object]:
    """``(True, value)`` when ``key`` of an object type is ``optional(type, <literal>)``."""
    match = re.search(_OPTIONAL_DEFAULT.format(key=re.escape(key)), type_expression)
    if match is None:
        return False, None
    return True, literal(match.group(1))


def literal(text: str) -> object:
    """A scalar HCL literal as Python (``None`` for ``null`` and for anything not a literal)."""
    text = text.strip()
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"-?\d+\.\d+", text):
        return float(text)
    if text in {"true", "false"}:
        return text == "true"
    if re.fullmatch(r'"(?:[^"\\$%]|\\.)*"', text):
        return text[1:-1].replace('\\"', '"')
    return None


def is_literal(text: str) -> bool:
    text = text.strip()
    return text == "null" or literal(text) is not None
