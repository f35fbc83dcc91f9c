"""Sizing before they run: the filters and text methods that can grow a template's value past its cap."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import wraps
from typing import Any

from outreach_operator.campaigns.template_budget import (
    Budget,
    argument,
    current_budget,
    replaced_size,
    text_size,
    whole,
)
from outreach_operator.errors import TemplateLimitError

_PADDING_METHODS = frozenset({"center", "ljust", "rjust", "zfill"})

# ---- filters ------------------------------------------------------------------------------------
# Each check gets the filter's arguments after the one Jinja2 passes itself (context, environment).


def _check_center(b: Budget, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    b.fits(max(text_size(args[0]), whole(argument(args, kwargs, 1, "width", 80))), "the center filter")
    return args


def _check_indent(b: Budget, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    text, width = str(args[0]), argument(args, kwargs, 1, "width", 4)
    per_line = whole(width) if isinstance(width, int) else len(str(width))
    b.fits(len(text) + (text.count("\n") + 1) * per_line, "the indent filter")
    return args


def _check_wordwrap(b: Budget, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    text = str(args[0])
    width = max(whole(argument(args, kwargs, 1, "width", 79), 1), 1)
    wrap = argument(args, kwargs, 3, "wrapstring", None) or "\n"
    b.fits(len(text) + (len(text) // width + text.count("\n") + 1) * len(str(wrap)), "the wordwrap filter")
    return args


def _check_join(b: Budget, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    items = list(args[0])
    joiner = str(argument(args, kwargs, 1, "d", ""))
    size = max(len(items) - 1, 0) * len(joiner)
    if argument(args, kwargs, 2, "attribute", None) is None:
        size += sum(text_size(item) for item in items)
    b.fits(size, "the join filter")
    return (items, *args[1:])


def _check_replace(b: Budget, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    old, new = argument(args, kwargs, 1, "old", ""), argument(args, kwargs, 2, "new", "")
    b.fits(replaced_size(args[0], old, new, argument(args, kwargs, 3, "count", None)), "the replace filter")
    return args


def _check_batch(b: Budget, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    b.fits(whole(argument(args, kwargs, 1, "linecount", 0)), "the batch filter")
    return args


def _check_slice(b: Budget, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    b.fits(whole(argument(args, kwargs, 1, "slices", 0)), "the slice filter")
    return args


def _check_sum(b: Budget, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    if not isinstance(argument(args, kwargs, 2, "start", 0), (int, float)):
        raise TemplateLimitError("the sum filter adds numbers only")
    return args


def _refuse_format(b: Budget, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    raise TemplateLimitError("the format filter is not available: write the value as a placeholder")


FILTER_CHECKS: dict[str, Callable[[Budget, tuple[Any, ...], dict[str, Any]], tuple[Any, ...]]] = {
    "center": _check_center,
    "indent": _check_indent,
    "wordwrap": _check_wordwrap,
    "join": _check_join,
    "replace": _check_replace,
    "batch": _check_batch,
    "slice": _check_slice,
    "sum": _check_sum,
    "format": _refuse_format,
}


def bounded_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` counted as a step, sized before it runs where it can grow a value, checked after."""
    check = FILTER_CHECKS.get(name)
    # Jinja2 marks a filter that takes the context or environment first (``pass_context`` and its
    # kin set ``jinja_pass_arg``); ``wraps`` copies the mark, so Jinja2 still passes it.
    passed = 1 if getattr(func, "jinja_pass_arg", None) is not None else 0

    @wraps(func)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        budget = current_budget()
        budget.step()
        if check is not None:
            args = (*args[:passed], *check(budget, args[passed:], kwargs))
        return budget.value(func(*args, **kwargs), f"the {name} filter")

    return bounded


def sized_text_method(
    budget: Budget, owner: str | bytes, name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> tuple[Any, ...]:
    """The arguments of ``owner.name(...)``, after sizing what it would make."""
    what = f"{type(owner).__name__}.{name}"
    if name in _PADDING_METHODS:
        budget.fits(max(len(owner), whole(argument(args, kwargs, 0, "width", 0))), what)
    elif name == "expandtabs":
        tabs = owner.count("\t" if isinstance(owner, str) else b"\t")  # type: ignore[arg-type]
        budget.fits(len(owner) + tabs * max(whole(argument(args, kwargs, 0, "tabsize", 8)), 0), what)
    elif name == "replace" and len(args) >= 2:
        budget.fits(replaced_size(owner, args[0], args[1], argument(args, kwargs, 2, "count", -1)), what)
    elif name == "join" and args:
        items = list(args[0])
        budget.fits(sum(text_size(item) for item in items) + max(len(items) - 1, 0) * len(owner), what)
        return (items, *args[1:])
    return args
