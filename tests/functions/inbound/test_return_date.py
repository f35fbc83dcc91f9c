"""The return date of an out-of-office text: four languages, numeric and named forms, a window of 90 days."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from outreach.inbound.return_date import DEFAULT_AWAY_DAYS, MAX_AHEAD_DAYS, return_date

# Most rows are read on 17 December 2026: a date without a year is then in 2027 if it is before that day.
RECEIVED = datetime(2026, 12, 17, 9, 30, tzinfo=UTC)

ROWS: list[tuple[str, str, date | None]] = [
    # English
    ("en-back-on-month-day", "I will be back on January 5.", date(2027, 1, 5)),
    ("en-until-weekday-full", "I am out of the office until Monday, January 11, 2027.", date(2027, 1, 11)),
    ("en-return-ordinal-of", "I'll return on the 5th of January.", date(2027, 1, 5)),
    ("en-till-day-month", "Away till 4 Jan 2027 with no access to email.", date(2027, 1, 4)),
    ("en-returning-abbrev", "Returning Tue, Jan 12th", date(2027, 1, 12)),
    ("en-back-iso", "Back on 2027-01-08.", date(2027, 1, 8)),
    ("en-through-dotted", "Out through 31.12.2026.", date(2026, 12, 31)),
    ("en-us-slash-unambiguous", "I will return on 1/13/2027.", date(2027, 1, 13)),
    ("en-uk-slash-unambiguous", "Back on 13/01/2027.", date(2027, 1, 13)),
    ("en-slash-ambiguous-is-dropped", "Back on 05/01/2027.", None),
    ("en-slash-same-either-way", "Back on 01/01/2027.", date(2027, 1, 1)),
    ("en-range-to", "I am away from 22 December to 4 January.", date(2027, 1, 4)),
    # German
    ("de-bis-zum-dotted", "Ich bin bis zum 15.01.2027 nicht im Büro.", date(2027, 1, 15)),
    ("de-bis-day-month-name", "Abwesend bis Montag, den 4. Januar.", date(2027, 1, 4)),
    ("de-zurueck-am-short-year", "Ich bin am 7.1.27 zurück. Zurück am 07.01.27.", date(2027, 1, 7)),
    ("de-wieder-im-buero-am", "Ab sofort im Urlaub, wieder im Büro am 8.1.", date(2027, 1, 8)),
    ("de-ab-dem-wieder", "Ab dem 12.01. bin ich wieder erreichbar.", date(2027, 1, 12)),
    ("de-jaenner", "Ich bin bis 6. Jänner 2027 auf Urlaub.", date(2027, 1, 6)),
    ("de-slash-day-first", "Zurück am 05/01/2027.", date(2027, 1, 5)),
    ("de-slash-month-first-refused", "Zurück am 01/13/2027.", None),
    ("de-range-dash", "Urlaub vom 21.12.2026 - 06.01.2027.", date(2027, 1, 6)),
    ("de-maerz", "Elternzeit bis 1. März 2027.", date(2027, 3, 1)),
    # French
    ("fr-de-retour-le", "Je serai de retour le 12 janvier.", date(2027, 1, 12)),
    ("fr-jusqu-au-weekday", "Je suis absente jusqu'au lundi 4 janvier 2027 inclus.", date(2027, 1, 4)),
    ("fr-premier", "De retour le 1er février.", date(2027, 2, 1)),
    ("fr-accents-free", "Absent jusqu'au 3 fevrier.", date(2027, 2, 3)),
    ("fr-range-au", "En congés du 20 décembre au 5 janvier.", date(2027, 1, 5)),
    ("fr-slash", "De retour le 05/01/2027.", date(2027, 1, 5)),
    # Spanish
    ("es-hasta-el", "Estoy fuera de la oficina hasta el 14/01/2027.", date(2027, 1, 14)),
    ("es-regreso-el-de", "Regreso el 5 de enero de 2027.", date(2027, 1, 5)),
    ("es-vuelvo-el-weekday", "Vuelvo el lunes 11 de enero.", date(2027, 1, 11)),
    ("es-tuesday-abbrev-is-not-march", "De vacaciones hasta el mar. 5 de enero.", date(2027, 1, 5)),
    ("es-primero", "Regresaré el 1º de febrero.", date(2027, 2, 1)),
    ("es-a-partir-del", "A partir del 12 de enero estaré de vuelta.", date(2027, 1, 12)),
    ("es-setiembre-window", "Hasta el 2 de setiembre.", None),
    # Window and wording
    ("past-date", "I was back on 10 December 2026.", None),
    ("past-date-this-morning-is-today", "Back on 17 December 2026.", date(2026, 12, 17)),
    ("beyond-ninety-days", "On parental leave until 30 June 2027.", None),
    ("year-less-past-day-rolls-over", "Back on 16 December.", None),
    ("no-return-phrase", "Our office party is on 5 January.", None),
    ("no-date", "I am out of the office with limited access to email.", None),
    ("impossible-date", "Back on 31 April 2027, then on 3 May.", None),
    (
        "first-date-in-window-wins",
        "Back on 1 December 2026. Correction: back on January 4.",
        date(2027, 1, 4),
    ),
]


@pytest.mark.parametrize(("text", "expected"), [row[1:] for row in ROWS], ids=[row[0] for row in ROWS])
def test_the_return_date_named_in_each_language_and_form_is_read(text: str, expected: date | None) -> None:
    assert return_date(text, received=RECEIVED) == expected


def test_a_date_without_a_year_is_its_next_occurrence_on_or_after_the_day_received() -> None:
    assert return_date("Back on 3 March.", received=datetime(2027, 1, 10, tzinfo=UTC)) == date(2027, 3, 3)
    assert return_date("Back on 31 December.", received=RECEIVED) == date(2026, 12, 31)
    assert return_date("Back on 2 January.", received=RECEIVED) == date(2027, 1, 2)
    assert return_date("Back on 17 December.", received=RECEIVED) == date(2026, 12, 17)


def test_the_day_received_is_the_day_in_the_zone_it_was_given_in() -> None:
    # 23:30 on 16 December in New York is 17 December in UTC: "16 December" is today there.
    new_york = timezone(timedelta(hours=-5))
    received = datetime(2026, 12, 16, 23, 30, tzinfo=new_york)
    assert return_date("Back on 16 December.", received=received) == date(2026, 12, 16)


def test_29_february_without_a_year_is_the_next_leap_year_and_then_out_of_the_window() -> None:
    assert return_date("Back on 29 February.", received=datetime(2027, 12, 20, tzinfo=UTC)) == date(
        2028, 2, 29
    )
    assert return_date("Back on 29 February.", received=RECEIVED) is None


def test_the_window_ends_exactly_ninety_days_after_the_day_received() -> None:
    last = RECEIVED.date() + timedelta(days=MAX_AHEAD_DAYS)
    assert return_date(f"Back on {last.isoformat()}.", received=RECEIVED) == last
    assert return_date(f"Back on {(last + timedelta(days=1)).isoformat()}.", received=RECEIVED) is None


def test_a_phrase_at_the_end_of_a_line_does_not_reach_a_date_on_the_next() -> None:
    assert return_date("I will be back\n5 January is our office party.", received=RECEIVED) is None
    assert return_date("Ich bin ab\n12.01. wieder da.", received=RECEIVED) is None


def test_times_and_version_numbers_are_not_dates() -> None:
    assert return_date("Back at 10:30 tomorrow, until 14.30 Uhr.", received=RECEIVED) is None
    assert return_date("Back on version 1.2.3 until then.", received=RECEIVED) is None


def test_the_default_absence_when_no_date_is_named_is_a_week() -> None:
    assert DEFAULT_AWAY_DAYS == 7


_PIECES = (
    "back on ", "until ", "bis ", "jusqu'au ", "hasta el ", "ab dem ", " wieder", " to ", " - ", "\n",
    "5", "13", "31", "12", "1", ".", "/", "-", " ", "2026", "2027", "27", "January", "janvier",
    " de enero", "Monday, ", "mar. ", "29 February", "1er ", "5th of ",
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_whatever_the_text_the_date_returned_is_none_or_within_the_window(text: str) -> None:
    found = return_date(text, received=RECEIVED)
    assert found is None or RECEIVED.date() <= found <= RECEIVED.date() + timedelta(days=MAX_AHEAD_DAYS)
