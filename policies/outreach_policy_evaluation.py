"""Evaluating what checkov left unrendered: variables through their callers, ``optional()`` defaults.

checkov renders plain variables, but an attribute of an object variable whose value comes from an
``optional(type, default)`` constraint renders as ``{}``, an unset ``list``/``map`` variable as
``[]``/``{}``, and ``module.<name>[0].<output>`` may stay as text. ``effective_conf`` completes the
attributes a rule reads from the source expressions, and ``flag_unset_variables`` reports the
variables without a value behind them.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Sequence
from typing import Any

from outreach_policy_graph import GraphView
from outreach_policy_source import is_literal, literal, optional_default
from outreach_policy_values import MISSING, Problems, assign, is_concrete, is_unresolved, value

# Results of evaluating source expressions: ABSENT is null / an unset optional attribute (the
# provider default applies), UNKNOWN is an expression this code cannot evaluate.
ABSENT: Any = object()
UNKNOWN: Any = object()
_VAR_PATH = re.compile(r"var\.([A-Za-z_][\w-]*)((?:\.[A-Za-z_][\w-]*)*)")
_MAX_DEPTH = 16


def _lookup(document: Any, keys: Sequence[str]) -> Any:
    current = document
    for key in keys:
        if isinstance(current, list) and len(current) == 1:
            current = current[0]
        if not isinstance(current, dict):
            return UNKNOWN
        if key not in current:
            return ABSENT
        current = current[key]
    return ABSENT if current is None else current


def evaluate(view: GraphView, idx: int, path: Sequence[str]) -> Any:
    """The value of an attribute path from its source expression (ABSENT or UNKNOWN otherwise)."""
    located = view.locate(idx, path)
    if located is None:
        return UNKNOWN
    if located.expression is None:
        return ABSENT
    return _expression_value(view, idx, located.expression, located.remaining, 0)


def _expression_value(
    view: GraphView, scope: int, expression: str, remaining: Sequence[str], depth: int
) -> Any:
    expression = expression.strip()
    if depth > _MAX_DEPTH:
        return UNKNOWN
    if expression == "null":
        return ABSENT
    match = _VAR_PATH.fullmatch(expression)
    if match is not None:
        variable = view.variable_in_scope(scope, match.group(1))
        if variable is None:
            return UNKNOWN
        keys = [key for key in match.group(2).split(".") if key] + list(remaining)
        return _variable_value(view, variable, keys, depth + 1)
    if not remaining and is_literal(expression):
        parsed = literal(expression)
        return ABSENT if parsed is None else parsed
    return UNKNOWN


def _variable_value(view: GraphView, variable: int, keys: list[str], depth: int) -> Any:
    """A variable's value at ``keys``: what the caller passes, else its default, else optional()."""
    attrs = view.attrs(variable)
    name = str(attrs.get("block_name_", ""))
    caller = view.caller(variable)
    located = view.locate(caller, [name, *keys]) if caller is not None else None
    result: Any
    if caller is not None and located is not None and located.expression is not None:
        result = _expression_value(view, caller, located.expression, located.remaining, depth)
    elif located is not None and located.matched >= 1:
        result = ABSENT  # the caller passes an object without this attribute
    elif "default" in attrs:
        # Not passed by a caller: the declared default (for a root, checkov folds tfvars in here).
        result = _lookup(attrs.get("default"), keys)
    else:
        result = UNKNOWN
    if result is ABSENT and len(keys) == 1:
        type_location = view.locate(variable, ["type"])
        if type_location is not None and type_location.expression is not None:
            found, default = optional_default(type_location.expression, keys[0])
            if found:
                return ABSENT if default is None else default
    return result


def effective_conf(view: GraphView, idx: int, conf: dict[str, Any], paths: Iterable[str]) -> dict[str, Any]:
    """``conf`` with the values at ``paths`` completed from the source where checkov left them.

    A value checkov rendered completely is kept. Otherwise the attribute's expression is evaluated
    (variables through their callers, object attributes through optional() defaults), and an
    unrendered reference to another block (``module.x[0].arn``) is replaced by the resource it
    reaches in the graph. What stays unknown is left for the rule to report.
    """
    result = copy.deepcopy(conf)
    for path in paths:
        segments = path.split(".")
        raw = value(conf, *segments)
        if raw is MISSING or is_concrete(raw):
            continue
        evaluated = evaluate(view, idx, segments)
        if evaluated is ABSENT:
            assign(result, segments, None)
        elif evaluated is not UNKNOWN and is_concrete(evaluated):
            assign(result, segments, evaluated)
        elif isinstance(raw, str) and is_unresolved(raw):
            targets = view.referenced(idx, path)
            if len(targets) == 1:
                reference = f"{view.attrs(targets[0]).get('id_')}.{raw.rsplit('.', 1)[-1]}"
                assign(result, segments, reference)
    return result


def effective(view: GraphView, idx: int, paths: Iterable[str]) -> dict[str, Any]:
    """The node's own configuration completed at ``paths`` (see ``effective_conf``)."""
    return effective_conf(view, idx, view.conf(idx), paths)


def flag_unset_variables(view: GraphView, idx: int, attributes: Iterable[str], problems: Problems) -> None:
    """Record every attribute of node ``idx`` that is rendered from a variable without a value."""
    for attribute in attributes:
        for variable in view.unset_variables(idx, attribute):
            problems.unresolved(attribute, f"{variable} (no value)")
