"""The send plan: inside the window, under the rate, follow-ups after their days, the same every time."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, time, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from outreach import task_store
from outreach_operator.campaigns import message_caps
from outreach_operator.campaigns.campaign_file import WEEKDAYS, Campaign, parse_campaign
from outreach_operator.campaigns.planning import CampaignPlan, plan_campaign
from outreach_operator.campaigns.recipients import Recipient
from outreach_operator.campaigns.send_window import inside, next_open
from tests.outreach_operator.campaigns.conftest import campaign_data

# Zones with summer time both ways round, a 30-minute shift (Lord Howe) and a 45-minute offset.
ZONES = [
    "Europe/Berlin",
    "America/New_York",
    "Australia/Sydney",
    "Australia/Lord_Howe",
    "Asia/Kathmandu",
    "UTC",
]


def _recipients(count: int) -> list[Recipient]:
    """``count`` recipients, each at a domain of its own (the domain pacing has its own tests)."""
    return [
        Recipient(row=i + 2, source=f"r.csv:{i + 2}", email=f"r@c{i}.example", values={"company": f"C{i}"})
        for i in range(count)
    ]


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[Campaign, list[Recipient], datetime]:
    days = draw(st.lists(st.sampled_from(WEEKDAYS), min_size=1, max_size=7, unique=True))
    start_hour = draw(st.integers(0, 22))
    start_minute = draw(st.sampled_from([0, 15, 30, 45]))
    end_hour = draw(st.integers(start_hour + 1, 23))
    follow_ups = draw(st.lists(st.integers(1, 9), max_size=2))
    steps: list[dict[str, Any]] = [{"subject": "Hi {{ company }}", "text": "t"}]
    steps += [{"after_days": n, "subject": "Again", "text": "t"} for n in follow_ups]
    data = campaign_data(
        window={
            "weekdays": days,
            "start": f"{start_hour:02d}:{start_minute:02d}",
            "end": f"{end_hour:02d}:00",
            "timezone": draw(st.sampled_from(ZONES)),
        },
        max_per_minute=draw(st.integers(1, 7)),
        steps=steps,
    )
    # Around the 2026/2027 clock changes of both hemispheres, and anywhere in between.
    start = draw(
        st.datetimes(min_value=datetime(2026, 3, 20), max_value=datetime(2027, 4, 10), timezones=st.just(UTC))
    )
    return parse_campaign(data), _recipients(draw(st.integers(1, 60))), start


@settings(max_examples=80, deadline=None)
@given(scenarios())
def test_no_send_outside_the_window(scenario: tuple[Campaign, list[Recipient], datetime]) -> None:
    campaign, recipients, start = scenario
    window = campaign.window
    for email in plan_campaign(campaign, recipients, start).emails:
        local = email.send_at.astimezone(window.zone)
        assert local.weekday() in window.weekday_numbers, email
        assert window.start <= local.time() < window.end, email
        assert email.send_at >= start


@settings(max_examples=80, deadline=None)
@given(scenarios())
def test_no_minute_above_the_rate(scenario: tuple[Campaign, list[Recipient], datetime]) -> None:
    campaign, recipients, start = scenario
    per_minute = Counter(
        int(e.send_at.timestamp()) // 60 for e in plan_campaign(campaign, recipients, start).emails
    )
    assert max(per_minute.values()) <= campaign.max_per_minute


@settings(max_examples=40, deadline=None)
@given(scenarios())
def test_follow_up_comes_its_days_after_the_previous_step_or_later(
    scenario: tuple[Campaign, list[Recipient], datetime],
) -> None:
    campaign, recipients, start = scenario
    plan = plan_campaign(campaign, recipients, start)
    zone = campaign.window.zone
    sent = {(e.message.to, e.step): e.send_at for e in plan.emails}
    for (to, step), send_at in sent.items():
        if step > 1:
            previous = sent[(to, step - 1)].astimezone(zone)
            gap = send_at.astimezone(zone).date() - previous.date()
            assert gap >= timedelta(days=campaign.steps[step - 1].after_days)
            assert send_at > previous


@settings(max_examples=20, deadline=None)
@given(scenarios())
def test_same_inputs_give_the_same_plan(scenario: tuple[Campaign, list[Recipient], datetime]) -> None:
    campaign, recipients, start = scenario
    assert _summary(plan_campaign(campaign, recipients, start)) == _summary(
        plan_campaign(campaign, list(recipients), start)
    )


def _summary(plan: CampaignPlan) -> list[tuple[str, int, str, str]]:
    return [(e.task_id, e.step, e.send_at.isoformat(), e.schedule_name) for e in plan.emails]


def test_one_planned_email_per_recipient_and_step() -> None:
    campaign = parse_campaign(campaign_data())
    plan = plan_campaign(campaign, _recipients(25), datetime(2027, 3, 1, 8, 0, tzinfo=UTC))
    assert len(plan.emails) == 50
    assert len({e.task_id for e in plan.emails}) == 50
    assert Counter(e.step for e in plan.emails) == {1: 25, 2: 25}
    assert {e.timezone for e in plan.emails} == {"Europe/Berlin"}


def test_rate_spreads_a_minute_over_its_seconds() -> None:
    campaign = parse_campaign(campaign_data(max_per_minute=4, steps=[{"subject": "s", "text": "t"}]))
    start = datetime(2027, 3, 1, 9, 0, tzinfo=UTC)  # a Monday, 10:00 in Berlin
    plan = plan_campaign(campaign, _recipients(6), start)
    assert [e.send_at.astimezone(UTC).strftime("%H:%M:%S") for e in plan.emails] == [
        "09:00:00",
        "09:00:15",
        "09:00:30",
        "09:00:45",
        "09:01:00",
        "09:01:15",
    ]


def test_window_follows_summer_time_in_its_own_zone() -> None:
    campaign = parse_campaign(campaign_data())
    # Friday 27 March 2026, 18:00 in Berlin (CET): the window reopens Monday 09:00, which is CEST.
    opened = next_open(campaign.window, datetime(2026, 3, 27, 17, 0, tzinfo=UTC))
    assert opened == datetime(2026, 3, 30, 7, 0, tzinfo=UTC)
    assert opened.astimezone(campaign.window.zone).time() == time(9, 0)


def test_follow_up_keeps_its_local_hour_across_a_clock_change() -> None:
    data = campaign_data(window={**campaign_data()["window"], "weekdays": list(WEEKDAYS)})
    campaign = parse_campaign(data)
    plan = plan_campaign(campaign, _recipients(1), datetime(2026, 3, 27, 9, 30, tzinfo=UTC))  # 10:30 CET
    first, follow_up = (e.send_at.astimezone(campaign.window.zone) for e in plan.emails)
    assert (first.time(), follow_up.time()) == (time(10, 30), time(10, 30))
    assert follow_up.date() - first.date() == timedelta(days=3)
    assert follow_up.astimezone(UTC) - first.astimezone(UTC) == timedelta(days=3) - timedelta(hours=1)


def test_window_skips_a_local_start_time_that_does_not_exist() -> None:
    data = campaign_data(
        window={"weekdays": list(WEEKDAYS), "start": "02:30", "end": "04:00", "timezone": "Europe/Berlin"}
    )
    window = parse_campaign(data).window
    # 29 March 2026: Berlin's clocks jump from 02:00 to 03:00, so the window opens at 03:00 local.
    opened = next_open(window, datetime(2026, 3, 28, 23, 0, tzinfo=UTC))
    assert opened == datetime(2026, 3, 29, 1, 0, tzinfo=UTC)
    assert inside(window, opened)
    assert not inside(window, opened - timedelta(seconds=1))


def test_window_opens_twice_in_a_repeated_hour() -> None:
    data = campaign_data(
        window={"weekdays": list(WEEKDAYS), "start": "02:15", "end": "02:45", "timezone": "Europe/Berlin"}
    )
    window = parse_campaign(data).window
    # 25 October 2026: Berlin's 02:00-03:00 happens twice (CEST, then CET).
    first = next_open(window, datetime(2026, 10, 24, 23, 0, tzinfo=UTC))
    second = next_open(window, first + timedelta(minutes=30))
    assert (first, second) == (
        datetime(2026, 10, 25, 0, 15, tzinfo=UTC),
        datetime(2026, 10, 25, 1, 15, tzinfo=UTC),
    )


@pytest.mark.parametrize("follow_up_days", [0, 7])
def test_a_start_in_the_second_reading_of_a_repeated_hour_plans_nothing_before_it(
    follow_up_days: int,
) -> None:
    steps: list[dict[str, Any]] = [{"subject": "Hi {{ company }}", "text": "t"}]
    if follow_up_days:
        steps.append({"after_days": follow_up_days, "subject": "Again", "text": "t"})
    window = {"weekdays": list(WEEKDAYS), "start": "00:00", "end": "02:00", "timezone": "Australia/Lord_Howe"}
    campaign = parse_campaign(campaign_data(window=window, max_per_minute=1, steps=steps))
    # 5 April 2026: Lord Howe's clocks go back half an hour at 02:00, so 01:30-02:00 happens twice;
    # 15:00 UTC is 01:30 of the second reading (+10:30).
    start = datetime(2026, 4, 4, 15, 0, tzinfo=UTC)
    emails = plan_campaign(campaign, _recipients(3), start).emails
    firsts = sorted(e.send_at.astimezone(UTC) for e in emails if e.step == 1)
    assert firsts == [start + timedelta(minutes=n) for n in range(3)]
    assert all(e.send_at >= start for e in emails)


def _without_message_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The message caps (``message_caps``) keep every message under the row limit; lifted here so that
    the row's own check, the backstop behind them, is what refuses."""
    monkeypatch.setattr(message_caps, "TEXT_BYTES", 1024 * 1024)
    monkeypatch.setattr(message_caps, "MESSAGE_BYTES", 1024 * 1024)


