"""Rules of the ledger's reads: an address is stopped by its record or its domain's (the higher rank
wins), and many addresses are read in BatchGetItem calls of at most 100 keys, every unprocessed key
asked for again."""

from __future__ import annotations

from typing import Any

import pytest

from outreach import clients, contacts
from outreach.contacts import Source, State
from tests.functions.contacts.ledger_support import at
from tests.support.aws import Resources


def test_a_blocked_domain_stops_every_address_of_it_and_no_other(resources: Resources) -> None:
    assert contacts.record_stop(
        contacts.domain_key("Rival.example"),
        State.BLOCKED,
        at=at(1),
        why="competitor",
        source=Source.OPERATOR,
    )
    for address in ("ceo@rival.example", "Sales@RIVAL.example"):
        stop = contacts.stop_of(address)
        assert stop is not None
        assert (stop.key, stop.state) == ("domain#rival.example", State.BLOCKED)
        assert stop.reason == "contact_stopped: blocked since 2027-03-02T08:01:00Z (competitor)"
    assert contacts.stop_of("ceo@sub.rival.example") is None
    assert contacts.stop_of("ceo@friend.example") is None


def test_of_an_address_and_its_domain_the_higher_state_is_the_stop(resources: Resources) -> None:
    contacts.record_stop(
        contacts.domain_key("shop.example"), State.BLOCKED, at=at(1), why="domain", source=Source.IMPORT
    )
    contacts.record_stop(
        contacts.address_key("a@shop.example"), State.COMPLAINED, at=at(2), why="spam", source=Source.SES
    )
    high = contacts.stop_of("a@shop.example")
    assert high is not None
    assert high.state is State.COMPLAINED
    contacts.record_stop(
        contacts.address_key("b@shop.example"), State.BLOCKED, at=at(2), why="own", source=Source.OPERATOR
    )
    tie = contacts.stop_of("b@shop.example")
    assert tie is not None
    assert tie.key == "address#b@shop.example"


def test_stops_of_reads_any_number_of_addresses_in_calls_of_at_most_100_keys_retrying_unprocessed(
    resources: Resources, monkeypatch: pytest.MonkeyPatch
) -> None:
    addresses = [f"person{i}@d{i % 7}.example" for i in range(260)]
    stopped = {addresses[i]: State.UNSUBSCRIBED for i in range(0, 260, 13)}
    for address, state in stopped.items():
        contacts.record_stop(
            contacts.address_key(address), state, at=at(1), why="u", source=Source.UNSUBSCRIBE
        )
    contacts.record_stop(
        contacts.domain_key("d3.example"), State.BLOCKED, at=at(1), why="d", source=Source.IMPORT
    )
    real: Any = clients.dynamodb()
    asked: list[int] = []

    class HalfUnprocessed:
        """BatchGetItem answering only the first half of each request, the rest as UnprocessedKeys."""

        def batch_get_item(self, **request: Any) -> dict[str, Any]:
            ((table, ask),) = request["RequestItems"].items()
            keys = ask["Keys"]
            asked.append(len(keys))
            assert ask["ConsistentRead"] is True
            answered = keys[: max(1, len(keys) // 2)]
            answer = dict(real.batch_get_item(RequestItems={table: {**ask, "Keys": answered}}))
            rest = keys[len(answered) :]
            answer["UnprocessedKeys"] = {table: {**ask, "Keys": rest}} if rest else {}
            return answer

    monkeypatch.setattr(clients, "dynamodb", HalfUnprocessed)
    found = contacts.stops_of([*addresses, addresses[0]])
    # 267 distinct keys (260 addresses, 7 domains; the address given twice is asked for once), no
    # call over 100 keys, and each half left unprocessed asked for again until none is left.
    assert max(asked) <= 100
    assert sum(asked) > 267
    in_d3 = {a for a in addresses if a.endswith("@d3.example")}
    assert set(found) == set(stopped) | in_d3
    for address, stop in found.items():
        expected = State.UNSUBSCRIBED if address in stopped else State.BLOCKED
        assert stop.state is expected, address
