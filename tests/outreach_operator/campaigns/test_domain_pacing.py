"""Domain pacing in the plan: for any campaign, recipients and window, no recipient domain gets more
than its cap on one local day or two emails closer than its gap, and nothing leaves the window; each
checker below is shown to catch an off-by-one."""

from __future__ import annotations

import itertools
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from outreach.email_task import PlannedEmail
from outreach_operator.campaigns.campaign_file import WEEKDAYS, Campaign, CampaignFileError, parse_campaign
from outreach_operator.campaigns.domain_pacing import (
    DEFAULT_DOMAIN_DAILY_CAP,
    DEFAULT_DOMAIN_MIN_GAP_SECONDS,
    domain_of,
)
from outreach_operator.campaigns.planning import plan_campaign
from outreach_operator.campaigns.recipients import Recipient
from outreach_operator.campaigns.send_window import inside
from tests.outreach_operator.campaigns.conftest import campaign_data
from tests.outreach_operator.campaigns.plan_strategies import campaign_steps, send_windows, starts

ZONES = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu"]


def _recipients(domains: list[int]) -> list[Recipient]:
    return [
        Recipient(row=i + 2, source=f"r.csv:{i + 2}", email=f"p{i}@d{d}.example", values={"company": "C"})
        for i, d in enumerate(domains)
    ]


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[Campaign, list[Recipient], datetime]:
    data = campaign_data(
        window=draw(send_windows(ZONES)),
        max_per_minute=draw(st.integers(1, 30)),
        pacing={
            "domain_daily_cap": draw(st.integers(1, 8)),
            "domain_min_gap_seconds": draw(st.sampled_from([0, 1, 59, 60, 61, 300, 3600])),
        },
        steps=draw(campaign_steps()),
    )
    domains = draw(st.lists(st.integers(0, 3), min_size=1, max_size=40))
    return parse_campaign(data), _recipients(domains), draw(starts())


def over_the_daily_cap(campaign: Campaign, emails: list[PlannedEmail]) -> list[tuple[str, str]]:
    """The (domain, local day) pairs holding more emails than the cap."""
    zone = campaign.window.zone
    days = Counter((domain_of(e.message.to), e.send_at.astimezone(zone).date().isoformat()) for e in emails)
    return [key for key, count in days.items() if count > campaign.pacing.domain_daily_cap]


def inside_the_gap(campaign: Campaign, emails: list[PlannedEmail]) -> list[tuple[str, float]]:
    """The (domain, seconds) of each two emails to one domain closer than the gap."""
    times: dict[str, list[float]] = {}
    for email in emails:
        times.setdefault(domain_of(email.message.to), []).append(email.send_at.timestamp())
    close = []
    for domain, found in times.items():
        found.sort()
        close += [
            (domain, b - a)
            for a, b in itertools.pairwise(found)
            if b - a < campaign.pacing.domain_min_gap_seconds
        ]
    return close


@settings(max_examples=120, deadline=None)
@given(scenarios())
def test_no_recipient_domain_gets_more_than_its_cap_on_one_local_day(
    scenario: tuple[Campaign, list[Recipient], datetime],
) -> None:
    campaign, recipients, start = scenario
    emails = plan_campaign(campaign, recipients, start).emails
    assert len(emails) == len(recipients) * len(campaign.steps)
    assert over_the_daily_cap(campaign, emails) == []


@settings(max_examples=120, deadline=None)
@given(scenarios())
def test_no_two_emails_to_one_domain_are_closer_than_its_gap(
    scenario: tuple[Campaign, list[Recipient], datetime],
) -> None:
    campaign, recipients, start = scenario
    assert inside_the_gap(campaign, plan_campaign(campaign, recipients, start).emails) == []


@settings(max_examples=80, deadline=None)
@given(scenarios())
def test_a_paced_email_stays_inside_the_window_and_after_the_start(
    scenario: tuple[Campaign, list[Recipient], datetime],
) -> None:
    campaign, recipients, start = scenario
    for email in plan_campaign(campaign, recipients, start).emails:
        assert inside(campaign.window, email.send_at) and email.send_at >= start, email.send_at


def _paced(cap: int, gap: int, count: int = 5) -> tuple[Campaign, list[PlannedEmail]]:
    window = {"weekdays": list(WEEKDAYS), "start": "09:00", "end": "17:00", "timezone": "Europe/Berlin"}
    pacing = {"domain_daily_cap": cap, "domain_min_gap_seconds": gap}
    steps = [{"subject": "Hi", "text": "t"}]
    campaign = parse_campaign(campaign_data(window=window, max_per_minute=60, pacing=pacing, steps=steps))
    start = datetime(2027, 3, 1, 8, 0, tzinfo=UTC)  # 09:00 in Berlin
    return campaign, plan_campaign(campaign, _recipients([0] * count), start).emails


def test_the_cap_and_gap_are_met_exactly_not_more_than_needed() -> None:
    campaign, emails = _paced(cap=3, gap=120)
    times = [e.send_at.astimezone(UTC) for e in emails]
    assert [t.strftime("%m-%d %H:%M:%S") for t in times] == [
        "03-01 08:00:00", "03-01 08:02:00", "03-01 08:04:00", "03-02 08:00:00", "03-02 08:02:00",
    ]  # fmt: skip
    assert over_the_daily_cap(campaign, emails) == []
    assert inside_the_gap(campaign, emails) == []


def test_the_checkers_catch_a_plan_one_over_the_cap_or_one_second_inside_the_gap() -> None:
    campaign, emails = _paced(cap=3, gap=120)
    tighter_cap = campaign.model_copy(
        update={"pacing": campaign.pacing.model_copy(update={"domain_daily_cap": 2})}
    )
    wider_gap = campaign.model_copy(
        update={"pacing": campaign.pacing.model_copy(update={"domain_min_gap_seconds": 121})}
    )
    assert over_the_daily_cap(tighter_cap, emails) == [("d0.example", "2027-03-01")]
    assert [domain for domain, _ in inside_the_gap(wider_gap, emails)] == ["d0.example"] * 3


def test_a_campaign_without_pacing_gets_the_documented_defaults() -> None:
    pacing = parse_campaign(campaign_data()).pacing
    assert (
        (pacing.domain_daily_cap, pacing.domain_min_gap_seconds)
        == (
            DEFAULT_DOMAIN_DAILY_CAP,
            DEFAULT_DOMAIN_MIN_GAP_SECONDS,
        )
        == (50, 120)
    )


@pytest.mark.parametrize(
    ("pacing", "named"),
    [
        ({"domain_daily_cap": 0}, "pacing.domain_daily_cap"),
        ({"domain_min_gap_seconds": -1}, "pacing.domain_min_gap_seconds"),
        ({"domain_min_gap_seconds": 86_401}, "pacing.domain_min_gap_seconds"),
        ({"per_domain": 3}, "pacing.per_domain"),
    ],
)
def test_pacing_the_file_cannot_mean_is_refused_naming_its_field(pacing: dict[str, Any], named: str) -> None:
    with pytest.raises(CampaignFileError, match=named.replace(".", r"\.")):
        parse_campaign(campaign_data(pacing=pacing))


def test_the_plan_counts_the_emails_the_pacing_moved() -> None:
    campaign, _ = _paced(cap=3, gap=120)
    start = datetime(2027, 3, 1, 8, 0, tzinfo=UTC)
    plan = plan_campaign(campaign, _recipients([0, 0, 1, 0, 0, 0]), start)
    # d0: the first at 09:00, four moved (two later that day, two to the next); d1 not moved.
    assert plan.paced == 4
