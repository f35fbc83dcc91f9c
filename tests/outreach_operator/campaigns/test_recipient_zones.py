"""Recipients' own hours: each recipient's zone comes from its timezone column, its domain's country, its
phone numbers' country, its language or the campaign, in that order; a bad column refuses its row; and
for any recipients and window no email leaves the window of its recipient's zone."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from outreach.email_task import PlannedEmail
from outreach_operator.campaigns.campaign_file import Campaign, SendWindow, parse_campaign
from outreach_operator.campaigns.planning import plan_campaign
from outreach_operator.campaigns.recipient_zones import RecipientZone, country_zone, zone_of
from outreach_operator.campaigns.recipients import Recipient
from tests.outreach_operator.campaigns.conftest import campaign_data
from tests.outreach_operator.campaigns.plan_strategies import campaign_steps, send_windows, starts

ZONES = ["America/New_York", "America/Los_Angeles", "Asia/Tokyo", "Australia/Lord_Howe", "Europe/Berlin", ""]


@pytest.mark.parametrize(
    ("address", "column", "expected"),
    [
        ("a@b.example", "America/New_York", RecipientZone("America/New_York", "column")),
        ("a@b.fr", "America/New_York", RecipientZone("America/New_York", "column")),
        ("a@b.fr", "", RecipientZone("Europe/Paris", "country")),
        ("a@b.de", None, RecipientZone("Europe/Berlin", "country")),
        ("a@shop.co.uk", None, RecipientZone("Europe/London", "country")),
        ("a@b.us", None, RecipientZone("Asia/Tokyo", "campaign")),
        ("a@b.es", None, RecipientZone("Asia/Tokyo", "campaign")),
        ("a@b.com", None, RecipientZone("Asia/Tokyo", "campaign")),
    ],
)
def test_a_recipients_zone_is_its_column_else_its_domains_country_else_the_campaigns(
    address: str, column: str | None, expected: RecipientZone
) -> None:
    assert zone_of(address, {"timezone": column} if column is not None else {}, "Asia/Tokyo") == expected


BERLIN = "+49 30 2093 4567"
HAMBURG = "+49 40 4281 3950"
VIENNA = "+43 1 5880 1234"
LONDON = "+44 20 7946 0958"
NEW_YORK = "+1 212 639 2000"
TOKYO = "+81 3 3580 3311"
FREEPHONE = "+800 2454 7890"  # a non-geographic number: no country


@pytest.mark.parametrize(
    ("address", "values", "expected"),
    [
        (
            "a@b.fr",
            {"timezone": "America/New_York", "phone": TOKYO, "language": "pl"},
            RecipientZone("America/New_York", "column"),
        ),
        ("a@b.fr", {"phone": TOKYO, "language": "pl"}, RecipientZone("Europe/Paris", "country")),
        ("a@b.com", {"phone": TOKYO, "language": "pl"}, RecipientZone("Asia/Tokyo", "phone")),
        ("a@b.com", {"phone": "", "language": "pl"}, RecipientZone("Europe/Warsaw", "language")),
        ("a@b.com", {"phone": "", "language": ""}, RecipientZone("Australia/Perth", "campaign")),
        # A source that tells nothing hands over to the next.
        ("a@b.us", {"phone": NEW_YORK, "language": "pl"}, RecipientZone("Europe/Warsaw", "language")),
        ("a@b.us", {"phone": NEW_YORK, "language": "en"}, RecipientZone("Australia/Perth", "campaign")),
    ],
)
def test_the_column_beats_the_domains_country_beats_the_phone_beats_the_language_beats_the_campaign(
    address: str, values: dict[str, str], expected: RecipientZone
) -> None:
    assert zone_of(address, values, "Australia/Perth") == expected


@pytest.mark.parametrize(
    ("phone", "expected"),
    [
        (BERLIN, RecipientZone("Europe/Berlin", "phone")),
        (f"{BERLIN}; {HAMBURG}", RecipientZone("Europe/Berlin", "phone")),
        ("+493020934567", RecipientZone("Europe/Berlin", "phone")),
        (LONDON, RecipientZone("Europe/London", "phone")),
        # A country of several times: the United States, Australia, Russia.
        (NEW_YORK, RecipientZone("Australia/Perth", "campaign")),
        ("+61 2 9374 4000", RecipientZone("Australia/Perth", "campaign")),
        ("+7 495 606 3602", RecipientZone("Australia/Perth", "campaign")),
        (FREEPHONE, RecipientZone("Australia/Perth", "campaign")),
    ],
)
def test_the_phone_names_a_zone_only_for_a_country_of_one_time(phone: str, expected: RecipientZone) -> None:
    assert zone_of("a@b.com", {"phone": phone}, "Australia/Perth") == expected


@pytest.mark.parametrize(
    "phones",
    [
        f"{BERLIN};{LONDON}",
        # Germany and Austria keep one time, but two countries are not one: the numbers tell nothing.
        f"{BERLIN};{VIENNA}",
        f"{BERLIN};{FREEPHONE}",
    ],
)
def test_numbers_of_two_countries_tell_nothing(phones: str) -> None:
    assert zone_of("a@b.com", {"phone": phones}, "Australia/Perth") == RecipientZone(
        "Australia/Perth", "campaign"
    )


def test_only_a_country_of_one_time_names_a_zone() -> None:
    # Germany's two zones (Berlin, Busingen) keep one time; Spain's Canaries an hour behind Madrid.
    assert (country_zone("x@y.de"), country_zone("x@y.es"), country_zone("x@y.au")) == (
        "Europe/Berlin",
        None,
        None,
    )


@pytest.mark.parametrize("value", ["Mars/Olympus", "../../etc/passwd", "EST5EDT\n"])
def test_a_timezone_column_that_is_no_iana_zone_refuses_the_row_naming_the_field(value: str) -> None:
    campaign = parse_campaign(campaign_data())
    recipients = [
        Recipient(row=2, source="r.csv:2", email="a@b.example", values={"company": "C", "timezone": value}),
        Recipient(row=3, source="r.csv:3", email="c@d.example", values={"company": "C"}),
    ]
    plan = plan_campaign(campaign, recipients, datetime(2027, 3, 1, 8, tzinfo=UTC))
    [rejected] = plan.rejected
    assert (rejected.row, rejected.reason.split(":")[0]) == (2, "timezone")
    assert {e.message.to for e in plan.emails} == {"c@d.example"}


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("phone", "030 2093 4567"),  # no country code
        ("phone", "+49 30"),  # too short to be a number
        ("phone", "+44 1234 567890"),  # a template
        ("phone", "call us"),
        ("phone", ";".join([BERLIN] * 11)),  # more numbers than are read
        ("phone", "+49 30 2093 4567" + " " * 300),  # longer than is read
        ("language", "German"),
        ("language", "de, en"),
        ("language", "x-klingon"),
        ("language", "de-" + "-".join(["abcdefgh"] * 4)),  # longer than a tag is kept
        ("timezone", "Mars/Olympus"),
    ],
)
def test_a_bad_phone_or_language_column_refuses_the_row_naming_the_field(column: str, value: str) -> None:
    campaign = parse_campaign(campaign_data())
    # The timezone column decides the zone; a bad phone or language refuses the row all the same.
    decided = {"timezone": "America/New_York"} if column != "timezone" else {}
    recipients = [
        Recipient(
            row=2, source="r.csv:2", email="a@b.example", values={"company": "C", **decided, column: value}
        ),
        Recipient(row=3, source="r.csv:3", email="c@d.example", values={"company": "C", column: ""}),
    ]
    plan = plan_campaign(campaign, recipients, datetime(2027, 3, 1, 8, tzinfo=UTC))
    [rejected] = plan.rejected
    assert (rejected.row, rejected.reason.split(":")[0]) == (2, column)
    assert {e.message.to for e in plan.emails} == {"c@d.example"}


def test_the_plan_counts_the_recipients_of_each_zone_source() -> None:
    campaign = parse_campaign(campaign_data())
    rows = [
        ("a@b.example", {"timezone": "America/New_York"}),
        ("a@b.fr", {}),
        ("a@c.example", {"phone": TOKYO}),
        ("a@d.example", {"phone": NEW_YORK, "language": "de-AT"}),
        ("a@e.example", {"language": "ja"}),
        ("a@f.example", {"language": "en"}),
    ]
    recipients = [
        Recipient(row=i, source=f"r.csv:{i}", email=email, values={"company": "C", **values})
        for i, (email, values) in enumerate(rows, start=2)
    ]
    plan = plan_campaign(campaign, recipients, datetime(2027, 3, 1, 8, tzinfo=UTC))
    assert plan.zone_sources == {"column": 1, "country": 1, "phone": 1, "language": 2, "campaign": 1}
    assert {e.message.to: e.timezone for e in plan.emails} == {
        "a@b.example": "America/New_York",
        "a@b.fr": "Europe/Paris",
        "a@c.example": "Asia/Tokyo",
        "a@d.example": "Europe/Vienna",
        "a@e.example": "Asia/Tokyo",
        "a@f.example": "Europe/Berlin",
    }


def outside_their_window(window: SendWindow, emails: list[PlannedEmail]) -> list[PlannedEmail]:
    """The emails not inside the campaign's days and hours (end excluded) in their own zone."""
    outside = []
    for email in emails:
        local = email.send_at.astimezone(ZoneInfo(email.timezone))
        if not (local.weekday() in window.weekday_numbers and window.start <= local.time() < window.end):
            outside.append(email)
    return outside


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[Campaign, list[Recipient], datetime]:
    data = campaign_data(
        window=draw(send_windows(ZONES[:-1])),
        max_per_minute=draw(st.integers(1, 4)),
        pacing={"domain_daily_cap": 1000, "domain_min_gap_seconds": 0},
        steps=draw(campaign_steps()),
    )
    zones = draw(st.lists(st.sampled_from(ZONES), min_size=1, max_size=40))
    recipients = [
        Recipient(
            row=i + 2,
            source=f"r.csv:{i + 2}",
            email=f"p{i}@d{i}.example",
            values={"company": "C", "timezone": z},
        )
        for i, z in enumerate(zones)
    ]
    return parse_campaign(data), recipients, draw(starts())


