"""A Jinja2 sandbox in which one render is bounded: one template, and limits on size, steps and time.

Jinja2's immutable sandbox keeps a template from running code and from changing the values it is given
(https://jinja.palletsprojects.com/en/stable/sandbox/), but not from costing unbounded memory or
time: ``{{ 'A' * 50000000 }}`` renders 50 MB, ``range(10**6)`` ends in an OverflowError, a macro that
calls itself in a RecursionError, three nested loops over ``range(1000)`` run for hours, and
``include`` fails with a TypeError (there is no loader). ``BoundedSandbox`` bounds every render:

- *One template.* ``include``, ``import``, ``from … import`` and ``extends`` are refused when the
  template is compiled (a ``TemplateAssertionError`` with the line): a campaign template stands alone.
- *Values.* No value a template makes has more than ``MAX_VALUE_CHARS`` (256 Ki) characters, counting
  the text inside lists and dicts, and no whole number more than ``MAX_INT_BITS`` (4,096) bits. What
  can grow a value past that is sized before it runs: ``*`` on text or a list, ``**``, ``~``, the
  filters ``center``, ``indent``, ``wordwrap``, ``join``, ``replace``, ``batch`` and ``slice`` and the
  text methods ``center``, ``ljust``, ``rjust``, ``zfill``, ``expandtabs``, ``replace`` and ``join``;
  ``+`` and the result of every call, filter and ``namespace`` assignment are checked after. printf
  formatting (``%`` on text, the ``format`` filter, ``str.format``), ``str.translate``, ``sum`` over
  anything but numbers and ``lipsum`` are not available: their cost cannot be told beforehand.
- *Steps and time.* ``range`` gives at most ``MAX_RANGE`` (10,000) numbers (the sandbox's own
  ``MAX_RANGE`` is 100,000); a render takes at most ``MAX_STEPS`` (100,000) steps (each loop iteration,
  call and filter is one) and ``MAX_SECONDS`` (2 s).
- *Output.* Everything produced counts, also what goes into a macro or a ``{% set %}`` block: at most
  ``MAX_PRODUCED_CHARS`` (1 Mi characters) a render; the output itself stops as soon as it passes the
  cap the caller gives for the field.

Every limit raises ``TemplateLimitError`` (a Jinja2 ``SecurityError``) saying what was refused. The
compiled code is Jinja2's own: the template's tree is only rewritten to route loops, ``~`` and literal
output through the environment (``EnvironmentAttribute`` calls, the hook Jinja2 provides for
extensions), and the optimizer is off, so no filter runs at compile time.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from functools import wraps
from typing import Any, cast

from jinja2 import Template, nodes, pass_context
from jinja2.exceptions import TemplateAssertionError
from jinja2.runtime import Context, markup_join, str_join
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Namespace
from jinja2.visitor import NodeTransformer

from outreach_operator.errors import TemplateLimitError

MAX_VALUE_CHARS = 256 * 1024
MAX_INT_BITS = 4096
MAX_RANGE = 10_000
MAX_STEPS = 100_000
MAX_SECONDS = 2.0
MAX_PRODUCED_CHARS = 1024 * 1024

_SEQUENCES = (str, bytes, list, tuple)
_PADDING_METHODS = frozenset({"center", "ljust", "rjust", "zfill"})
_REFUSED_TEXT_METHODS = frozenset({"format", "format_map", "translate", "maketrans"})


@dataclass
class _Budget:
    """What one render has used so far."""

    output_cap: int
    deadline: float
    steps: int = 0
    produced: int = 0

    def step(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise TemplateLimitError(
                f"the template took more than {MAX_STEPS:,} steps (loop iterations, calls and filters)"
            )
        if time.monotonic() >= self.deadline:
            raise TemplateLimitError(f"the template took more than {MAX_SECONDS:g} s to render")

    def fits(self, size: int, what: str) -> None:
        if size > MAX_VALUE_CHARS:
            raise TemplateLimitError(
                f"{what} would make a value of {size:,} characters; a template's values may have at most "
                f"{MAX_VALUE_CHARS:,}"
            )

    def value(self, value: Any, what: str) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            if value.bit_length() > MAX_INT_BITS:
                raise TemplateLimitError(
                    f"{what} would make a number of {value.bit_length():,} bits; at most {MAX_INT_BITS:,}"
                )
        elif isinstance(value, (*_SEQUENCES, dict, set, frozenset)):
            self.fits(_size(value), what)
        return value

    def produce(self, size: int) -> None:
        self.produced += size
        if self.produced > MAX_PRODUCED_CHARS:
            raise TemplateLimitError(
                f"the template produced more than {MAX_PRODUCED_CHARS:,} characters (macros and set "
                "blocks included)"
            )


_BUDGET: ContextVar[_Budget] = ContextVar("outreach_template_budget")


def _budget() -> _Budget:
    try:
        return _BUDGET.get()
    except LookupError:
        raise TemplateLimitError("a bounded template renders only through render_bounded") from None


def _size(value: Any) -> int:
    """Characters ``value`` stands for: text lengths, one per element, a number's digits; stops counting
    once past the value cap."""
    total = 0
    pending = [value]
    while pending and total <= MAX_VALUE_CHARS:
        item = pending.pop()
        if isinstance(item, (str, bytes)):
            total += len(item)
        elif isinstance(item, int):
            total += item.bit_length() * 3 // 10 + 1
        elif isinstance(item, (list, tuple, set, frozenset)):
            total += len(item)
            if total <= MAX_VALUE_CHARS:
                pending.extend(item)
        elif isinstance(item, dict):
            total += len(item)
            if total <= MAX_VALUE_CHARS:
                pending.extend(item.keys())
                pending.extend(item.values())
    return total


def _text_size(value: Any) -> int:
    """Characters ``value`` makes as text (what ``~`` and ``join`` would make of it)."""
    if isinstance(value, (str, bytes)):
        return len(value)
    if isinstance(value, (int, list, tuple, dict, set, frozenset)):
        return _size(value)
    return len(str(value))


def _whole(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _replaced_size(text: Any, old: Any, new: Any, count: Any) -> int:
    """The exact length of ``text.replace(old, new, count)`` (as text), found without making it."""
    text, old, new = (value if isinstance(value, (str, bytes)) else str(value) for value in (text, old, new))
    if type(old) is not type(text):
        return len(text)  # text.replace refuses it itself
    found = len(text) + 1 if not old else text.count(old)
    if isinstance(count, int) and count >= 0:
        found = min(found, count)
    return len(text) + found * (len(new) - len(old))


def _arg(args: tuple[Any, ...], kwargs: Mapping[str, Any], index: int, name: str, default: Any) -> Any:
    return args[index] if len(args) > index else kwargs.get(name, default)


# ---- filters ------------------------------------------------------------------------------------
# Each check gets the filter's arguments after the one Jinja2 passes itself (context, environment).


def _check_center(b: _Budget, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    b.fits(max(_text_size(args[0]), _whole(_arg(args, kwargs, 1, "width", 80))), "the center filter")
    return args


def _check_indent(b: _Budget, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    text, width = str(args[0]), _arg(args, kwargs, 1, "width", 4)
    per_line = _whole(width) if isinstance(width, int) else len(str(width))
    b.fits(len(text) + (text.count("\n") + 1) * per_line, "the indent filter")
    return args


def _check_wordwrap(b: _Budget, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    text = str(args[0])
    width = max(_whole(_arg(args, kwargs, 1, "width", 79), 1), 1)
    wrap = _arg(args, kwargs, 3, "wrapstring", None) or "\n"
    b.fits(len(text) + (len(text) // width + text.count("\n") + 1) * len(str(wrap)), "the wordwrap filter")
    return args


def _check_join(b: _Budget, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    items = list(args[0])
    joiner = str(_arg(args, kwargs, 1, "d", ""))
    size = max(len(items) - 1, 0) * len(joiner)
    if _arg(args, kwargs, 2, "attribute", None) is None:
        size += sum(_text_size(item) for item in items)
    b.fits(size, "the join filter")
    return (items, *args[1:])


def _check_replace(b: _Budget, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    old, new = _arg(args, kwargs, 1, "old", ""), _arg(args, kwargs, 2, "new", "")
    b.fits(_replaced_size(args[0], old, new, _arg(args, kwargs, 3, "count", None)), "the replace filter")
    return args


def _check_batch(b: _Budget, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    b.fits(_whole(_arg(args, kwargs, 1, "linecount", 0)), "the batch filter")
    return args


def _check_slice(b: _Budget, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    b.fits(_whole(_arg(args, kwargs, 1, "slices", 0)), "the slice filter")
    return args


def _check_sum(b: _Budget, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    if not isinstance(_arg(args, kwargs, 2, "start", 0), (int, float)):
        raise TemplateLimitError("the sum filter adds numbers only")
    return args


def _refuse_format(b: _Budget, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    raise TemplateLimitError("the format filter is not available: write the value as a placeholder")


_FILTER_CHECKS: dict[str, Callable[[_Budget, tuple[Any, ...], dict[str, Any]], tuple[Any, ...]]] = {
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


def _bounded_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` counted as a step, sized before it runs where it can grow a value, checked after."""
    check = _FILTER_CHECKS.get(name)
    # Jinja2 marks a filter that takes the context or environment first (``pass_context`` and its
    # kin set ``jinja_pass_arg``); ``wraps`` copies the mark, so Jinja2 still passes it.
    passed = 1 if getattr(func, "jinja_pass_arg", None) is not None else 0

    @wraps(func)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        budget = _budget()
        budget.step()
        if check is not None:
            args = (*args[:passed], *check(budget, args[passed:], kwargs))
        return budget.value(func(*args, **kwargs), f"the {name} filter")

    return bounded


