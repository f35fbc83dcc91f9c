"""The warm-up ramp rule: day n of the schedule has its cap from the start date on, none after the last
day or without a start, never above the account's 24-hour quota; malformed schedules refused."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from outreach import config
from outreach.errors import ConfigurationError
from outreach.warmup_ramp import WarmupRamp, effective_cap, next_utc_day_start, parse_start, utc_day

START = date(2027, 3, 1)
schedules = st.lists(st.integers(min_value=1, max_value=5_000), min_size=1, max_size=40).map(
    lambda caps: tuple(sorted(caps))
)
quotas = st.one_of(st.just(-1.0), st.floats(min_value=0, max_value=10_000, allow_nan=False))


def _expected(caps: tuple[int, ...], day: date, quota: float) -> int | None:
    """The cap the schedule documents for ``day``, read independently of the rule under test."""
    by_date = {START + timedelta(days=n): cap for n, cap in enumerate(caps)}
    if day > START + timedelta(days=len(caps) - 1):
        return None
    ramp = by_date.get(day, caps[0])
    return ramp if quota < 0 else min(ramp, int(quota))


@settings(max_examples=300, deadline=None)
@given(caps=schedules, offset=st.integers(min_value=-5, max_value=60), quota=quotas)
def test_the_cap_of_a_day_is_its_schedule_entry_under_the_accounts_quota(
    caps: tuple[int, ...], offset: int, quota: float
) -> None:
    ramp = WarmupRamp(START, caps)
    day = START + timedelta(days=offset)
    assert ramp.cap(day, quota) == _expected(caps, day, quota)


def test_day_one_is_the_start_date_and_the_last_entry_the_last_day_with_a_cap() -> None:
    ramp = WarmupRamp(START, (10, 20, 40))
    assert [ramp.ramp_cap(START + timedelta(days=n)) for n in (-1, 0, 1, 2, 3)] == [10, 10, 20, 40, None]
    assert ramp.last_day == START + timedelta(days=2)


def test_an_established_identity_has_no_ramp_cap() -> None:
    assert WarmupRamp(None, (10,)).cap(START, 200.0) is None


def test_the_accounts_quota_is_the_ceiling_and_minus_one_is_no_quota() -> None:
    assert effective_cap(500, 200.0) == 200
    assert effective_cap(500, 200.9) == 200
    assert effective_cap(50, 200.0) == 50
    assert effective_cap(50, -1.0) == 50


@pytest.mark.parametrize(
    ("caps", "message"),
    [
        ((), "1 to 366"),
        ((5, 4), "must not decrease"),
        ((0,), "day 1"),
        ((True,), "day 1"),
        (tuple(range(1, 368)), "1 to 366"),
    ],
)
def test_a_malformed_schedule_is_refused_naming_what_is_wrong(caps: tuple[int, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        WarmupRamp(START, caps)


def test_a_utc_day_ends_at_midnight_utc() -> None:
    instant = 1_803_000_000.0  # 2027-02-19 01:20 UTC
    assert next_utc_day_start(instant) == 1_803_081_600.0  # 2027-02-20 00:00 UTC
    assert utc_day(next_utc_day_start(instant)) == utc_day(instant) + timedelta(days=1)


@pytest.mark.parametrize(
    ("start", "caps", "variable"),
    [
        ("2027-02-30", "1,2", "WARMUP_START_DATE"),
        ("27-2-3", "1,2", "WARMUP_START_DATE"),
        ("none", "1,x", "WARMUP_DAILY_CAPS"),
        ("none", "3,2", "WARMUP_DAILY_CAPS"),
    ],
)
def test_a_malformed_ramp_setting_fails_naming_its_variable(
    start: str, caps: str, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WARMUP_START_DATE", start)
    monkeypatch.setenv("WARMUP_DAILY_CAPS", caps)
    with pytest.raises(ConfigurationError, match=variable):
        config.warmup_ramp()


def test_none_is_an_established_identity() -> None:
    assert parse_start("none") is None
    assert parse_start("2027-03-01") == START
