"""The address search runs only over the runs of address characters that hold an "at", and finds there
exactly what a search of the whole text finds."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from outreach.scraping.emails import _ADDRESS, _address_matches, emails_in_text

FRAGMENTS = st.sampled_from(
    ["info", "a.b", "x_y", "@", " at ", " AT ", "[at]", "(at)", "{@}", " [ at ] ", "(dot)", "[.]", " dot ",
     " punkt ", ".", "-", "+", "%", "example", "de", "com", "1", "42", " ", "\t", "ü", ",", ":", "/", "é",
     "\u00a0", "mail", "kontakt",
     "\u0131", "\u212a", "\u017f", "\u0130"]  # letters [a-z] matches under IGNORECASE
)  # fmt: skip


@settings(max_examples=600, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(text=st.lists(FRAGMENTS, max_size=40).map("".join))
@example(text="info@example.de\u00fc")  # a word character after the run: no address
@example(text="\u00fcinfo@example.de,x [at] y.de")
def test_the_search_over_runs_with_an_at_finds_what_the_search_of_all_finds(text: str) -> None:
    wanted = [(match.span(), match.groupdict()) for match in _ADDRESS.finditer(text)]
    assert [(match.span(), match.groupdict()) for match in _address_matches(text)] == wanted


def test_addresses_in_runs_apart_are_each_found() -> None:
    text = "Fragen? info@firma.de, oder vertrieb [at] firma [dot] de; Büro: office(at)firma.de."
    assert [address for address, _ in emails_in_text(text, page_host="firma.de")] == [
        "info@firma.de",
        "vertrieb@firma.de",
        "office@firma.de",
    ]