# ---- globals ------------------------------------------------------------------------------------


def _range(*args: int) -> range:
    numbers = range(*args)
    try:
        count = len(numbers)
    except OverflowError:
        count = sys.maxsize
    if count > MAX_RANGE:
        raise TemplateLimitError(
            f"range() of {count:,} numbers; a template may count to at most {MAX_RANGE:,}"
        )
    return numbers


class _BoundedNamespace(Namespace):
    """``namespace()`` whose attributes are held to the value cap when they are set."""

    def __setitem__(self, name: str, value: Any) -> None:
        super().__setitem__(name, _budget().value(value, f"setting {name!r} of a namespace"))


# ---- the tree -----------------------------------------------------------------------------------


def _environment_call(name: str, *args: nodes.Expr, lineno: int) -> nodes.Call:
    call = nodes.Call(nodes.EnvironmentAttribute(name), list(args), [], None, None)
    call.set_lineno(lineno)
    return call


class _Meter(NodeTransformer):
    """Refuses other templates; routes loops, ``~`` and literal output through the environment."""

    def _refuse(self, node: nodes.Node, tag: str) -> nodes.Node:
        raise TemplateAssertionError(
            f"{{% {tag} %}} is not available: a campaign template cannot use other templates", node.lineno
        )

    def visit_Extends(self, node: nodes.Extends, *args: Any, **kwargs: Any) -> nodes.Node:
        return self._refuse(node, "extends")

    def visit_Include(self, node: nodes.Include, *args: Any, **kwargs: Any) -> nodes.Node:
        return self._refuse(node, "include")

    def visit_Import(self, node: nodes.Import, *args: Any, **kwargs: Any) -> nodes.Node:
        return self._refuse(node, "import")

    def visit_FromImport(self, node: nodes.FromImport, *args: Any, **kwargs: Any) -> nodes.Node:
        return self._refuse(node, "from ... import")

    def visit_For(self, node: nodes.For, *args: Any, **kwargs: Any) -> nodes.Node:
        self.generic_visit(node)
        node.iter = _environment_call("metered_loop", cast(nodes.Expr, node.iter), lineno=node.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat, *args: Any, **kwargs: Any) -> nodes.Node:
        self.generic_visit(node)
        return _environment_call("checked_concat", *node.nodes, lineno=node.lineno)

    def visit_Output(self, node: nodes.Output, *args: Any, **kwargs: Any) -> nodes.Node:
        self.generic_visit(node)
        literal = sum(len(child.data) for child in node.nodes if isinstance(child, nodes.TemplateData))
        if literal:
            node.nodes.insert(0, _environment_call("count_literal", nodes.Const(literal), lineno=node.lineno))
        return node


