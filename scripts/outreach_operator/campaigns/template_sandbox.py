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
from typing import Any, cast

from jinja2 import Template, nodes, pass_context
from jinja2.exceptions import TemplateAssertionError
from jinja2.runtime import Context, markup_join, str_join
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Namespace
from jinja2.visitor import NodeTransformer

from outreach_operator.campaigns.template_budget import (
    BUDGET,
    MAX_INT_BITS,
    MAX_PRODUCED_CHARS,
    MAX_RANGE,
    MAX_SECONDS,
    MAX_STEPS,
    MAX_VALUE_CHARS,
    SEQUENCES,
    Budget,
    current_budget,
    size_of,
    text_size,
)
from outreach_operator.campaigns.template_sizing import bounded_filter, sized_text_method
from outreach_operator.errors import TemplateLimitError

__all__ = [
    "MAX_INT_BITS",
    "MAX_PRODUCED_CHARS",
    "MAX_RANGE",
    "MAX_SECONDS",
    "MAX_STEPS",
    "MAX_VALUE_CHARS",
    "BoundedSandbox",
    "render_bounded",
]

_REFUSED_TEXT_METHODS = frozenset({"format", "format_map", "translate", "maketrans"})


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
        super().__setitem__(name, current_budget().value(value, f"setting {name!r} of a namespace"))


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
        current_budget().produce(len(text))
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
        self.filters = {name: bounded_filter(name, func) for name, func in self.filters.items()}
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
        budget = current_budget()
        for item in iterable:
            budget.step()
            yield item

    @pass_context
    def checked_concat(self, context: Context, *parts: Any) -> str:
        current_budget().fits(sum(text_size(part) for part in parts), "'~'")
        return markup_join(parts) if context.eval_ctx.autoescape else str_join(parts)

    def count_literal(self, size: int) -> str:
        current_budget().produce(size)
        return ""

    # -- the sandbox's hooks --

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if isinstance(obj, (str, bytes)) and attr in _REFUSED_TEXT_METHODS:
            return False
        return super().is_safe_attribute(obj, attr, value)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        return None  # str.format is refused (is_safe_attribute), not wrapped

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        budget = current_budget()
        if operator == "*":
            for sequence, times in ((left, right), (right, left)):
                if isinstance(sequence, SEQUENCES) and isinstance(times, int) and times > 0:
                    budget.fits(size_of(sequence) * times, "'*'")
        elif operator == "**" and isinstance(left, int) and isinstance(right, int):
            if abs(left) > 1 and right > 0 and right * (abs(left).bit_length() - 1) > MAX_INT_BITS:
                raise TemplateLimitError(f"'**' would make a number of more than {MAX_INT_BITS:,} bits")
        elif operator == "%" and isinstance(left, (str, bytes)):
            raise TemplateLimitError(
                "'%' formatting of text is not available: write the value as a placeholder"
            )
        return budget.value(super().call_binop(context, operator, left, right), f"{operator!r}")

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        budget = current_budget()
        budget.step()
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, (str, bytes)):
            args = sized_text_method(budget, owner, getattr(__obj, "__name__", ""), args, kwargs)
        result = super().call(__context, __obj, *args, **kwargs)
        return budget.value(result, f"calling {getattr(__obj, '__name__', 'a function')}")


def render_bounded(template: Template, values: Mapping[str, Any], output_cap: int) -> str:
    """``template`` rendered with ``values`` within the limits; the output stops once past
    ``output_cap`` characters. Raises TemplateLimitError, or what the template itself raised."""
    budget = Budget(output_cap=output_cap, deadline=time.monotonic() + MAX_SECONDS, seconds=MAX_SECONDS)
    token = BUDGET.set(budget)
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
        BUDGET.reset(token)
