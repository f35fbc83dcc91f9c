"""The first-contact slots on the ledger (moto, the real version-conditioned write): for any sequence of
attempts by any campaigns, at any moments and on any read of the record however stale, the slots the
address ends with keep the gap between any two and the 30-day cap; shown to fail on an off-by-one of
the rule's gap."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from outreach import contacts
from outreach.contacts import FirstContactRule, FirstContacts, take_first_contact
from tests.functions.contacts.test_first_contact_rule import _GapOffByOne, _violations
from tests.support.aws import Resources

DAY = 86_400
_addresses = itertools.count()

rules = st.builds(
    FirstContactRule,
    gap_seconds=st.sampled_from([0, 3_600, 7 * DAY]),
    per_period=st.integers(min_value=1, max_value=3),
)
# Each attempt: its campaign, its moment (seconds into 60 days), and which earlier read of the record
# its worker decides on (0: a fresh read; n: the n-th last snapshot, as a slow worker would hold it).
attempts = st.lists(
    st.tuples(
        st.sampled_from(["spring", "summer", "autumn", "winter", "promo"]),
        st.integers(0, 60 * DAY),
        st.integers(0, 3),
    ),
    min_size=1,
    max_size=12,
)


def _read(address: str) -> FirstContacts:
    key = contacts.address_key(address)
    return FirstContacts.from_item(contacts.reads.records([key]).get(key, {}))


def _attempt_all(rule: FirstContactRule, moments: list[tuple[str, int, int]]) -> list[float]:
    """Every attempt as a worker makes it; the moments of the slots the address holds at the end."""
    address = f"person{next(_addresses)}@example.org"
    snapshots = [FirstContacts()]
    for campaign, at, staleness in moments:
        seen = snapshots[max(len(snapshots) - 1 - staleness, 0)] if staleness else _read(address)
        take_first_contact(address, f"email#{campaign}#first", seen, rule, at)
        snapshots.append(_read(address))
    return sorted(_read(address).taken.values())


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rule=rules, moments=attempts)
def test_no_address_gets_two_first_contacts_inside_the_gap_whatever_the_campaigns_and_reads(
    resources: Resources, rule: FirstContactRule, moments: list[tuple[str, int, int]]
) -> None:
    assert _violations(rule, _attempt_all(rule, moments)) == []


def test_the_property_fails_when_the_rule_allows_one_second_inside_the_gap(resources: Resources) -> None:
    moments = [("spring", 0, 0), ("summer", 3_599, 1)]
    honest = FirstContactRule(gap_seconds=3_600, per_period=4)
    assert _violations(honest, _attempt_all(honest, moments)) == []
    mutant = _GapOffByOne(gap_seconds=3_600, per_period=4)
    assert _violations(honest, _attempt_all(mutant, moments)) == ["0.0 and 3599.0 closer than 3600"]