def _plain(value: Any) -> Any:
    return value if isinstance(value, str) else str(value)


def _finalizer(encode: Callable[[Any], Any]) -> Callable[..., Any]:
    @pass_context
    def finalize(context: Context, value: Any) -> Any:
        text = encode(value)
        _budget().produce(len(text))
        return text

    return finalize


class BoundedSandbox(ImmutableSandboxedEnvironment):
    """An immutable sandbox whose renders are bounded (see the module); ``encode`` turns each
    placeholder's value into the text that is output (default: the value as text)."""

    intercepted_binops = frozenset({"*", "**", "%", "+"})

    def __init__(
        self,
        *,
        encode: Callable[[Any], Any] = _plain,
        filters: Mapping[str, Callable[..., Any]] | None = None,
        **options: Any,
    ) -> None:
        super().__init__(optimized=False, finalize=_finalizer(encode), **options)
        self.filters.update(filters or {})
        self.filters = {name: _bounded_filter(name, func) for name, func in self.filters.items()}
        self.globals["range"] = _range
        self.globals["namespace"] = _BoundedNamespace
        self.globals.pop("lipsum", None)

    def compile_bounded(self, source: str) -> Template:
        """``source`` compiled with its loops, ``~`` and output metered; other templates refused."""
        tree = _Meter().visit(self.parse(source))
        tree.set_environment(self)
        return self.from_string(cast(nodes.Template, tree))

    # -- what the rewritten tree calls --

    def metered_loop(self, iterable: Iterable[Any]) -> Iterator[Any]:
        budget = _budget()
        for item in iterable:
            budget.step()
            yield item

    @pass_context
    def checked_concat(self, context: Context, *parts: Any) -> str:
        _budget().fits(sum(_text_size(part) for part in parts), "'~'")
        return markup_join(parts) if context.eval_ctx.autoescape else str_join(parts)

    def count_literal(self, size: int) -> str:
        _budget().produce(size)
        return ""

    # -- the sandbox's hooks --

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if isinstance(obj, (str, bytes)) and attr in _REFUSED_TEXT_METHODS:
            return False
        return super().is_safe_attribute(obj, attr, value)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        return None  # str.format is refused (is_safe_attribute), not wrapped

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        budget = _budget()
        if operator == "*":
            for sequence, times in ((left, right), (right, left)):
                if isinstance(sequence, _SEQUENCES) and isinstance(times, int) and times > 0:
                    budget.fits(_size(sequence) * times, "'*'")
        elif operator == "**" and isinstance(left, int) and isinstance(right, int):
            if abs(left) > 1 and right > 0 and right * (abs(left).bit_length() - 1) > MAX_INT_BITS:
                raise TemplateLimitError(f"'**' would make a number of more than {MAX_INT_BITS:,} bits")
        elif operator == "%" and isinstance(left, (str, bytes)):
            raise TemplateLimitError(
                "'%' formatting of text is not available: write the value as a placeholder"
            )
        return budget.value(super().call_binop(context, operator, left, right), f"{operator!r}")

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        budget = _budget()
        budget.step()
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, (str, bytes)):
            args = _sized_text_method(budget, owner, getattr(__obj, "__name__", ""), args, kwargs)
        result = super().call(__context, __obj, *args, **kwargs)
        return budget.value(result, f"calling {getattr(__obj, '__name__', 'a function')}")


