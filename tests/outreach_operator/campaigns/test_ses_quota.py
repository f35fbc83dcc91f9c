"""A plan against the account's SES quota: the rate per second, and the busiest 24 hours of sends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from outreach_operator.campaigns.ses_quota import SendQuota, busiest_24_hours, quota_problems

NOW = datetime(2027, 3, 1, 8, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def _quota(rate: float = 14.0, daily: float = 50_000.0, sent: float = 0.0) -> SendQuota:
    return SendQuota(
        region="eu-central-1", max_send_rate=rate, max_24_hour_send=daily, sent_last_24_hours=sent
    )


def test_a_rate_above_max_send_rate_is_named_with_both_figures() -> None:
    assert quota_problems([NOW], 840, _quota(), NOW) == []
    [problem] = quota_problems([NOW], 900, _quota(), NOW)
    assert problem.startswith(
        "max_per_minute 900 is 15.0 emails/s; the account's SES sending rate in eu-central-1 is 14.0/s "
        "(GetAccount MaxSendRate)"
    )


def test_the_busiest_24_hours_are_found_anywhere_in_the_plan() -> None:
    # 2 on the first day; 3 in the 24 hours from day 2 at 20:00 to day 3 at 19:00.
    times = [NOW, NOW + HOUR, NOW + 36 * HOUR, NOW + 50 * HOUR, NOW + 59 * HOUR, NOW + 61 * HOUR]
    busiest = busiest_24_hours(times, NOW, 0)
    assert (busiest.planned, busiest.end) == (3, NOW + 59 * HOUR)
    assert quota_problems(times, 1, _quota(daily=3), NOW) == []
    [problem] = quota_problems(times, 1, _quota(daily=2), NOW)
    assert problem.startswith(
        f"3 emails are due in the 24 h up to {(NOW + 59 * HOUR).isoformat()}: 3; the account's SES 24-hour "
        "quota in eu-central-1 is 2 (GetAccount Max24HourSend)"
    )


def test_the_emails_sent_in_the_last_24_hours_count_only_within_24_hours_of_now() -> None:
    first_day = [NOW + HOUR, NOW + 2 * HOUR]
    later = [NOW + 30 * HOUR, NOW + 31 * HOUR, NOW + 32 * HOUR]
    busiest = busiest_24_hours(first_day + later, NOW, 2)
    assert (busiest.planned, busiest.sent_before, busiest.total) == (2, 2, 4)
    [problem] = quota_problems(first_day + later, 1, _quota(daily=3, sent=2), NOW)
    assert " plus 2 sent in the last 24 h: 4;" in problem
    assert busiest_24_hours(later, NOW, 2).total == 3


def test_a_24_hour_quota_of_minus_one_is_no_limit() -> None:
    assert quota_problems([NOW] * 1000, 60, _quota(daily=-1, sent=10**6), NOW) == []
