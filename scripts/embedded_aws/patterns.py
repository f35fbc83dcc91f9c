"""EventBridge event patterns, as Lambda filters, Pipes filters and bus rules (``event_bus``) use them.

Supported: exact values, ``prefix``, ``suffix``, ``anything-but`` (value, list, or ``prefix``),
``exists`` (on leaves only: an object is not there for it), ``numeric`` comparisons and
``equals-ignore-case``; nested objects; ``$or`` over
sub-patterns at any level; several filters in one criteria are OR-ed. Operators appear only inside a
leaf's list; ``validate`` refuses anything else, and ``wildcard`` (a bus-pattern operator that Lambda's
filter rules do not list) for mappings and pipes. Matching rules: https://docs.aws.amazon.com/eventbridge/latest/userguide/
eb-event-patterns-content-based-filtering.html and for Lambda
https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

_MISSING = object()
_OR = "$or"
_STRING_OPERATORS = ("prefix", "suffix", "equals-ignore-case")

_NUMERIC_OPS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    "=": operator.eq,
    ">": operator.gt,
    ">=": operator.ge,
}


class PatternError(ValueError):
    """A pattern uses syntax this matcher does not understand."""


def matches(pattern: Mapping[str, Any], event: Any) -> bool:
    """True if ``event`` satisfies every field of ``pattern``."""
    if not isinstance(event, Mapping):
        return False
    for key, rule in pattern.items():
        if key == _OR and isinstance(rule, list):
            # eb-create-pattern-operators.html: "$or" holds alternative patterns for the same level.
            if not any(matches(alternative, event) for alternative in rule):
                return False
            continue
        value = event.get(key, _MISSING)
        if isinstance(rule, Mapping):
            if value is _MISSING:
                # A pattern names leaf paths: an absent object means every leaf below it is absent,
                # which only an `exists: false` leaf accepts (an INSERT record has no OldImage).
                if not _only_absence(rule):
                    return False
            elif not matches(rule, value):
                return False
        elif isinstance(rule, list):
            if not _field_matches(rule, value):
                return False
        else:
            raise PatternError(f"pattern field {key!r} must be an object or a list, got {rule!r}")
    return True


def _only_absence(pattern: Mapping[str, Any]) -> bool:
    """True if every leaf under ``pattern`` accepts an absent value (``[{"exists": false}]``)."""
    for key, rule in pattern.items():
        if key == _OR and isinstance(rule, list):
            if not any(_only_absence(alternative) for alternative in rule):
                return False
        elif isinstance(rule, Mapping):
            if not _only_absence(rule):
                return False
        elif not any(isinstance(r, Mapping) and r.get("exists") is False for r in rule):
            return False
    return True


def _field_matches(rules: Sequence[Any], value: Any) -> bool:
    values = value if isinstance(value, list) else [value]
    # "Exists matching only works on leaf nodes": an object is never there for it
    # (eb-event-patterns-content-based-filtering.html, "Exists matching").
    leaf_present = value is not _MISSING and not isinstance(value, Mapping)
    for rule in rules:
        if isinstance(rule, Mapping) and "exists" in rule:
            if bool(rule["exists"]) == leaf_present:
                return True
            continue
        if value is _MISSING:
            continue
        if any(_value_matches(rule, item) for item in values):
            return True
    return False


def _value_matches(rule: Any, value: Any) -> bool:
    if not isinstance(rule, Mapping):
        return bool(rule == value and type(rule) is type(value)) or (
            isinstance(rule, (int, float))
            and isinstance(value, (int, float))
            and not isinstance(rule, bool)
            and not isinstance(value, bool)
            and float(rule) == float(value)
        )
    if len(rule) != 1:
        raise PatternError(f"a matcher has exactly one operator, got {dict(rule)!r}")
    (op, arg), *_ = rule.items()
    if op == "prefix":
        return isinstance(value, str) and value.startswith(_text(arg, op))
    if op == "suffix":
        return isinstance(value, str) and value.endswith(_text(arg, op))
    if op == "equals-ignore-case":
        return isinstance(value, str) and value.lower() == _text(arg, op).lower()
    if op == "anything-but":
        if isinstance(arg, Mapping):
            return not _value_matches(arg, value)
        excluded = arg if isinstance(arg, list) else [arg]
        return not any(_value_matches(item, value) for item in excluded)
    if op == "numeric":
        return _numeric(arg, value)
    raise PatternError(f"unsupported matcher {op!r}")


def _text(arg: Any, op: str) -> str:
    if isinstance(arg, Mapping) and "equals-ignore-case" in arg:
        return str(arg["equals-ignore-case"])
    if not isinstance(arg, str):
        raise PatternError(f"{op} takes a string, got {arg!r}")
    return arg


def _numeric(arg: Any, value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if not isinstance(arg, list) or len(arg) % 2:
        raise PatternError(f"numeric takes operator/value pairs, got {arg!r}")
    for index in range(0, len(arg), 2):
        compare = _NUMERIC_OPS.get(str(arg[index]))
        if compare is None:
            raise PatternError(f"unsupported numeric operator {arg[index]!r}")
        if not compare(float(value), float(arg[index + 1])):
            return False
    return True


def validate(pattern: Any, *, wildcard: bool = False) -> None:
    """Raise PatternError unless ``pattern`` is a pattern AWS would accept (``wildcard`` only for buses)."""
    if not isinstance(pattern, Mapping) or not pattern:
        raise PatternError(f"a pattern is a non-empty JSON object, got {pattern!r}")
    for key, rule in pattern.items():
        if key == _OR:
            if not isinstance(rule, list) or len(rule) < 2:
                raise PatternError(f"$or takes a list of at least two patterns, got {rule!r}")
            for alternative in rule:
                validate(alternative, wildcard=wildcard)
        elif isinstance(rule, Mapping):
            validate(rule, wildcard=wildcard)
        elif isinstance(rule, list):
            for matcher in rule:
                _validate_matcher(matcher, wildcard)
        else:
            raise PatternError(f"pattern field {key!r} must be an object or a list, got {rule!r}")


def _validate_matcher(matcher: Any, wildcard: bool) -> None:
    if not isinstance(matcher, Mapping):
        if isinstance(matcher, (list, dict)):
            raise PatternError(f"a leaf value is a string, number, boolean or null, got {matcher!r}")
        return
    if len(matcher) != 1:
        raise PatternError(f"a matcher has exactly one operator, got {dict(matcher)!r}")
    (op, arg), *_ = matcher.items()
    if op in _STRING_OPERATORS or (op == "wildcard" and wildcard):
        _text(arg, op)
    elif op == "exists":
        if not isinstance(arg, bool):
            raise PatternError(f"exists takes true or false, got {arg!r}")
    elif op == "numeric":
        pairs = arg if isinstance(arg, list) and arg and len(arg) % 2 == 0 else None
        if pairs is None or any(
            str(pairs[i]) not in _NUMERIC_OPS
            or isinstance(pairs[i + 1], bool)
            or not isinstance(pairs[i + 1], (int, float))
            for i in range(0, len(pairs), 2)
        ):
            raise PatternError(f"numeric takes operator/number pairs, got {arg!r}")
    elif op == "anything-but":
        if isinstance(arg, Mapping):
            if len(arg) != 1 or next(iter(arg)) not in _STRING_OPERATORS:
                raise PatternError(f"anything-but takes prefix, suffix or equals-ignore-case, got {arg!r}")
            _validate_matcher(arg, wildcard)
        else:
            for item in arg if isinstance(arg, list) else [arg]:
                if isinstance(item, (list, Mapping)):
                    raise PatternError(f"anything-but takes values, got {arg!r}")
    else:
        raise PatternError(f"unsupported matcher {op!r}")


def compile_filters(filter_criteria: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The patterns of a FilterCriteria ({"Filters": [{"Pattern": "<json>"}]}); empty = pass all."""
    if not filter_criteria:
        return []
    patterns = []
    for item in filter_criteria.get("Filters") or []:
        raw = item.get("Pattern")
        if raw:
            try:
                parsed = json.loads(raw) if isinstance(raw, str) else raw
            except json.JSONDecodeError as exc:
                raise PatternError(f"a filter pattern must be JSON: {exc}") from exc
            validate(parsed)
            patterns.append(parsed)
    return patterns


def passes(patterns: Sequence[Mapping[str, Any]], event: Mapping[str, Any]) -> bool:
    """Filters are OR-ed; no filters means every event passes."""
    return not patterns or any(matches(pattern, event) for pattern in patterns)
