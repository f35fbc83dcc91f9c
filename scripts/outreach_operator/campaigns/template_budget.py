"""What one bounded render may use, and the budget that counts what it has used so far.

The limits are described in ``template_sandbox``; the sizes here are what a value stands for as
text, counted without making it (``replaced_size``) and without walking past the value cap.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from outreach_operator.errors import TemplateLimitError

MAX_VALUE_CHARS = 256 * 1024
MAX_INT_BITS = 4096
MAX_RANGE = 10_000
MAX_STEPS = 100_000
MAX_SECONDS = 2.0
MAX_PRODUCED_CHARS = 1024 * 1024

SEQUENCES = (str, bytes, list, tuple)


@dataclass
class Budget:
    """What one render has used so far; ``seconds`` is the time it was given (``deadline`` ends it)."""

    output_cap: int
    deadline: float
    seconds: float
    steps: int = 0
    produced: int = 0

    def step(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise TemplateLimitError(
                f"the template took more than {MAX_STEPS:,} steps (loop iterations, calls and filters)"
            )
        if time.monotonic() >= self.deadline:
            raise TemplateLimitError(f"the template took more than {self.seconds:g} s to render")

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
        elif isinstance(value, (*SEQUENCES, dict, set, frozenset)):
            self.fits(size_of(value), what)
        return value

    def produce(self, size: int) -> None:
        self.produced += size
        if self.produced > MAX_PRODUCED_CHARS:
            raise TemplateLimitError(
                f"the template produced more than {MAX_PRODUCED_CHARS:,} characters (macros and set "
                "blocks included)"
            )


BUDGET: ContextVar[Budget] = ContextVar("outreach_template_budget")


def current_budget() -> Budget:
    """The budget of the render under way."""
    try:
        return BUDGET.get()
    except LookupError:
        raise TemplateLimitError("a bounded template renders only through render_bounded") from None


def size_of(value: Any) -> int:
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


def text_size(value: Any) -> int:
    """Characters ``value`` makes as text (what ``~`` and ``join`` would make of it)."""
    if isinstance(value, (str, bytes)):
        return len(value)
    if isinstance(value, (int, list, tuple, dict, set, frozenset)):
        return size_of(value)
    return len(str(value))


def whole(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def replaced_size(text: Any, old: Any, new: Any, count: Any) -> int:
    """The exact length of ``text.replace(old, new, count)`` (as text), found without making it."""
    text, old, new = (value if isinstance(value, (str, bytes)) else str(value) for value in (text, old, new))
    if type(old) is not type(text):
        return len(text)  # text.replace refuses it itself
    found = len(text) + 1 if not old else text.count(old)
    if isinstance(count, int) and count >= 0:
        found = min(found, count)
    return len(text) + found * (len(new) - len(old))


def argument(args: tuple[Any, ...], kwargs: Mapping[str, Any], index: int, name: str, default: Any) -> Any:
    return args[index] if len(args) > index else kwargs.get(name, default)
