"""The send window in time: is an instant inside it, and when does it next open.

All arithmetic is on real instants; weekday and hour are read in the window's time zone, so a window
of 09:00-17:00 Europe/Berlin is 08:00-16:00 UTC in winter and 07:00-15:00 UTC in summer, a local time
skipped when clocks go forward is never produced and one repeated when they go back is two instants.
The window is half open: it includes ``start`` and excludes ``end``.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from outreach_operator.campaigns.campaign_file import SendWindow

_MINUTE = timedelta(minutes=1)


def inside(window: SendWindow, instant: datetime) -> bool:
    local = instant.astimezone(window.zone)
    return local.weekday() in window.weekday_numbers and window.start <= local.time() < window.end


def _next_window_day(window: SendWindow, after: date) -> date:
    day = after + timedelta(days=1)
    while day.weekday() not in window.weekday_numbers:
        day += timedelta(days=1)
    return day


def next_open(window: SendWindow, instant: datetime) -> datetime:
    """The first instant at or after ``instant`` (timezone-aware) inside the window, in UTC."""
    earliest = moment = instant.astimezone(UTC)
    while not inside(window, moment):
        local = moment.astimezone(window.zone)
        days = [_next_window_day(window, local.date())]
        if local.weekday() in window.weekday_numbers:
            days.insert(0, local.date())
        # Both readings of the start's wall time: they differ when the clocks change at that hour.
        readings = [
            datetime.combine(day, window.start, tzinfo=window.zone).replace(fold=fold).astimezone(UTC)
            for day in days
            for fold in (0, 1)
        ]
        later = [reading for reading in readings if reading > moment]
        moment = min(later) if later else moment + _MINUTE
    # A start inside a skipped hour reads as a time after it: the window opened when the clocks jumped.
    while moment - _MINUTE >= earliest and inside(window, moment - _MINUTE):
        moment -= _MINUTE
    return moment


def add_local_days(window: SendWindow, instant: datetime, days: int) -> datetime:
    """``instant`` moved ``days`` calendar days on in the window's zone (same wall time), in UTC.

    A wall time the clocks repeat keeps its reading (``fold``): datetime arithmetic resets it to the
    first, which would put an instant read in the repeated hour up to an hour before itself.
    """
    local = instant.astimezone(window.zone)
    moved = local.replace(tzinfo=None) + timedelta(days=days)
    return moved.replace(tzinfo=window.zone, fold=local.fold).astimezone(UTC)
