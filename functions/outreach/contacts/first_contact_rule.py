"""The per-address rule on first contacts across every campaign: a gap between two, a cap per rolling 30 days.

A first contact is the first step of a campaign's sequence to an address; follow-ups are the same
conversation and are not counted. ``FirstContactRule(gap_seconds, per_period)``:

- no two first contacts to an address closer than ``gap_seconds`` (either order: a slot taken a
  moment "later" by another worker's clock counts as much as an earlier one);
- at most ``per_period`` first contacts in any rolling ``period_seconds`` (30 days): for every ``t``,
  the contacts in ``(t - period, t]`` number ``per_period`` or fewer.

``allows`` decides one candidate moment exactly; ``next_free`` is the earliest moment at or after a
given one that ``allows``. A constraint can only start to hold at ``at`` itself, at a taken moment plus
the gap, or at a taken moment plus the period, so those are the only candidates ``next_free`` tries.
Defaults (modules/email, ``first_contact``): 7 days between two, 2 per 30 days
(docs/operator-cli.md, "First contacts per address, across campaigns").
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

PERIOD_SECONDS = 30 * 86_400


@dataclass(frozen=True)
class FirstContactRule:
    """The gap between two first contacts to one address and the cap per rolling period (seconds)."""

    gap_seconds: int
    per_period: int
    period_seconds: int = PERIOD_SECONDS

    def __post_init__(self) -> None:
        if self.gap_seconds < 0:
            raise ValueError(f"gap_seconds must be >= 0, got {self.gap_seconds}")
        if self.per_period < 1:
            raise ValueError(f"per_period must be >= 1, got {self.per_period}")
        if self.period_seconds < 1:
            raise ValueError(f"period_seconds must be >= 1, got {self.period_seconds}")

    @property
    def memory_seconds(self) -> int:
        """How long a taken moment can still refuse a new one: older ones may be forgotten."""
        return max(self.gap_seconds, self.period_seconds)

    def _window_holds(self, taken: Collection[float], at: float) -> bool:
        """Whether every rolling period that contains ``at`` holds fewer than ``per_period`` of ``taken``.

        The periods containing ``at`` are ``(t - period, t]`` for ``t`` in ``[at, at + period)``; their
        count of ``taken`` only grows where ``t`` reaches a taken moment, so those ``t`` (and ``at``)
        are the ones to check.
        """
        ends = [at, *(x for x in taken if at <= x < at + self.period_seconds)]
        for end in ends:
            inside = sum(1 for x in taken if end - self.period_seconds < x <= end)
            if inside >= self.per_period:
                return False
        return True

    def allows(self, taken: Collection[float], at: float) -> bool:
        """Whether one more first contact at ``at`` keeps the gap to each of ``taken`` and the cap."""
        if any(abs(at - x) < self.gap_seconds for x in taken):
            return False
        return self._window_holds(taken, at)

    def next_free(self, taken: Collection[float], at: float) -> float:
        """The earliest moment at or after ``at`` that ``allows`` one more first contact."""
        candidates = sorted(
            {at}
            | {x + self.gap_seconds for x in taken if x + self.gap_seconds > at}
            | {x + self.period_seconds for x in taken if x + self.period_seconds > at}
        )
        for candidate in candidates:
            if self.allows(taken, candidate):
                return candidate
        # Not reached: the last candidate is past every taken moment by the gap and by the period,
        # where nothing refuses.
        return candidates[-1]
