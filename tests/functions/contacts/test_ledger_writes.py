"""Rules of the ledger's writes: idempotent and order-free, the highest state wins, nothing automatic
lowers a state, soft bounces count distinct messages, and only the operator's unblock lifts a block or
a bounce, never an opt-out or a complaint."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from outreach import clock, contacts
from outreach.contacts import Source, State
from outreach.errors import MalformedFieldError
from tests.functions.contacts.ledger_support import at, record
from tests.support.aws import Resources

ADDRESS = "Anna.Berg@Example.org"
KEY = contacts.address_key(ADDRESS)

# Events as they may arrive: (state, minutes after T0, source).
EVENTS = [
    (State.BOUNCED, 1, Source.SES),
    (State.UNSUBSCRIBED, 2, Source.UNSUBSCRIBE),
    (State.COMPLAINED, 3, Source.SES),
    (State.BLOCKED, 4, Source.OPERATOR),
]


def _stop(state: State, minute: int, source: Source, key: str = KEY) -> bool:
    return contacts.record_stop(key, state, at=at(minute), why=f"{state} event", source=source)


def _state_fields(key: str) -> dict[str, Any]:
    found = record(key)
    assert found is not None
    return {name: found.get(name) for name in ("state", "state_rank", "since", "why", "source", "kind")}


def test_one_address_is_one_record_however_it_is_spelt() -> None:
    assert contacts.normalise("  Anna.Berg@EXAMPLE.org ") == "anna.berg@example.org"
    assert contacts.address_key("anna.berg@example.org") == KEY == "address#anna.berg@example.org"
    assert contacts.normalise("Info@Bücher.de") == "info@xn--bcher-kva.de"
    assert contacts.domain_key("info@Bücher.DE") == "domain#xn--bcher-kva.de"
    assert contacts.domain_key("bücher.de.") == "domain#xn--bcher-kva.de"


@pytest.mark.parametrize(
    "text", ["", "not an address", "a@b", "a@example.org, b@example.org", "Boss <a@example.org>", "a" * 400]
)
def test_a_non_address_is_refused_naming_its_field(text: str) -> None:
    with pytest.raises(MalformedFieldError) as refused:
        contacts.address_key(text, field="bouncedRecipients[0]")
    assert refused.value.field == "bouncedRecipients[0]"


def test_a_stop_is_written_once_and_its_duplicate_changes_nothing(
    resources: Resources, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(clock, "now", lambda: at(60).timestamp())
    assert contacts.record_stop(
        KEY, State.UNSUBSCRIBED, at=at(5), why="one-click", source=Source.UNSUBSCRIBE, campaign_id="spring"
    )
    written = record(KEY)
    assert not contacts.record_stop(
        KEY, State.UNSUBSCRIBED, at=at(5), why="one-click", source=Source.UNSUBSCRIBE, campaign_id="spring"
    )
    assert record(KEY) == written
    assert written is not None
    assert (written["state"], written["state_rank"], written["since"], written["campaign_id"]) == (
        "unsubscribed",
        3,
        "2027-03-02T08:05:00Z",
        "spring",
    )
    # When the ledger recorded it (the write's own clock), beside when the event happened.
    stop = contacts.stop_of(ADDRESS)
    assert stop is not None
    assert stop.recorded_at == written["recorded_at"] == "2027-03-02T09:00:00Z"


def test_the_highest_state_wins_whatever_order_the_events_arrive_in(resources: Resources) -> None:
    for n, order in enumerate(itertools.permutations(range(len(EVENTS)))):
        key = contacts.address_key(f"order-{n}@example.org")
        raised = [_stop(*EVENTS[i], key=key) for i in order]
        # Each event again (a duplicate delivery), in the same order: the duplicates change nothing.
        stored = _state_fields(key)
        assert not any(_stop(*EVENTS[i], key=key) for i in order)
        assert _state_fields(key) == stored
        assert (stored["state"], stored["state_rank"]) == ("complained", 4), order
        assert stored["since"] == "2027-03-02T08:03:00Z"
        assert stored["why"] == "complained event"
        # A write raised the state exactly when it was higher than every earlier one.
        ranks = [EVENTS[i][0].rank for i in order]
        assert raised == [rank > max(ranks[:m], default=0) for m, rank in enumerate(ranks)], order


def test_nothing_automatic_lowers_a_state(resources: Resources) -> None:
    assert _stop(State.COMPLAINED, 1, Source.SES)
    stored = _state_fields(KEY)
    assert not _stop(State.BOUNCED, 9, Source.SES)
    for message in range(5):
        assert not contacts.record_soft_bounce(
            ADDRESS, f"m-{message}", at=at(10), why="mailbox full", limit=3
        )
    contacts.record_contacted(ADDRESS, "autumn", at(20))
    assert _state_fields(KEY) == stored
    with pytest.raises(ValueError, match="only unblock"):
        contacts.record_stop(KEY, State.OK, at=at(30), why="lifted", source=Source.SES)


def test_soft_bounces_stop_an_address_only_at_the_limit_of_distinct_messages(resources: Resources) -> None:
    def bounce(message_id: str) -> bool:
        return contacts.record_soft_bounce(ADDRESS, message_id, at=at(1), why="4.2.2 mailbox full", limit=3)

    # The same message soft-bounced (and its event delivered) five times counts once.
    assert not any(bounce("message-1") for _ in range(5))
    assert not bounce("message-2")
    assert contacts.stop_of(ADDRESS) is None
    assert bounce("message-3")
    assert not bounce("message-3")
    assert not bounce("message-4")
    stop = contacts.stop_of(ADDRESS)
    assert stop is not None
    assert stop.state is State.BOUNCED
    assert stop.why.startswith("3 soft bounces")
    assert stop.reason.startswith("contact_stopped: bounced since 2027-03-02T08:01:00Z (3 soft bounces")
    stored = record(KEY)
    assert stored is not None
    assert stored["soft_bounce_messages"] == {"message-1", "message-2", "message-3"}


def test_a_soft_bounce_counted_before_a_crash_stops_the_address_on_its_retry(
    resources: Resources, monkeypatch: pytest.MonkeyPatch
) -> None:
    from outreach.contacts import writes

    for message in ("m-1", "m-2"):
        contacts.record_soft_bounce(ADDRESS, message, at=at(1), why="", limit=3)
    real = writes.record_stop

    def crash(*args: Any, **kwargs: Any) -> bool:
        raise RuntimeError("the function died between the count and the stop")

    monkeypatch.setattr(writes, "record_stop", crash)
    with pytest.raises(RuntimeError):
        contacts.record_soft_bounce(ADDRESS, "m-3", at=at(2), why="", limit=3)
    assert contacts.stop_of(ADDRESS) is None
    monkeypatch.setattr(writes, "record_stop", real)
    # The event's retry finds its message counted already, and still records the stop.
    assert contacts.record_soft_bounce(ADDRESS, "m-3", at=at(2), why="", limit=3)
    stop = contacts.stop_of(ADDRESS)
    assert stop is not None
    assert stop.state is State.BOUNCED


def test_last_contacted_only_moves_forward(resources: Resources) -> None:
    assert contacts.record_contacted(ADDRESS, "spring", at(10))
    assert not contacts.record_contacted(ADDRESS, "winter", at(5))
    assert not contacts.record_contacted(ADDRESS, "spring", at(10))
    assert contacts.record_contacted(ADDRESS, "autumn", at(11))
    stored = record(KEY)
    assert stored is not None
    assert (stored["last_contacted_at"], stored["last_campaign_id"]) == ("2027-03-02T08:11:00Z", "autumn")
    assert (stored["state"], stored["state_rank"]) == ("ok", 0)
    assert contacts.stop_of(ADDRESS) is None


@pytest.mark.parametrize("state", [State.BLOCKED, State.BOUNCED])
def test_the_operator_may_lift_a_block_or_a_bounce_and_an_older_event_does_not_bring_it_back(
    resources: Resources, state: State
) -> None:
    assert contacts.record_stop(KEY, state, at=at(1), why="x", source=Source.OPERATOR)
    assert contacts.unblock(KEY, at=at(10), why="asked us to write again")
    assert contacts.stop_of(ADDRESS) is None
    # The same event delivered again after the lift is older than it: nothing changes.
    assert not contacts.record_stop(KEY, state, at=at(1), why="x", source=Source.OPERATOR)
    assert contacts.stop_of(ADDRESS) is None
    # A newer one stops the address again; an older complaint is never lifted, so it stops it too.
    assert contacts.record_stop(KEY, State.BOUNCED, at=at(11), why="new bounce", source=Source.SES)
    assert contacts.unblock(KEY, at=at(12), why="again")
    assert contacts.record_stop(KEY, State.COMPLAINED, at=at(2), why="late complaint", source=Source.SES)
    stop = contacts.stop_of(ADDRESS)
    assert stop is not None
    assert stop.state is State.COMPLAINED


@pytest.mark.parametrize("state", [State.UNSUBSCRIBED, State.COMPLAINED])
def test_unblock_never_lifts_an_opt_out_or_a_complaint(resources: Resources, state: State) -> None:
    assert contacts.record_stop(KEY, state, at=at(1), why="x", source=Source.SES)
    stored = record(KEY)
    assert not contacts.unblock(KEY, at=at(10), why="please")
    assert record(KEY) == stored


def test_why_is_kept_as_one_line_of_at_most_500_characters(resources: Resources) -> None:
    why = "line one\r\nline two\x00" + "x" * 900
    contacts.record_stop(KEY, State.BLOCKED, at=at(1), why=why, source=Source.IMPORT)
    stop = contacts.stop_of(ADDRESS)
    assert stop is not None
    assert stop.why.startswith("line one line two")
    assert len(stop.why) == contacts.WHY_CHARS
    assert stop.source is Source.IMPORT
