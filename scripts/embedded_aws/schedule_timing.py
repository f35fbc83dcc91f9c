"""When a rule or schedule fires: its first and following scheduled times on the virtual clock."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from embedded_aws.errors import InvalidScheduleExpressionError
from embedded_aws.schedule_expressions import CronExpression, at_timestamp, rate_seconds


@dataclass
class Timing:
    """What the runner knows of one rule or schedule between ticks.

    ``version``: what the listing shows of it (a change means reading it again); ``timing``: the
    fields that place its occurrences (expression, time zone, StartDate); ``source``: it as read;
    ``due``: its next scheduled time, None once it never fires again.
    """

    version: tuple[Any, ...]
    timing: tuple[Any, ...]
    source: dict[str, Any]
    due: float | None


def first_due(expression: str, timezone: str | None, start: float | None, now: float) -> float | None:
    """The first scheduled time of an expression seen at ``now``; a rule's rate() is handled by its caller.

    at(): its moment. rate(): StartDate, or at once without one (schedule-types.html, rate-based).
    cron(): the first match at or after StartDate or now.
    """
    moment = at_timestamp(expression, timezone)
    if moment is not None:
        return moment
    if rate_seconds(expression) is not None:
        return start if start is not None else now
    cron = CronExpression.parse(expression)
    if cron is None:
        raise InvalidScheduleExpressionError(f"not at(), rate() or cron(): {expression}")
    return cron.next_after(max(now, start or now) - 1, timezone)


def following_due(expression: str, timezone: str | None, due: float) -> float | None:
    """The scheduled time after ``due``: None for at(), one period later for rate(), the next cron match."""
    period = rate_seconds(expression)
    if period is not None:
        return due + period
    cron = CronExpression.parse(expression)
    return cron.next_after(due, timezone) if cron is not None else None
