"""The bench's report: figures (a count, or a value beside its same-run baseline), one table, one JSON file.

A benchmark that could not take a measurement raises :class:`MeasurementError`; the report then shows
why instead of a number, and ``make bench`` exits non-zero.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any


class MeasurementError(RuntimeError):
    """A figure could not be measured (an error, a timeout, or a value that is not a finite number)."""


@dataclass(frozen=True)
class Figure:
    """One line of the table: ``value`` in ``unit``; with a baseline, their ratio too."""

    measure: str
    value: float
    unit: str
    baseline: float | None = None
    target: str | None = None
    met: bool | None = None

    def __post_init__(self) -> None:
        for name in ("value", "baseline"):
            number = getattr(self, name)
            if number is not None and not math.isfinite(number):
                raise MeasurementError(f"{self.measure}: {name} is {number}, not a measurement")

    @property
    def ratio(self) -> float | None:
        if self.baseline is None or self.baseline == 0:
            return None
        return self.value / self.baseline


@dataclass
class Section:
    """What one benchmark measured, or why it could not."""

    name: str
    figures: list[Figure] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    def add(self, figure: Figure) -> None:
        self.figures.append(figure)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "error": self.error,
            "figures": [{**asdict(f), "ratio": f.ratio} for f in self.figures],
            "details": self.details,
        }


def _number(value: float | None) -> str:
    if value is None:
        return ""
    if value == 0 or abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def _verdict(figure: Figure) -> str:
    if figure.met is None:
        return ""
    return f"{'met' if figure.met else 'MISSED'}: {figure.target}"


def render(sections: Sequence[Section]) -> str:
    """One table: section, measure, ours, baseline, ratio, unit, target."""
    header = ("benchmark", "measure", "ours", "baseline", "ratio", "unit", "target")
    rows: list[tuple[str, ...]] = []
    for section in sections:
        if section.error is not None:
            rows.append((section.name, "NOT MEASURED", section.error[:60], "", "", "", ""))
            continue
        rows.extend(
            (
                section.name,
                figure.measure,
                _number(figure.value),
                _number(figure.baseline),
                _number(figure.ratio),
                figure.unit,
                _verdict(figure),
            )
            for figure in section.figures
        )
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in (header, *rows)
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def failed(sections: Iterable[Section]) -> list[str]:
    return [section.name for section in sections if section.error is not None]
