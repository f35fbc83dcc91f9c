"""When a schedule expression fires: rate(), at() and cron() in a time zone, and a flexible window's offset.

Pages relied on:

- Scheduler expressions, time zones and daylight saving time:
  https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html
- EventBridge rule expressions (always UTC):
  https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-scheduled-rule-pattern.html
- Flexible time windows:
  https://docs.aws.amazon.com/scheduler/latest/UserGuide/managing-schedule-flexible-time-windows.html

``cron()`` is evaluated by ``cronsim`` on wall-clock time after a translation of AWS's dialect
(:func:`cronsim_fields`); the year field and ``nW`` (nearest weekday), which cronsim lacks, are
applied here, and so is the time zone: a wall-clock time that does not exist (spring forward) is
skipped, one that exists twice (fall back) fires once, at its first occurrence.
"""

from __future__ import annotations

import hashlib
import re
from calendar import monthrange
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from cronsim import CronSim, CronSimError

from embedded_aws.errors import InvalidScheduleExpressionError

_RATE = re.compile(r"^rate\((\d+)\s+(minute|minutes|hour|hours|day|days)\)$")
_AT = re.compile(r"^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$")
_CRON = re.compile(r"^cron\((.*)\)$")
_UNIT_SECONDS = {"minute": 60, "hour": 3600, "day": 86400}
_NEAREST_WEEKDAY = re.compile(r"^(\d{1,2})W$")
_YEARS = (1970, 2199)
# Candidates tried before an expression is declared never to fire again (a 29 February on a Monday
# in a given year list, say); a minutely cron in a skipped DST hour needs 60.
_MAX_CANDIDATES = 5000


def rate_seconds(expression: str) -> int | None:
    """The period of a ``rate(value unit)`` expression in seconds; None for any other expression."""
    match = _RATE.match(expression.strip())
    if not match:
        return None
    return int(match.group(1)) * _UNIT_SECONDS[match.group(2).rstrip("s")]


def at_timestamp(expression: str, timezone: str | None = None) -> float | None:
    """The moment of an ``at(yyyy-mm-ddThh:mm:ss)`` expression in ``timezone``; None for others."""
    match = _AT.match(expression.strip())
    if not match:
        return None
    moment = datetime.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S").replace(
        tzinfo=ZoneInfo(timezone or "UTC")
    )
    return moment.timestamp()


def _shift_day_number(token: str) -> str:
    """AWS numbers days of week 1-7 from Sunday; cronsim 0-6 (eb-scheduled-rule-pattern.html)."""
    return re.sub(r"\d+", lambda m: str(int(m.group(0)) - 1), token)


def _translate_day_of_week(field: str) -> str:
    if field == "L":  # the last day of the week: Saturday
        return "6"
    parts = []
    for part in field.split(","):
        if "/" in part or "#" in part:  # a step's size and an nth's n are not day numbers
            separator = "/" if "/" in part else "#"
            day, count = part.split(separator, 1)
            parts.append(f"{_shift_day_number(day)}{separator}{count}")
        else:
            parts.append(_shift_day_number(part))
    return ",".join(parts)


def cronsim_fields(fields: list[str]) -> tuple[str, str | None, str]:
    """(cronsim expression, nearest-weekday day or None, year field) for AWS's six cron fields.

    Translated: ``?`` becomes ``*``; days of week 1-7 (SUN-SAT) become 0-6, in ranges, lists, steps,
    ``n#k`` and ``nL``; ``L`` alone in day-of-week becomes Saturday. ``nW`` is taken out of
    day-of-month (cronsim has only ``LW``) and the year field is returned for the caller to apply.
    """
    if len(fields) != 6:
        raise InvalidScheduleExpressionError(f"cron() takes 6 fields, not {len(fields)}")
    minute, hour, day_of_month, month, day_of_week, year = (f.upper() for f in fields)
    if (day_of_month == "?") == (day_of_week == "?"):
        raise InvalidScheduleExpressionError("exactly one of day-of-month and day-of-week must be '?'")
    nearest = _NEAREST_WEEKDAY.match(day_of_month)
    weekday_of = nearest.group(1) if nearest else None
    if day_of_month == "?" or weekday_of is not None:
        day_of_month = "*"
    day_of_week = "*" if day_of_week == "?" else _translate_day_of_week(day_of_week)
    return f"{minute} {hour} {day_of_month} {month} {day_of_week}", weekday_of, year


