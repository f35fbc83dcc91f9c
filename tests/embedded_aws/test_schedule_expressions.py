"""AWS cron() in a time zone, daylight saving time, and flexible-window offsets (schedule-types.html)."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from embedded_aws.errors import InvalidScheduleExpressionError
from embedded_aws.schedule_expressions import CronExpression, flexible_offset

BERLIN = "Europe/Berlin"


def _firings(expression: str, start: datetime, count: int, timezone: str = "UTC") -> list[str]:
    """The next ``count`` firings after ``start`` as local ISO times ("-" once none is left)."""
    cron = CronExpression.parse(expression)
    assert cron is not None
    moment: float | None = start.timestamp()
    out = []
    for _ in range(count):
        assert moment is not None
        moment = cron.next_after(moment, timezone)
        if moment is None:
            out.append("-")
            break
        out.append(datetime.fromtimestamp(moment, tz=ZoneInfo(timezone)).strftime("%Y-%m-%d %H:%M %z"))
    return out


def test_a_daily_0230_berlin_cron_is_skipped_on_the_spring_forward_day() -> None:
    # GIVEN a daily 02:30 schedule in Europe/Berlin, the day before 29 March 2026 (02:00 -> 03:00)
    start = datetime(2026, 3, 27, 12, tzinfo=ZoneInfo(BERLIN))
    # WHEN its firings are computed THEN 29 March has none: 02:30 does not exist that day
    assert _firings("cron(30 2 * * ? *)", start, 3, BERLIN) == [
        "2026-03-28 02:30 +0100",
        "2026-03-30 02:30 +0200",
        "2026-03-31 02:30 +0200",
    ]


def test_a_daily_0230_berlin_cron_fires_once_on_the_fall_back_day() -> None:
    # GIVEN the same schedule before 25 October 2026, when 02:00-03:00 happens twice
    start = datetime(2026, 10, 24, 12, tzinfo=ZoneInfo(BERLIN))
    # WHEN its firings are computed THEN 25 October has one, at the first 02:30 (summer time)
    assert _firings("cron(30 2 * * ? *)", start, 3, BERLIN) == [
        "2026-10-25 02:30 +0200",
        "2026-10-26 02:30 +0100",
        "2026-10-27 02:30 +0100",
    ]


def test_a_cron_asked_inside_the_repeated_hour_does_not_fire_that_hour_again() -> None:
    # GIVEN 02:40 of the second (winter-time) pass through 02:00-03:00 on 25 October 2026, after the
    # 02:30 of the first pass fired
    second_pass = datetime(2026, 10, 25, 0, 40, tzinfo=UTC)  # 02:40 +01:00
    cron = CronExpression.parse("cron(30 2 * * ? *)")
    assert cron is not None
    # WHEN the next firing is computed THEN it is the next day's 02:30
    following = cron.next_after(second_pass.timestamp(), BERLIN)
    assert following == datetime(2026, 10, 26, 2, 30, tzinfo=ZoneInfo(BERLIN)).timestamp()


def test_an_hourly_cron_fires_once_per_wall_clock_hour_across_the_fall_back() -> None:
    start = datetime(2026, 10, 25, 0, 30, tzinfo=ZoneInfo(BERLIN))
    assert _firings("cron(0 * * * ? *)", start, 4, BERLIN) == [
        "2026-10-25 01:00 +0200",
        "2026-10-25 02:00 +0200",
        "2026-10-25 03:00 +0100",
        "2026-10-25 04:00 +0100",
    ]


def test_cron_in_a_time_zone_fires_at_local_time_not_utc() -> None:
    start = datetime(2026, 7, 1, tzinfo=UTC)
    assert _firings("cron(0 9 * * ? *)", start, 1, "America/New_York") == ["2026-07-01 09:00 -0400"]


def test_cron_day_of_week_counts_1_to_7_from_sunday() -> None:
    # 2 is Monday in AWS's numbering (cronsim would read it as Tuesday); 2026-03-01 is a Sunday
    start = datetime(2026, 3, 1, tzinfo=UTC)
    assert _firings("cron(0 10 ? * 2 *)", start, 2) == ["2026-03-02 10:00 +0000", "2026-03-09 10:00 +0000"]
    assert _firings("cron(0 10 ? * 2-6 *)", datetime(2026, 3, 6, tzinfo=UTC), 2) == [
        "2026-03-06 10:00 +0000",
        "2026-03-09 10:00 +0000",
    ]
    assert _firings("cron(0 10 ? * 1,7 *)", start, 2) == ["2026-03-01 10:00 +0000", "2026-03-07 10:00 +0000"]


def test_cron_hash_picks_the_nth_weekday_of_the_month() -> None:
    # 6#3: the third Friday (6 = FRI); March 2026's Fridays are the 6th, 13th and 20th
    assert _firings("cron(0 10 ? * 6#3 *)", datetime(2026, 3, 1, tzinfo=UTC), 1) == ["2026-03-20 10:00 +0000"]
    assert _firings("cron(0 10 ? * FRI#3 *)", datetime(2026, 3, 1, tzinfo=UTC), 1) == [
        "2026-03-20 10:00 +0000"
    ]


def test_cron_l_is_the_last_day_of_the_month_or_of_the_week() -> None:
    start = datetime(2026, 2, 1, tzinfo=UTC)
    assert _firings("cron(0 10 L * ? *)", start, 2) == ["2026-02-28 10:00 +0000", "2026-03-31 10:00 +0000"]
    # L alone in day-of-week is Saturday; 6L is the month's last Friday
    assert _firings("cron(0 10 ? * L *)", start, 1) == ["2026-02-07 10:00 +0000"]
    assert _firings("cron(0 10 ? * 6L *)", start, 1) == ["2026-02-27 10:00 +0000"]


def test_cron_w_picks_the_weekday_nearest_the_day_within_the_month() -> None:
    # 15 Feb 2026 is a Sunday -> Monday 16th; 1 Feb 2026 is a Sunday -> Monday 2nd;
    # 1 Aug 2026 is a Saturday -> Monday 3rd (never back into July)
    assert _firings("cron(0 10 15W * ? *)", datetime(2026, 2, 1, tzinfo=UTC), 1) == ["2026-02-16 10:00 +0000"]
    assert _firings("cron(0 10 1W * ? *)", datetime(2026, 1, 31, tzinfo=UTC), 1) == ["2026-02-02 10:00 +0000"]
    assert _firings("cron(0 10 1W * ? *)", datetime(2026, 7, 31, tzinfo=UTC), 1) == ["2026-08-03 10:00 +0000"]


def test_cron_year_field_limits_the_firings_and_ends_them() -> None:
    start = datetime(2027, 10, 1, tzinfo=UTC)
    assert _firings("cron(0 10 L * ? 2026-2027)", start, 4) == [
        "2027-10-31 10:00 +0000",
        "2027-11-30 10:00 +0000",
        "2027-12-31 10:00 +0000",
        "-",
    ]


@pytest.mark.parametrize(
    "expression",
    [
        "cron(0 10 * * * *)",  # neither day field is '?'
        "cron(0 10 ? * ? *)",  # both are
        "cron(0 10 * * ?)",  # five fields
        "cron(61 10 * * ? *)",  # minute out of range
    ],
)
def test_a_cron_expression_aws_refuses_is_invalid(expression: str) -> None:
    with pytest.raises(InvalidScheduleExpressionError):
        CronExpression.parse(expression)


def test_a_non_cron_expression_is_not_parsed_as_cron() -> None:
    assert CronExpression.parse("rate(5 minutes)") is None


def test_a_flexible_window_spreads_occurrences_inside_it_reproducibly() -> None:
    # GIVEN a 15-minute FLEXIBLE window and 200 occurrences of one schedule
    window = {"Mode": "FLEXIBLE", "MaximumWindowInMinutes": 15}
    arn = "arn:aws:scheduler:us-east-1:123456789012:schedule/default/s"
    offsets = [flexible_offset(window, arn, 1_800_000_000 + 3600 * i) for i in range(200)]
    # THEN each lies inside the window, they are spread over it, and they repeat exactly
    assert all(0 <= o < 900 for o in offsets)
    assert min(offsets) < 100 and max(offsets) > 800
    assert offsets == [flexible_offset(window, arn, 1_800_000_000 + 3600 * i) for i in range(200)]


def test_a_window_mode_off_delivers_at_the_scheduled_time() -> None:
    assert flexible_offset({"Mode": "OFF"}, "arn", 1_800_000_000) == 0.0
    assert flexible_offset(None, "arn", 1_800_000_000) == 0.0
