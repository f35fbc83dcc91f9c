"""How often one recipient domain is mailed: a cap per local day and a least gap between two emails.

Many recipients at one company share its mail servers, and a burst of mail from an unknown sender to
one domain is what its filters learn to reject: the planner spreads a campaign's emails to each
recipient domain (the part after the ``@``, as planned) so that no local day (in the window's zone)
holds more than ``domain_daily_cap`` of them and no two are closer than ``domain_min_gap_seconds``,
counting every step. A campaign file sets both under ``pacing``; the defaults are below.

``DomainPacing.earliest`` is the first instant at or after a candidate that both allow; the planner
asks it of each candidate slot its rate and window give, until a slot is one both allow
(``planning``), and ``record`` books the slot taken.
"""

from __future__ import annotations

import bisect
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_DOMAIN_DAILY_CAP = 50
DEFAULT_DOMAIN_MIN_GAP_SECONDS = 120


class Pacing(BaseModel):
    """The campaign file's ``pacing``: per recipient domain, emails per local day and the least gap."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    domain_daily_cap: int = Field(default=DEFAULT_DOMAIN_DAILY_CAP, ge=1, le=1_000_000)
    domain_min_gap_seconds: int = Field(default=DEFAULT_DOMAIN_MIN_GAP_SECONDS, ge=0, le=86_400)


def domain_of(address: str) -> str:
    """The recipient domain of a planned address (lower case)."""
    return address.rsplit("@", 1)[-1].lower()


class DomainPacing:
    """The emails booked per domain: their instants (sorted) and their count per local day."""

    def __init__(self, pacing: Pacing, zone: ZoneInfo) -> None:
        self._cap = pacing.domain_daily_cap
        self._gap = pacing.domain_min_gap_seconds
        self._zone = zone
        self._times: dict[str, list[float]] = {}
        self._per_day: dict[tuple[str, str], int] = {}

    def _day(self, instant: float) -> str:
        return datetime.fromtimestamp(instant, self._zone).date().isoformat()

    def _next_day(self, instant: float) -> float:
        """The first instant of the local day after ``instant``'s."""
        local = datetime.fromtimestamp(instant, self._zone)
        midnight = datetime.combine(local.date() + timedelta(days=1), datetime.min.time(), tzinfo=self._zone)
        return midnight.astimezone(UTC).timestamp()

    def earliest(self, domain: str, candidate: float) -> float:
        """The first instant at or after ``candidate`` (epoch seconds) with room on its local day and
        at least the gap from every email booked to ``domain``."""
        booked = self._times.get(domain, [])
        moment = candidate
        while True:
            if self._per_day.get((domain, self._day(moment)), 0) >= self._cap:
                moment = self._next_day(moment)
                continue
            # The latest booked email closer than the gap, on either side: move past it.
            low = bisect.bisect_right(booked, moment - self._gap)
            high = bisect.bisect_left(booked, moment + self._gap)
            if self._gap and low < high:
                moment = booked[high - 1] + self._gap
                continue
            return moment

    def record(self, domain: str, instant: float) -> None:
        """Book an email to ``domain`` at ``instant``."""
        bisect.insort(self._times.setdefault(domain, []), instant)
        key = (domain, self._day(instant))
        self._per_day[key] = self._per_day.get(key, 0) + 1
