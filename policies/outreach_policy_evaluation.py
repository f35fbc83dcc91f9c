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

from outreach_policy_expression_values import resolved
from outreach_policy_expressions import Lazy, UnknownValueError, evaluate_expression, plain, rendered
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
        if isinstance(current, list) and key.isdigit() and int(key) < len(current):
            current = current[int(key)]  # an item of a list (a for-expression's element)
            continue
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
    result = _expression_value(view, idx, located.expression, located.remaining, 0)
    return result if result is ABSENT or result is UNKNOWN else rendered(result)


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
    try:
        result = resolved(evaluate_expression(expression, scope_of(view, scope, depth=depth + 1)))
    except UnknownValueError:
        return UNKNOWN
    return _lookup(result, remaining)


def _at(collection: Any, key: str) -> Any:
    if isinstance(collection, Lazy):
        return collection.at(key)
    value = plain(collection)
    if isinstance(value, dict) and key in value:
        return value[key]
    raise UnknownValueError(f"no entry {key!r}")


class VariablePath(Lazy):
    """``var.<name>.<keys>`` of one module instance, resolved through its caller when read."""

    def __init__(self, view: GraphView, variable: int, keys: list[str], depth: int) -> None:
        self.view, self.variable, self.keys, self.depth = view, variable, keys, depth

    @property
    def label(self) -> str:
        """The path as the caller's edges name it (``mappings.jobs.event_source_arn``, no list index)."""
        keys = [key for key in self.keys if not key.isdigit()]
        return ".".join([str(self.view.attrs(self.variable).get("block_name_", "")), *keys])

    def at(self, key: str) -> Any:
        return VariablePath(self.view, self.variable, [*self.keys, key], self.depth)

    def __str__(self) -> str:
        return f"var.{self.label}"

    def resolve(self) -> Any:
        result = _variable_value(self.view, self.variable, self.keys, self.depth)
        if result is UNKNOWN:
            raise UnknownValueError(f"{self} has no known value")
        return None if result is ABSENT else result


def scope_of(view: GraphView, scope: int, each: tuple[str, Any] | None = None, depth: int = 0) -> Any:
    """Names of the module instance of node ``scope`` for the expression evaluator.

    ``var.*`` resolves through the callers, ``local.*`` to what checkov rendered, and ``each.*`` to
    ``each`` when given, else to the entry of a ``for_each`` module call node.
    """

    def resolve(root: str, name: str) -> Any:
        if root == "each" and each is not None and name in {"key", "value"}:
            return each[0] if name == "key" else each[1]
        if root == "var":
            variable = view.variable_in_scope(scope, name)
            if variable is not None:
                return VariablePath(view, variable, [], depth)
        if root == "each" and name in {"key", "value"}:
            key = view.instance_key(scope)
            located = view.locate(scope, ["for_each"])
            if key is not None and located is not None and located.expression is not None:
                if name == "key":
                    return key
                collection = evaluate_expression(located.expression, scope_of(view, scope, depth=depth + 1))
                return _at(collection, key)
        if root == "local":
            instance = view.instance(scope)
            for node in view.blocks("locals", name):
                if view.instance(node) != instance:
                    continue
                rendered = view.attrs(node).get(name)
                if not is_unresolved(rendered):
                    return rendered
                # checkov left it as text (a flatten([...]) over a for-expression): read the source.
                expression = view.sources.local_expression(str(view.attrs(node).get("file_path_", "")), name)
                if expression is not None and depth < _MAX_DEPTH:
                    return evaluate_expression(expression, scope_of(view, node, depth=depth + 1))
        raise UnknownValueError(f"{root}.{name} is not evaluated")

    return resolve


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
    if result is ABSENT and keys:
        type_location = view.locate(variable, ["type"])
        type_text = type_location.expression if type_location is not None else None
        # An attribute of an object, or of an object in a map of objects (one level below the key).
        if type_text is not None and (len(keys) == 1 or (len(keys) == 2 and type_text.startswith("map("))):
            found, default = optional_default(type_text, keys[-1])
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
        raw = value(result, *segments)
        if raw is MISSING or is_concrete(raw):
            continue
        evaluated = evaluate(view, idx, segments)
        if evaluated is ABSENT:
            assign(result, segments, None)
        elif evaluated is not UNKNOWN and (is_concrete(evaluated) or isinstance(evaluated, dict)):
            assign(result, segments, evaluated)
            raw = value(result, *segments)
        if isinstance(raw, str) and is_unresolved(raw):
            target = _single_target(view, idx, segments, raw)
            if target is not None:
                assign(result, segments, f"{view.attrs(target).get('id_')}.{raw.rsplit('.', 1)[-1]}")
    return result


def _single_target(view: GraphView, idx: int, segments: Sequence[str], raw: str) -> int | None:
    """The one block an attribute path reaches.

    When the value is itself a module output reference (``module.dlq.queue_arn`` inside an object
    variable), checkov's edges may name only a prefix of the path, so shorter paths are tried.
    """
    shortest = 1 if raw.startswith("module.") else len(segments)
    for length in range(len(segments), shortest - 1, -1):
        targets = view.referenced(idx, ".".join(segments[:length]))
        if targets:
            return targets[0] if len(targets) == 1 else None
    return None


def effective(view: GraphView, idx: int, paths: Iterable[str]) -> dict[str, Any]:
    """The node's own configuration completed at ``paths`` (see ``effective_conf``)."""
    return effective_conf(view, idx, view.conf(idx), paths)


def flag_unset_variables(view: GraphView, idx: int, attributes: Iterable[str], problems: Problems) -> None:
    """Record every attribute of node ``idx`` that is rendered from a variable without a value."""
    for attribute in attributes:
        for variable in view.unset_variables(idx, attribute):
            problems.unresolved(attribute, f"{variable} (no value)")
