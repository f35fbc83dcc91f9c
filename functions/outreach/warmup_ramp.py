"""The warm-up ramp of a sending identity: its daily cap on each UTC day, never above the account's quota.

A new sending domain earns its reputation with the mailbox providers by a volume that grows day by
day. ``WarmupRamp(start, daily_caps)`` (modules/email's ``warmup``): the warm-up started on the UTC
date ``start``; on day ``n`` (``start`` is day 1) the identity may send at most ``daily_caps[n - 1]``
emails, counted over every campaign. A UTC day before ``start`` has the first day's cap (the identity
is no warmer before its ramp begins). After the last entry there is no ramp cap, and ``start = None``
is an established identity, never ramped.

The account's own 24-hour quota is the ceiling: ``effective_cap`` is the ramp's cap, or SES's
``Max24HourSend`` where that is lower (GetAccount's ``SendQuota``, -1 for no limit:
https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_SendQuota.html). SES counts its quota over
any 24 hours, the ramp over a UTC day; outside a ramp SES enforces its quota itself.

The default schedule and its source: docs/operator-cli.md, "Warm-up ramp per sending identity".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

# The longest schedule modules/email accepts (a year of days).
MAX_DAYS = 366
# No daily cap above SES's largest published quotas is meaningful; a larger number is a typing error.
MAX_CAP = 10_000_000


def utc_day(epoch_seconds: float) -> date:
    """The UTC date of an instant."""
    return datetime.fromtimestamp(epoch_seconds, UTC).date()


def next_utc_day_start(epoch_seconds: float) -> float:
    """The first instant (epoch seconds) of the UTC day after ``epoch_seconds``'s."""
    following = utc_day(epoch_seconds) + timedelta(days=1)
    return datetime(following.year, following.month, following.day, tzinfo=UTC).timestamp()


def effective_cap(ramp_cap: int, max_24_hour_send: float) -> int:
    """The ramp's cap, or the account's 24-hour quota where that is lower (-1: no quota)."""
    if max_24_hour_send < 0:
        return ramp_cap
    return min(ramp_cap, math.floor(max_24_hour_send))


@dataclass(frozen=True)
class WarmupRamp:
    """The UTC date the identity's warm-up started (``None``: established, no ramp) and its daily caps."""

    start: date | None
    daily_caps: tuple[int, ...]

    def __post_init__(self) -> None:
        caps = self.daily_caps
        if not 1 <= len(caps) <= MAX_DAYS:
            raise ValueError(f"daily_caps must list 1 to {MAX_DAYS} days, got {len(caps)}")
        for day, cap in enumerate(caps, start=1):
            if isinstance(cap, bool) or not isinstance(cap, int) or not 1 <= cap <= MAX_CAP:
                raise ValueError(f"daily_caps day {day}: a whole number from 1 to {MAX_CAP}, got {cap!r}")
        for day in range(1, len(caps)):
            if caps[day] < caps[day - 1]:
                raise ValueError(
                    f"daily_caps must not decrease: day {day + 1} ({caps[day]}) < day {day} ({caps[day - 1]})"
                )

    @property
    def last_day(self) -> date | None:
        """The last UTC day with a ramp cap (``None`` without a ramp)."""
        if self.start is None:
            return None
        return self.start + timedelta(days=len(self.daily_caps) - 1)

    def ramp_cap(self, day: date) -> int | None:
        """The schedule's cap on the UTC ``day``; ``None`` when no ramp applies (none, or it is over)."""
        if self.start is None:
            return None
        index = (day - self.start).days
        if index >= len(self.daily_caps):
            return None
        return self.daily_caps[max(index, 0)]

    def cap(self, day: date, max_24_hour_send: float) -> int | None:
        """The effective cap on ``day``: the ramp's under the account's quota; ``None`` without a ramp."""
        ramp = self.ramp_cap(day)
        return None if ramp is None else effective_cap(ramp, max_24_hour_send)


def parse_start(text: str) -> date | None:
    """``none`` or a UTC date ``YYYY-MM-DD``; ``ValueError`` for anything else."""
    value = text.strip()
    if value.lower() == "none":
        return None
    if len(value) != 10:
        raise ValueError(f"start_date must be none or YYYY-MM-DD, got {value[:40]!r}")
    return date.fromisoformat(value)


def parse_caps(text: str) -> tuple[int, ...]:
    """A comma-separated list of whole numbers; ``ValueError`` naming the entry that is not one."""
    caps = []
    for entry in text.split(","):
        if not entry.strip().isdigit():
            raise ValueError(f"daily_caps entry {entry.strip()[:20]!r} is not a whole number")
        caps.append(int(entry))
    return tuple(caps)
