"""Rules of an address's engagement on the ledger: a reply is recorded once per campaign, the latest
reply time and the later return date win whatever the order, and neither ever changes the record's
state (a reply is not an opt-out)."""

from __future__ import annotations

from datetime import date

import boto3
import pytest

from outreach import config, contacts
from outreach.contacts import Engagement, Source, State
from outreach.errors import MalformedFieldError
from tests.functions.contacts.ledger_support import at, record
from tests.support.aws import REGION, Resources

ADDRESS = "Anna.Berg@Example.org"
KEY = contacts.address_key(ADDRESS)


def test_an_address_without_a_record_has_no_engagement(resources: Resources) -> None:
    assert contacts.engagement_of(ADDRESS) == Engagement()
    assert record(KEY) is None


def test_a_reply_is_recorded_once_per_campaign_however_it_is_spelt(resources: Resources) -> None:
    assert contacts.record_reply(ADDRESS, "spring", at=at(5))
    assert not contacts.record_reply("anna.berg@example.org", "spring", at=at(5))
    assert contacts.record_reply(ADDRESS, "autumn", at=at(6))
    found = contacts.engagement_of(" ANNA.BERG@example.org ")
    assert found.replied_campaigns == frozenset({"spring", "autumn"})
    assert found.replied_in("spring") and not found.replied_in("winter")
    assert found.replied_at == "2027-03-02T08:06:00Z"


def test_the_latest_reply_time_wins_whatever_the_order(resources: Resources) -> None:
    contacts.record_reply(ADDRESS, "spring", at=at(9))
    contacts.record_reply(ADDRESS, "autumn", at=at(3))
    found = contacts.engagement_of(ADDRESS)
    assert found.replied_at == "2027-03-02T08:09:00Z"
    assert found.replied_campaigns == frozenset({"spring", "autumn"})


@pytest.mark.parametrize(
    ("dates", "kept", "changed"),
    [
        ([date(2027, 3, 10), date(2027, 3, 20)], date(2027, 3, 20), [True, True]),
        ([date(2027, 3, 20), date(2027, 3, 10)], date(2027, 3, 20), [True, False]),
        ([date(2027, 3, 20), date(2027, 3, 20)], date(2027, 3, 20), [True, False]),
    ],
)
def test_the_later_return_date_is_kept(
    resources: Resources, dates: list[date], kept: date, changed: list[bool]
) -> None:
    assert [contacts.record_away(ADDRESS, day, at=at(i)) for i, day in enumerate(dates)] == changed
    assert contacts.engagement_of(ADDRESS).away_until == kept


def test_a_reply_or_an_absence_never_changes_the_state_of_the_record(resources: Resources) -> None:
    contacts.record_reply(ADDRESS, "spring", at=at(1))
    contacts.record_away(ADDRESS, date(2027, 3, 20), at=at(1))
    fresh = record(KEY)
    assert fresh is not None
    assert (fresh["kind"], fresh["state"], fresh["state_rank"]) == ("address", "ok", 0)
    assert contacts.stop_of(ADDRESS) is None
    # A stop recorded first is neither lowered nor lifted by a later reply.
    contacts.record_stop(KEY, State.UNSUBSCRIBED, at=at(2), why="one-click", source=Source.UNSUBSCRIBE)
    contacts.record_reply(ADDRESS, "autumn", at=at(3))
    contacts.record_away(ADDRESS, date(2027, 3, 30), at=at(3))
    stop = contacts.stop_of(ADDRESS)
    assert stop is not None and stop.state is State.UNSUBSCRIBED
    stored = record(KEY)
    assert stored is not None and (stored["state"], stored["state_rank"]) == ("unsubscribed", 3)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("replied_campaigns", {"L": [{"S": "spring"}]}),
        ("replied_at", {"N": "5"}),
        ("away_until", {"S": "next week"}),
    ],
)
def test_a_stored_engagement_no_writer_made_is_refused_naming_its_field(
    resources: Resources, field: str, value: dict[str, object]
) -> None:
    boto3.client("dynamodb", region_name=REGION).put_item(
        TableName=config.contacts_table(),
        Item={"contact_key": {"S": KEY}, "state": {"S": "ok"}, "state_rank": {"N": "0"}, field: value},
    )
    with pytest.raises(MalformedFieldError) as refused:
        contacts.engagement_of(ADDRESS)
    assert refused.value.field == field


@pytest.mark.parametrize("campaign", ["", "spring campaign", "x" * 300])
def test_a_reply_names_a_campaign_id_or_is_refused(resources: Resources, campaign: str) -> None:
    with pytest.raises(MalformedFieldError) as refused:
        contacts.record_reply(ADDRESS, campaign, at=at(1))
    assert refused.value.field == "campaign_id"
    assert record(KEY) is None