@settings(max_examples=120, deadline=None)
@given(scenarios())
def test_no_send_outside_the_recipients_local_window_and_none_above_the_rate(
    scenario: tuple[Campaign, list[Recipient], datetime],
) -> None:
    campaign, recipients, start = scenario
    emails = plan_campaign(campaign, recipients, start).emails
    assert len(emails) == len(recipients) * len(campaign.steps)
    assert outside_their_window(campaign.window, emails) == []
    for email, recipient in zip(emails, recipients * len(campaign.steps), strict=True):
        assert email.timezone == (recipient.values["timezone"] or campaign.window.timezone)
        assert email.send_at >= start
    per_minute = Counter(int(e.send_at.timestamp()) // 60 for e in emails)
    assert max(per_minute.values()) <= campaign.max_per_minute


def test_the_window_checker_reads_each_email_in_its_own_zone() -> None:
    window = parse_campaign(campaign_data()).window  # 09:00-17:00 Europe/Berlin, weekdays
    at_close = datetime(2027, 3, 1, 16, 59, tzinfo=UTC)  # 11:59 in New York: inside; 17:59 in Berlin
    recipients = [
        Recipient(
            row=2, source="r", email="p@d.example", values={"company": "C", "timezone": "America/New_York"}
        )
    ]
    [email] = plan_campaign(
        parse_campaign(campaign_data(steps=[{"subject": "s", "text": "t"}])), recipients, at_close
    ).emails
    assert outside_their_window(window, [email]) == []
    assert email.send_at.astimezone(UTC) == at_close
    berlin = PlannedEmail(**{**email.__dict__, "timezone": "Europe/Berlin"})
    assert outside_their_window(window, [berlin]) == [berlin]
