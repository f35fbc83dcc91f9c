"""The sending identity's count per UTC day, taken with the real conditional write (moto): for any ramp,
start, quota and sequence of send attempts of any campaigns at any moments, no UTC day counts more
emails than its effective cap, and none is refused while the day has room; shown to fail on an
off-by-one of the condition (``<`` -> ``<=``) and of the ramp's day."""

from __future__ import annotations

import itertools
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from outreach import contacts
from outreach.contacts import identity_days
from outreach.warmup_ramp import WarmupRamp, utc_day
from tests.support.aws import Resources

START = date(2027, 3, 1)
DAY = 86_400
EPOCH_START = datetime(2027, 3, 1, tzinfo=UTC).timestamp()
_domains = itertools.count()

ramps = st.builds(
    WarmupRamp,
    start=st.one_of(st.none(), st.just(START)),
    daily_caps=st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=5).map(
        lambda caps: tuple(sorted(caps))
    ),
)
quotas = st.sampled_from([-1.0, 0.0, 1.0, 3.0, 50.0])
# Each attempt: the campaign it is of and its moment, from a day before the start to a week after, in
# the order the workers happen to make them (clocks and schedules interleave them).
attempts = st.lists(
    st.tuples(st.sampled_from(["spring", "winter", "autumn"]), st.integers(-DAY, 7 * DAY)),
    min_size=1,
    max_size=40,
)


def _documented_cap(ramp: WarmupRamp, day: date, quota: float) -> int | None:
    """The schedule's cap on ``day`` read straight off the list (day 1 = start), under the quota."""
    if ramp.start is None:
        return None
    number = (day - ramp.start).days + 1
    if number > len(ramp.daily_caps):
        return None
    cap = ramp.daily_caps[max(number, 1) - 1]
    return cap if quota < 0 else min(cap, int(quota))


def _stored_count(domain: str, day: date) -> int:
    key = contacts.identity_day_key(domain, day)
    return int(contacts.reads.records([key]).get(key, {}).get(identity_days.COUNT, 0))


def _run(ramp: WarmupRamp, quota: float, moments: list[tuple[str, int]]) -> tuple[str, Counter[date]]:
    """Every attempt as the worker makes it: the day's effective cap, then the conditional take."""
    domain = f"d{next(_domains)}.example"
    sent: Counter[date] = Counter()
    for _campaign, offset in moments:
        day = utc_day(EPOCH_START + offset)
        cap = ramp.cap(day, quota)
        if cap is None or contacts.take_identity_send(domain, day, cap):
            sent[day] += 1
    return domain, sent


def _over_cap(ramp: WarmupRamp, quota: float, moments: list[tuple[str, int]]) -> list[str]:
    domain, sent = _run(ramp, quota, moments)
    asked = Counter(utc_day(EPOCH_START + offset) for _c, offset in moments)
    found = []
    for day, count in asked.items():
        cap = _documented_cap(ramp, day, quota)
        if cap is None:
            continue
        if sent[day] > cap or _stored_count(domain, day) > cap:
            found.append(f"{day}: {sent[day]} sent, {_stored_count(domain, day)} counted, cap {cap}")
        if sent[day] < min(count, cap):
            found.append(f"{day}: {sent[day]} sent of {count} asked under a cap of {cap}")
    return found


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ramp=ramps, quota=quotas, moments=attempts)
def test_no_utc_day_counts_more_emails_than_its_warmup_cap_and_none_is_refused_below_it(
    resources: Resources, ramp: WarmupRamp, quota: float, moments: list[tuple[str, int]]
) -> None:
    assert _over_cap(ramp, quota, moments) == []


def test_a_days_count_expires_a_week_after_its_day(resources: Resources) -> None:
    assert contacts.take_identity_send("example.com", START, 1)
    key = contacts.identity_day_key("example.com", START)
    stored: dict[str, Any] = contacts.reads.records([key])[key]
    expires = datetime.fromtimestamp(int(stored[identity_days.EXPIRES_AT]), UTC)
    assert expires == datetime(2027, 3, 9, tzinfo=UTC)
    assert not contacts.take_identity_send("example.com", START, 1)
    assert contacts.take_identity_send("example.com", START + timedelta(days=1), 1)


class _RampDayOffByOne(WarmupRamp):
    """Day n read as day n + 1: the next (larger) day's cap."""

    def ramp_cap(self, day: date) -> int | None:
        return super().ramp_cap(day + timedelta(days=1)) or self.daily_caps[-1]


def test_the_property_fails_when_the_condition_lets_one_more_through(
    resources: Resources, monkeypatch: pytest.MonkeyPatch
) -> None:
    ramp, moments = WarmupRamp(START, (2,)), [("spring", 10), ("winter", 20), ("spring", 30)]
    assert _over_cap(ramp, -1.0, moments) == []
    monkeypatch.setattr(identity_days, "UNDER_CAP", identity_days.UNDER_CAP.replace("<", "<="))
    assert _over_cap(ramp, -1.0, moments) == ["2027-03-01: 3 sent, 3 counted, cap 2"]


def test_the_property_fails_when_the_ramp_reads_the_next_days_cap(resources: Resources) -> None:
    moments = [("spring", 10), ("winter", 20), ("spring", 30)]
    assert _over_cap(WarmupRamp(START, (1, 3)), -1.0, moments) == []
    assert _over_cap(_RampDayOffByOne(START, (1, 3)), -1.0, moments) != []


def test_the_property_fails_when_the_quota_is_not_the_ceiling(
    resources: Resources, monkeypatch: pytest.MonkeyPatch
) -> None:
    moments = [("spring", 10), ("winter", 20), ("spring", 30)]
    monkeypatch.setattr("outreach.warmup_ramp.effective_cap", lambda ramp_cap, _quota: ramp_cap)
    assert _over_cap(WarmupRamp(START, (5,)), 1.0, moments) != []