def _sized_text_method(
    budget: _Budget, owner: str | bytes, name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> tuple[Any, ...]:
    """The arguments of ``owner.name(...)``, after sizing what it would make."""
    what = f"{type(owner).__name__}.{name}"
    if name in _PADDING_METHODS:
        budget.fits(max(len(owner), _whole(_arg(args, kwargs, 0, "width", 0))), what)
    elif name == "expandtabs":
        tabs = owner.count("\t" if isinstance(owner, str) else b"\t")  # type: ignore[arg-type]
        budget.fits(len(owner) + tabs * max(_whole(_arg(args, kwargs, 0, "tabsize", 8)), 0), what)
    elif name == "replace" and len(args) >= 2:
        budget.fits(_replaced_size(owner, args[0], args[1], _arg(args, kwargs, 2, "count", -1)), what)
    elif name == "join" and args:
        items = list(args[0])
        budget.fits(sum(_text_size(item) for item in items) + max(len(items) - 1, 0) * len(owner), what)
        return (items, *args[1:])
    return args


def render_bounded(template: Template, values: Mapping[str, Any], output_cap: int) -> str:
    """``template`` rendered with ``values`` within the limits; the output stops once past
    ``output_cap`` characters. Raises TemplateLimitError, or what the template itself raised."""
    budget = _Budget(output_cap=output_cap, deadline=time.monotonic() + MAX_SECONDS)
    token = _BUDGET.set(budget)
    stream = template.generate(values)
    try:
        pieces: list[str] = []
        length = 0
        for piece in stream:
            length += len(piece)
            if length > output_cap:
                raise TemplateLimitError(
                    f"the output passed {output_cap:,} characters, the most this field may have"
                )
            pieces.append(piece)
        return "".join(pieces)
    finally:
        getattr(stream, "close", lambda: None)()  # a generator: leave the template's code at once
        _BUDGET.reset(token)
