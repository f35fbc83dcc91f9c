"""Rules of the site-fetch rows: t at once against one by one (<= 0.6 x), the same contacts both ways."""

from __future__ import annotations

import pytest

from outreach_dev.bench.site_fetch import Mode, section

SITES = {"https://a.example/": frozenset({"email:info@a.example", "phone:+49301000000"})}


def mode(connections: str, seconds: list[float], contacts: dict[str, frozenset[str]] = SITES) -> Mode:
    return Mode(connections, f"job-{connections}", seconds, dict(contacts))


def test_fetching_at_once_meets_its_target_only_at_six_tenths_of_one_by_one_or_less() -> None:
    one_by_one = mode("1", [6.0, 6.4])

    met = section(1, 1.5, one_by_one, mode("3", [3.6, 3.7])).figures[0]
    missed = section(1, 1.5, one_by_one, mode("3", [3.8, 3.9])).figures[0]

    assert met.value == pytest.approx(3.65)
    assert met.baseline == pytest.approx(6.2)
    assert met.met is True
    assert (missed.met, missed.target) == (False, "<= 0.6 x one by one")


def test_the_contacts_row_is_missed_when_one_site_found_other_contacts_at_once() -> None:
    fewer = {"https://a.example/": frozenset({"email:info@a.example"})}
    as_many_but_another = {"https://a.example/": frozenset({"email:info@a.example", "phone:+49301000001"})}

    same = section(1, 1.5, mode("1", [6.0]), mode("3", [3.0])).figures[1]
    lost = section(1, 1.5, mode("1", [6.0]), mode("3", [3.0], fewer)).figures[1]
    swapped = section(1, 1.5, mode("1", [6.0]), mode("3", [3.0], as_many_but_another)).figures[1]

    assert (same.value, same.baseline, same.met) == (2, 2, True)
    assert (lost.value, lost.baseline, lost.met) == (1, 2, False)
    assert (swapped.value, swapped.baseline, swapped.met) == (2, 2, False)
