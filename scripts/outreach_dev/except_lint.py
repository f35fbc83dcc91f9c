"""Lint for handler code: every ``except`` re-raises, reports a failure or records an outcome.

The seed's second 2025 bug was a handler that caught its errors and carried on: Lambda saw a
success, so the failure never reached a retry or a dead-letter queue. ruff's blind-except (BLE001)
and try-except-pass (S110/S112) catch the crudest forms; this lint asks every handler, whatever it
catches, to say what happens to the failure.

An ``except`` handler passes when at least one of these holds:

1. its body contains a ``raise`` statement (outside nested functions and classes);
2. its body calls an *outcome function*: a callable whose name, leading underscores aside, starts
   with ``report_``, ``record_`` or ``mark_``, ends with ``failure``/``failures``, or is
   ``send_to_dlq`` (for example ``mark_failed(...)``, ``task_store.record_outcome(...)``,
   ``_batch_item_failure(...)``);
3. its body returns a member of an outcome enum: ``return Outcome.DUPLICATE`` (any class whose name
   ends with ``Outcome``);
4. its body reports a batch item failure: it appends/adds to a collection whose name contains
   ``failure`` (``batch_item_failures.append(...)``), or builds a dict with the key
   ``"itemIdentifier"``;
5. a line of the ``except ...:`` clause carries a ``# outcome: <reason>`` comment naming the
   deliberate outcome.

``with contextlib.suppress(...)`` swallows exceptions the same way and must carry the
``# outcome: <reason>`` comment on its ``with`` line.

Run: ``python -m outreach_dev.except_lint functions`` (exit 1 on findings, 2 on unreadable input).
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import sys
import tokenize
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

OUTCOME_CALL = re.compile(r"^_*(?:(?:report|record|mark)_\w+|send_to_dlq|\w*failures?)$")
OUTCOME_ENUM = re.compile(r"Outcome$")
OUTCOME_COMMENT = re.compile(r"#\s*outcome:\s*\S")
FAILURE_COLLECTION = re.compile(r"failure", re.IGNORECASE)
COLLECTING_METHODS = frozenset({"append", "add", "extend", "appendleft"})


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    column: int
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column + 1}: {self.code} {self.message}"


EXCEPT_MESSAGE = (
    "except handler neither re-raises, reports a batch item failure nor records an outcome "
    "(raise, call report_*/record_*/mark_*/*failure/send_to_dlq, return an *Outcome member, or mark "
    "the except line '# outcome: <reason>')"
)
SUPPRESS_MESSAGE = "contextlib.suppress swallows exceptions: mark the with line '# outcome: <reason>'"


def _comments_by_line(source: str) -> dict[int, str]:
    comments: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string
    return comments


def _walk_body(statements: Iterable[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of ``statements`` except those inside nested function or class definitions."""
    stack: list[ast.AST] = list(statements)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _callee_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _receiver_name(call: ast.Call) -> str | None:
    if not isinstance(call.func, ast.Attribute):
        return None
    receiver = call.func.value
    if isinstance(receiver, ast.Name):
        return receiver.id
    if isinstance(receiver, ast.Attribute):
        return receiver.attr
    return None


def _handles_failure(handler: ast.ExceptHandler) -> bool:
    for node in _walk_body(handler.body):
        if isinstance(node, ast.Raise):
            return True
        if isinstance(node, ast.Call):
            name = _callee_name(node)
            if name is not None and OUTCOME_CALL.match(name):
                return True
            receiver = _receiver_name(node)
            if name in COLLECTING_METHODS and receiver is not None and FAILURE_COLLECTION.search(receiver):
                return True
        if (
            isinstance(node, ast.Return)
            and isinstance(node.value, ast.Attribute)
            and isinstance(node.value.value, ast.Name)
            and OUTCOME_ENUM.search(node.value.value.id)
        ):
            return True
        if isinstance(node, ast.Dict) and any(
            isinstance(key, ast.Constant) and key.value == "itemIdentifier" for key in node.keys
        ):
            return True
    return False


def _header_lines(node: ast.ExceptHandler | ast.With | ast.AsyncWith) -> range:
    """Source lines of an ``except ...:`` or ``with ...:`` clause, up to its first body statement."""
    return range(node.lineno, max(node.body[0].lineno, node.lineno + 1))


def _annotated(node: ast.ExceptHandler | ast.With | ast.AsyncWith, comments: dict[int, str]) -> bool:
    return any(OUTCOME_COMMENT.search(comments.get(line, "")) for line in _header_lines(node))


def _is_suppress(expression: ast.expr) -> bool:
    if not isinstance(expression, ast.Call):
        return False
    function = expression.func
    if isinstance(function, ast.Name):
        return function.id == "suppress"
    return isinstance(function, ast.Attribute) and function.attr == "suppress"


def lint_source(source: str, path: str = "<source>") -> list[Finding]:
    """Findings for one module's source text."""
    tree = ast.parse(source, filename=path)
    comments = _comments_by_line(source)
    findings: list[Finding] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler):
            if not _annotated(node, comments) and not _handles_failure(node):
                findings.append(Finding(path, node.lineno, node.col_offset, "EXC001", EXCEPT_MESSAGE))
        elif (
            isinstance(node, ast.With | ast.AsyncWith)
            and any(_is_suppress(item.context_expr) for item in node.items)
            and not _annotated(node, comments)
        ):
            findings.append(Finding(path, node.lineno, node.col_offset, "EXC002", SUPPRESS_MESSAGE))
    return sorted(findings, key=lambda finding: (finding.path, finding.line, finding.column))


def python_files(paths: Sequence[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*.py") if "__pycache__" not in p.parts)
        else:
            yield path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m outreach_dev.except_lint",
        description="Every except in handler code re-raises, reports a failure or records an outcome.",
    )
    parser.add_argument("paths", nargs="*", type=Path, default=[Path("functions")])
    arguments = parser.parse_args(argv)
    missing = [str(path) for path in arguments.paths if not path.exists()]
    if missing:
        print(f"except_lint: no such file or directory: {', '.join(missing)}", file=sys.stderr)
        return 2
    findings: list[Finding] = []
    for path in python_files(arguments.paths):
        try:
            findings.extend(lint_source(path.read_text(encoding="utf-8"), str(path)))
        except (SyntaxError, UnicodeDecodeError) as error:
            print(f"except_lint: cannot parse {path}: {error}", file=sys.stderr)
            return 2
    for finding in findings:
        print(finding)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