def _year_matches(field: str, year: int) -> bool:
    if field in ("*", "?"):
        return True
    for part in field.split(","):
        span, _, step = part.partition("/")
        if span == "*":
            low, high = _YEARS
        elif "-" in span:
            low, high = (int(v) for v in span.split("-", 1))
        else:
            low = int(span)
            high = _YEARS[1] if step else low
        if low <= year <= high and (year - low) % int(step or 1) == 0:
            return True
    return False


def _last_year(field: str) -> int:
    """The last year the field admits (an upper bound that ends the search)."""
    if field in ("*", "?") or "*" in field or "/" in field:
        return _YEARS[1]
    return max(int(v) for v in re.split(r"[,-]", field))


def _nearest_weekday(year: int, month: int, day: int) -> int:
    """The weekday (Mon-Fri) nearest ``day`` of the month, never leaving the month (``nW``)."""
    last = monthrange(year, month)[1]
    day = min(day, last)
    weekday = datetime(year, month, day).weekday()
    if weekday == 5:  # Saturday: the Friday before, or the Monday after on the 1st
        return day - 1 if day > 1 else day + 2
    if weekday == 6:  # Sunday: the Monday after, or the Friday before on the last day
        return day + 1 if day < last else day - 2
    return day


@dataclass(frozen=True)
class CronExpression:
    """An AWS ``cron(minutes hours day-of-month month day-of-week year)`` expression."""

    expression: str
    cronsim: str
    nearest_weekday_of: int | None
    years: str

    @classmethod
    def parse(cls, expression: str) -> CronExpression | None:
        """The parsed expression; None when it is not ``cron(...)``; InvalidScheduleExpressionError if bad."""
        match = _CRON.match(expression.strip())
        if not match:
            return None
        translated, weekday_of, years = cronsim_fields(match.group(1).split())
        try:
            CronSim(translated, datetime(2000, 1, 1))
            _year_matches(years, 2000)
        except (CronSimError, ValueError) as exc:
            raise InvalidScheduleExpressionError(f"{expression}: {exc}") from exc
        return cls(expression, translated, int(weekday_of) if weekday_of else None, years)

    def _wall_times(self, after: datetime) -> Iterator[datetime]:
        """Matching wall-clock (naive) times strictly after ``after``, in order."""
        last_year = _last_year(self.years)
        for count, candidate in enumerate(CronSim(self.cronsim, after)):
            if candidate.year > last_year or count >= _MAX_CANDIDATES:
                return
            if not _year_matches(self.years, candidate.year):
                continue
            if self.nearest_weekday_of is not None and candidate.day != _nearest_weekday(
                candidate.year, candidate.month, self.nearest_weekday_of
            ):
                continue
            yield candidate

    def next_after(self, after: float, timezone: str | None = None) -> float | None:
        """The first firing strictly after ``after`` (epoch seconds) in ``timezone``; None if none is left.

        Daylight saving time as schedule-types.html documents it: a wall-clock time skipped by the
        spring change does not fire; a time repeated by the autumn change fires once (its first
        occurrence).
        """
        zone = ZoneInfo(timezone or "UTC")
        # Start one hour of wall time back so the first occurrence of a repeated hour is not passed over.
        start = datetime.fromtimestamp(after, tz=zone).replace(tzinfo=None, second=0, microsecond=0)
        for wall in self._wall_times(start - timedelta(hours=1)):
            first = wall.replace(tzinfo=zone, fold=0)
            if first.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != wall:
                continue  # this wall-clock time does not exist on that day
            moment = first.timestamp()
            if moment > after:
                return moment
        return None


def flexible_offset(window: dict[str, Any] | None, source_arn: str, scheduled_time: float) -> float:
    """Seconds after the scheduled time at which a FLEXIBLE window delivers; 0 when the mode is OFF.

    The offset is spread over ``[0, MaximumWindowInMinutes)`` by a hash of the schedule and the
    occurrence, so every run of a test sees the same offsets.
    """
    if not window or window.get("Mode") != "FLEXIBLE":
        return 0.0
    span = int(window.get("MaximumWindowInMinutes") or 0) * 60
    if span <= 0:
        return 0.0
    digest = hashlib.sha256(f"{source_arn}@{scheduled_time:.0f}".encode()).digest()
    return float(int.from_bytes(digest[:8], "big") % span)
