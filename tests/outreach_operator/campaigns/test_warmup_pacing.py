"""The warm-up ramp in the plan: for any campaign, recipients, window, ramp and quota, no UTC day of the
plan holds more emails than the identity's effective cap, every email is still planned (held-back ones
move to a later day), inside its window and after the start; the checker shown to catch an off-by-one
of the pacing (``<`` -> ``<=``) and of the ramp's day."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from outreach.email_task import PlannedEmail
from outreach.warmup_ramp import WarmupRamp, next_utc_day_start, utc_day
from outreach_operator.campaigns.campaign_file import WEEKDAYS, Campaign, parse_campaign
from outreach_operator.campaigns.planning import plan_campaign
from outreach_operator.campaigns.recipients import Recipient
from outreach_operator.campaigns.send_window import inside
from outreach_operator.campaigns.warmup_pacing import WarmupPacing
from tests.outreach_operator.campaigns.conftest import campaign_data
from tests.outreach_operator.campaigns.plan_strategies import campaign_steps, send_windows, starts

ZONES = ["Europe/Berlin", "America/New_York", "Pacific/Kiritimati", "Asia/Kathmandu"]


def _recipients(count: int) -> list[Recipient]:
    return [
        Recipient(row=i + 2, source=f"r.csv:{i + 2}", email=f"p{i}@d{i % 5}.example", values={"company": "C"})
        for i in range(count)
    ]


def documented_cap(ramp: WarmupRamp, quota: float, day: date) -> int | None:
    """The schedule's cap on ``day`` read straight off the list (day 1 = start), under the quota."""
    if ramp.start is None or (day - ramp.start).days >= len(ramp.daily_caps):
        return None
    cap = ramp.daily_caps[max((day - ramp.start).days, 0)]
    return cap if quota < 0 else min(cap, int(quota))


def over_the_warmup_cap(ramp: WarmupRamp, quota: float, emails: list[PlannedEmail]) -> list[str]:
    """The UTC days holding more of the plan's emails than the identity's effective cap."""
    days = Counter(utc_day(email.send_at.timestamp()) for email in emails)
    return [
        f"{day}: {count} > {cap}"
        for day, count in sorted(days.items())
        if (cap := documented_cap(ramp, quota, day)) is not None and count > cap
    ]


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[Campaign, list[Recipient], datetime, WarmupRamp, float]:
    start = draw(starts())
    data = campaign_data(
        window=draw(send_windows(ZONES)),
        max_per_minute=draw(st.integers(1, 30)),
        pacing={"domain_daily_cap": draw(st.integers(1, 50)), "domain_min_gap_seconds": 0},
        steps=draw(campaign_steps()),
    )
    caps = tuple(sorted(draw(st.lists(st.integers(1, 6), min_size=1, max_size=6))))
    ramp_start = draw(
        st.one_of(st.none(), st.integers(-3, 3).map(lambda d: start.date() + timedelta(days=d)))
    )
    quota = draw(st.sampled_from([-1.0, 1.0, 2.0, 4.0, 1_000.0]))
    count = draw(st.integers(1, 30))
    return parse_campaign(data), _recipients(count), start, WarmupRamp(ramp_start, caps), quota


@settings(max_examples=150, deadline=None)
@given(scenarios())
def test_no_utc_day_of_the_plan_holds_more_emails_than_the_identitys_warmup_cap(
    scenario: tuple[Campaign, list[Recipient], datetime, WarmupRamp, float],
) -> None:
    campaign, recipients, start, ramp, quota = scenario
    emails = plan_campaign(campaign, recipients, start, warmup=WarmupPacing(ramp, quota)).emails
    assert len(emails) == len(recipients) * len(campaign.steps)
    assert over_the_warmup_cap(ramp, quota, emails) == []
    for email in emails:
        assert inside(campaign.window, email.send_at) and email.send_at >= start, email.send_at


def _campaign() -> Campaign:
    window = {"weekdays": list(WEEKDAYS), "start": "09:00", "end": "17:00", "timezone": "Europe/Berlin"}
    steps = [{"subject": "Hi", "text": "t"}]
    return parse_campaign(campaign_data(window=window, max_per_minute=60, steps=steps))


START = datetime(2027, 3, 1, 8, 0, tzinfo=UTC)  # 09:00 in Berlin


def test_held_back_emails_go_out_on_the_next_days_under_each_days_cap_and_the_report_says_so() -> None:
    warmup = WarmupPacing(WarmupRamp(START.date(), (2, 3)), -1.0)
    emails = plan_campaign(_campaign(), _recipients(7), START, warmup=warmup).emails
    days = Counter(e.send_at.astimezone(UTC).date().isoformat() for e in emails)
    assert days == {"2027-03-01": 2, "2027-03-02": 3, "2027-03-03": 2}
    assert warmup.report() == [
        {"day": "2027-03-01", "planned": 2, "cap": 2},
        {"day": "2027-03-02", "planned": 3, "cap": 3},
    ]
    # A held-back email keeps to the window's opening: 09:00 in Berlin on the next day.
    assert min(e.send_at for e in emails if e.send_at.date() == date(2027, 3, 2)) == START + timedelta(days=1)


def test_the_accounts_quota_caps_the_plan_below_the_ramp() -> None:
    warmup = WarmupPacing(WarmupRamp(START.date(), (5,)), 1.0)
    emails = plan_campaign(_campaign(), _recipients(3), START, warmup=warmup).emails
    assert Counter(utc_day(e.send_at.timestamp()) for e in emails)[START.date()] == 1


class _OneMoreEachDay(WarmupPacing):
    """The cap check off by one: a day at its cap takes one more."""

    def earliest(self, candidate: float) -> float:
        moment = candidate
        while True:
            day = utc_day(moment)
            cap = self.cap(day)
            if cap is None or self._per_day[day] <= cap:
                return moment
            moment = next_utc_day_start(moment)


class _RampDayOffByOne(WarmupPacing):
    """Day n read as day n + 1: the next (larger) day's cap, the last one's past the end."""

    def cap(self, day: date) -> int | None:
        return super().cap(day + timedelta(days=1)) or super().cap(day)


def test_the_checker_catches_a_pacing_that_lets_one_more_through_or_reads_the_next_days_cap() -> None:
    ramp = WarmupRamp(START.date(), (2, 3))
    honest = plan_campaign(_campaign(), _recipients(7), START, warmup=WarmupPacing(ramp, -1.0)).emails
    assert over_the_warmup_cap(ramp, -1.0, honest) == []
    one_more = plan_campaign(_campaign(), _recipients(7), START, warmup=_OneMoreEachDay(ramp, -1.0)).emails
    assert over_the_warmup_cap(ramp, -1.0, one_more) == ["2027-03-01: 3 > 2", "2027-03-02: 4 > 3"]
    next_day = plan_campaign(_campaign(), _recipients(7), START, warmup=_RampDayOffByOne(ramp, -1.0)).emails
    assert over_the_warmup_cap(ramp, -1.0, next_day) == ["2027-03-01: 3 > 2"]
