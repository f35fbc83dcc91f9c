"""The per-address first-contact rule: whatever order first contacts are asked for in, the moments it
gives keep the gap between any two and never more than the cap in any rolling 30 days; each bound
shown to fail on an off-by-one of the rule."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from outreach.contacts import FirstContactRule
from outreach.contacts.first_contact_rule import PERIOD_SECONDS

DAY = 86_400
rules = st.builds(
    FirstContactRule,
    gap_seconds=st.sampled_from([0, 1, 3_600, 7 * DAY, 20 * DAY]),
    per_period=st.integers(min_value=1, max_value=4),
)
# Moments (whole seconds) across 90 days, asked for in any order: another worker's clock may be behind.
asks = st.lists(st.integers(min_value=0, max_value=90 * DAY), min_size=1, max_size=12)


def _granted(rule: FirstContactRule, moments: list[int]) -> list[float]:
    taken: list[float] = []
    for at in moments:
        taken.append(rule.next_free(taken, at))
    return taken


def _violations(rule: FirstContactRule, taken: list[float]) -> list[str]:
    ordered = sorted(taken)
    found = [
        f"{a} and {b} closer than {rule.gap_seconds}"
        for i, a in enumerate(ordered)
        for b in ordered[i + 1 :]
        if b - a < rule.gap_seconds
    ]
    for end in ordered:
        inside = [x for x in ordered if end - rule.period_seconds < x <= end]
        if len(inside) > rule.per_period:
            found.append(f"{len(inside)} first contacts in the 30 days to {end}")
    return found


@settings(max_examples=300, deadline=None)
@given(rule=rules, moments=asks)
def test_first_contacts_granted_in_any_order_keep_the_gap_and_the_30_day_cap(
    rule: FirstContactRule, moments: list[int]
) -> None:
    granted = _granted(rule, moments)
    assert _violations(rule, granted) == []
    for asked, given_at in zip(moments, granted, strict=True):
        assert given_at >= asked


@settings(max_examples=200, deadline=None)
@given(rule=rules, moments=asks)
def test_a_granted_moment_is_the_earliest_the_rule_allows(rule: FirstContactRule, moments: list[int]) -> None:
    taken: list[float] = []
    for at in moments:
        free = rule.next_free(taken, at)
        assert rule.allows(taken, free)
        # Nothing between the ask and the grant is allowed, checked at each whole second before it
        # that a constraint could end at (the rule's candidates) and one second before the grant.
        for earlier in {
            at,
            free - 1,
            *(x + rule.gap_seconds for x in taken),
            *(x + PERIOD_SECONDS for x in taken),
        }:
            if at <= earlier < free:
                assert not rule.allows(taken, earlier), (earlier, free)
        taken.append(free)


def test_a_first_contact_exactly_one_gap_after_another_is_allowed_and_one_second_earlier_is_not() -> None:
    rule = FirstContactRule(gap_seconds=7 * DAY, per_period=5)
    assert rule.allows([0.0], 7 * DAY)
    assert not rule.allows([0.0], 7 * DAY - 1)
    assert rule.next_free([0.0], 3_600) == 7 * DAY


def test_the_cap_counts_a_rolling_30_days_whose_first_moment_has_left() -> None:
    rule = FirstContactRule(gap_seconds=0, per_period=2)
    taken = [0.0, 10 * DAY]
    assert not rule.allows(taken, 29 * DAY)
    assert rule.next_free(taken, 29 * DAY) == PERIOD_SECONDS
    assert rule.allows(taken, PERIOD_SECONDS)


class _GapOffByOne(FirstContactRule):
    def allows(self, taken, at):  # type: ignore[no-untyped-def]
        if any(abs(at - x) < self.gap_seconds - 1 for x in taken):
            return False
        return self._window_holds(taken, at)


class _CapOffByOne(FirstContactRule):
    def _window_holds(self, taken, at):  # type: ignore[no-untyped-def]
        ends = [at, *(x for x in taken if at <= x < at + self.period_seconds)]
        return all(
            sum(1 for x in taken if end - self.period_seconds < x <= end) <= self.per_period for end in ends
        )


class _WindowEdgeOffByOne(FirstContactRule):
    def _window_holds(self, taken, at):  # type: ignore[no-untyped-def]
        ends = [at, *(x for x in taken if at <= x < at + self.period_seconds)]
        return all(
            sum(1 for x in taken if end - self.period_seconds + 1 < x <= end) < self.per_period
            for end in ends
        )


@pytest.mark.parametrize(
    ("mutant", "moments"),
    [
        pytest.param(_GapOffByOne(gap_seconds=3_600, per_period=4), [0, 3_599], id="gap-minus-one"),
        pytest.param(_CapOffByOne(gap_seconds=0, per_period=2), [0, 0, 0], id="cap-plus-one"),
        pytest.param(
            _WindowEdgeOffByOne(gap_seconds=0, per_period=1),
            [0, PERIOD_SECONDS - 1],
            id="window-a-second-short",
        ),
    ],
)
def test_each_bound_fails_the_property_on_an_off_by_one(mutant: FirstContactRule, moments: list[int]) -> None:
    honest = FirstContactRule(mutant.gap_seconds, mutant.per_period)
    assert _violations(honest, _granted(mutant, moments)) != []
    assert _violations(honest, _granted(honest, moments)) == []
