"""Rendering a resource's nested blocks for one for_each entry from the source, ``dynamic`` blocks included.

Registry modules build a resource's blocks from its ``for_each`` entry: the EventBridge module's pipe
has ``dynamic "source_parameters" { for_each = try([each.value.source_parameters], []) }`` around a
``dynamic "dynamodb_stream_parameters"`` that reads ``source_parameters.value.*``, and its schedule's
``target`` block holds ``dynamic "dead_letter_config"``. checkov cannot expand those for an entry it
does not know, so the block is rendered here per entry, the way an apply would create it: each
``dynamic`` block once per item of its ``for_each``, its iterator bound by name. A block whose
``for_each`` cannot be evaluated is not rendered (the caller keeps checkov's rendering, and the rules
fail closed on it). It has no checkov dependency.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from outreach_policy_expression_values import UnknownValueError, collection_items
from outreach_policy_source import parse_body, repeated_blocks

# Evaluates an expression with extra names bound (a dynamic block's iterator); raises UnknownValueError.
Evaluate = Callable[[str, dict[str, Any]], Any]
# Turns an evaluated value into what the configuration holds: a plain value, None (absent) or a
# value that names other blocks (kept by the caller, which renders its text).
Settle = Callable[[Any], Any]


def render_blocks(
    body: str,
    name: str,
    evaluate: Evaluate,
    settle: Settle,
    text_of: Callable[[Any], str | None],
    found: dict[str, Any],
) -> list[dict[str, Any]]:
    """The blocks named ``name`` at the top of a resource body for one entry, in checkov's shape.

    ``found`` receives, by attribute path, every value inside that names other blocks (``text_of``
    gives its text, ``None`` for a plain value). Raises ``UnknownValueError`` when a ``dynamic``
    block's ``for_each`` cannot be evaluated.
    """
    entry = parse_body(body)[name]
    return _render(entry.text, entry.for_each, name, name, {}, evaluate, settle, text_of, found)


def _render(
    text: str,
    generator: str | None,
    label: str,
    path: str,
    bound: dict[str, Any],
    evaluate: Evaluate,
    settle: Settle,
    text_of: Callable[[Any], str | None],
    found: dict[str, Any],
) -> list[dict[str, Any]]:
    if generator is None:
        return [_body(text, path, bound, evaluate, settle, text_of, found)]
    items = collection_items(evaluate(generator, bound))
    return [
        _body(text, path, {**bound, label: {"key": key, "value": item}}, evaluate, settle, text_of, found)
        for key, item in items
    ]


def _body(
    text: str,
    path: str,
    bound: dict[str, Any],
    evaluate: Evaluate,
    settle: Settle,
    text_of: Callable[[Any], str | None],
    found: dict[str, Any],
) -> dict[str, Any]:
    conf: dict[str, Any] = {}
    repeated = repeated_blocks(text)
    if repeated:
        # Two blocks of one name (two filter blocks) are not told apart here: checkov's rendering stays.
        raise UnknownValueError(f"repeated blocks {sorted(repeated)}")
    for name, entry in parse_body(text).items():
        inner = f"{path}.{name}"
        if entry.kind == "block":
            blocks = _render(entry.text, entry.for_each, name, inner, bound, evaluate, settle, text_of, found)
            if blocks:
                conf[name] = blocks
            continue
        try:
            settled = settle(evaluate(entry.text, bound))
        except UnknownValueError:
            conf[name] = [entry.text]  # left as its expression: a rule reading it fails closed
            continue
        reference = text_of(settled)
        if reference is not None:
            found[inner] = settled
            conf[name] = [reference]
        elif settled is not None:
            conf[name] = [settled]
    return conf
