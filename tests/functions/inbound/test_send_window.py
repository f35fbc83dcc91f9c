"""Rules of the sequence's window: the first moment inside it at or after an instant, at the email's own
local time where the window allows, on real instants in the task's zone."""

from __future__ import annotations

from datetime import UTC, datetime, time
from zoneinfo import ZoneInfo

import pytest

from outreach.inbound.send_window import first_inside, inside
from outreach.sequence_rules import SequenceRules

BERLIN = ZoneInfo("Europe/Berlin")
WEEKDAYS = SequenceRules()  # Monday-Friday, 09:00-17:00


def _local(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=BERLIN)


@pytest.mark.parametrize(
    ("not_before", "keep", "expected"),
    [
        # Wednesday 10 March at midnight: that day, at the email's own time.
        ("2027-03-10T00:00", time(9, 30), "2027-03-10T09:30"),
        # An own time outside the window: the window's start.
        ("2027-03-10T00:00", time(7, 0), "2027-03-10T09:00"),
        ("2027-03-10T00:00", time(17, 0), "2027-03-10T09:00"),
        # Saturday: the next Monday.
        ("2027-03-13T00:00", time(9, 30), "2027-03-15T09:30"),
        ("2027-03-13T09:30", time(9, 30), "2027-03-15T09:30"),
        # Later the same day than its own time, inside the window: that moment itself.
        ("2027-03-10T11:15", time(9, 30), "2027-03-10T11:15"),
        # After the window closed: the next window day.
        ("2027-03-10T17:00", time(9, 30), "2027-03-11T09:30"),
        ("2027-03-12T18:00", time(9, 30), "2027-03-15T09:30"),
    ],
)
def test_the_first_moment_inside_the_window_keeps_the_emails_own_time_where_it_may(
    not_before: str, keep: time, expected: str
) -> None:
    found = first_inside(_local(not_before), keep, WEEKDAYS, BERLIN)
    assert found == _local(expected).astimezone(UTC)
    assert inside(found, WEEKDAYS, BERLIN)


def test_the_window_is_read_in_the_tasks_own_zone() -> None:
    new_york = ZoneInfo("America/New_York")
    found = first_inside(datetime(2027, 3, 10, 0, 0, tzinfo=new_york), time(9, 30), WEEKDAYS, new_york)
    assert found == datetime(2027, 3, 10, 14, 30, tzinfo=UTC)


def test_a_time_the_clocks_skip_is_read_with_the_offset_before_the_change() -> None:
    # Berlin springs forward on Sunday 28 March 2027 at 02:00; 02:30 does not exist that day.
    night = SequenceRules(send_days=(6,), window_start="02:00", window_end="05:00")
    found = first_inside(_local("2027-03-28T00:00"), time(2, 30), night, BERLIN)
    assert found == datetime(2027, 3, 28, 1, 30, tzinfo=UTC)
    assert found.astimezone(BERLIN).strftime("%H:%M %Z") == "03:30 CEST"
    assert inside(found, night, BERLIN)


def test_a_moment_never_comes_before_not_before() -> None:
    not_before = datetime(2027, 3, 10, 10, 0, 0, 250000, tzinfo=UTC)
    found = first_inside(not_before, time(9, 30), WEEKDAYS, BERLIN)
    assert found >= not_before and found.microsecond == 0
