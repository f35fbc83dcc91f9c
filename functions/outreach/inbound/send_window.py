"""When a sequence may send: the first moment inside its rules' window at or after an instant.

The window is the campaign's, stored on each task (``SequenceRules``): the weekdays ``send_days``
(Monday 0) and the local hours ``window_start`` to ``window_end`` (half open: the start is in it, the
end is not), read in the task's IANA ``timezone``, as the planner reads them. The arithmetic is on
real instants; a local time the clocks skip (the spring-forward hour) is read with the offset before
the change, as ``zoneinfo`` does (PEP 495, ``fold=0``), and lands an hour later in UTC.

``first_inside(not_before, keep, rules, zone)`` prefers ``keep``, the task's own local time of day:
on the first window day on or after ``not_before`` it is ``keep`` when that is inside the window
(else the window's start), unless that moment is already past on ``not_before``'s own day, when
``not_before`` itself is taken if it is inside the window and the next window day otherwise.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from outreach.sequence_rules import SequenceRules

# Seven days hold every weekday; one more for a moment late on the last window day.
_SEARCH_DAYS = 8


def _hh_mm(text: str) -> time:
    hours, minutes = text.split(":")
    return time(int(hours), int(minutes))


def window_hours(rules: SequenceRules) -> tuple[time, time]:
    """The window's local start and end."""
    return _hh_mm(rules.window_start), _hh_mm(rules.window_end)


def inside(moment: datetime, rules: SequenceRules, zone: ZoneInfo) -> bool:
    """Whether ``moment`` is inside the window."""
    start, end = window_hours(rules)
    local = moment.astimezone(zone)
    return local.weekday() in rules.send_days and start <= local.time().replace(tzinfo=None) < end


def _at(day: date, clock_time: time, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, clock_time, tzinfo=zone).astimezone(UTC)


def first_inside(not_before: datetime, keep: time, rules: SequenceRules, zone: ZoneInfo) -> datetime:
    """The first moment inside the window at or after ``not_before``, at ``keep`` (local) where the
    window allows it (module docstring); in UTC, to the second."""
    start, end = window_hours(rules)
    preferred = keep if start <= keep < end else start
    earliest = not_before.astimezone(UTC).replace(microsecond=0)
    if earliest < not_before:
        earliest += timedelta(seconds=1)
    first_day = earliest.astimezone(zone).date()
    for offset in range(_SEARCH_DAYS):
        day = first_day + timedelta(days=offset)
        if day.weekday() not in rules.send_days:
            continue
        candidate = _at(day, preferred, zone)
        if candidate >= earliest:
            return candidate
        if inside(earliest, rules, zone):
            return earliest
    raise ValueError("the window has no day to send on")  # send_days is never empty