def test_a_recipient_whose_task_row_would_be_over_the_item_limit_gets_no_email_and_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _without_message_caps(monkeypatch)
    steps = [
        {"subject": "Hi {{ company }}", "text": "t"},
        {"after_days": 3, "subject": "s", "text": "{{ notes }}"},
    ]
    campaign = parse_campaign(campaign_data(steps=steps))
    recipients = [
        Recipient(row=2, source="r.csv:2", email="ok@example.org", values={"company": "A", "notes": "n"}),
        Recipient(
            row=3, source="r.csv:3", email="big@example.org", values={"company": "B", "notes": "n" * 410_000}
        ),
    ]
    plan = plan_campaign(campaign, recipients, datetime(2027, 3, 1, 8, 0, tzinfo=UTC))
    assert {e.message.to for e in plan.emails} == {"ok@example.org"}
    [rejected] = plan.rejected
    assert (rejected.row, rejected.source, rejected.value) == (3, "r.csv:3", "big@example.org")
    size = int(rejected.reason.split(" would be ")[1].split(" bytes")[0].replace(",", ""))
    assert size > 410_000
    assert rejected.reason.startswith(
        f"steps.1: the task row would be {size:,} bytes, DynamoDB's item limit is 400 KB"
    )


def test_a_task_row_is_measured_as_the_task_store_writes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_message_caps(monkeypatch)
    start = datetime(2027, 3, 1, 8, 0, tzinfo=UTC)

    def plan_with_text(text: str) -> CampaignPlan:
        steps = [{"subject": "Hi {{ company }}", "text": text}]
        return plan_campaign(parse_campaign(campaign_data(steps=steps)), _recipients(1), start)

    one_t = task_store.email_row_size(plan_with_text("t").emails[0])
    fits = plan_with_text("t" * (1 + task_store.MAX_ROW_BYTES - one_t))
    assert (len(fits.emails), fits.rejected) == (1, [])
    assert task_store.email_row_size(fits.emails[0]) == task_store.MAX_ROW_BYTES
    over = plan_with_text("t" * (2 + task_store.MAX_ROW_BYTES - one_t))
    assert (over.emails, [r.row for r in over.rejected]) == ([], [2])
