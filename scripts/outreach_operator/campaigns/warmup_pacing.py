"""The warm-up ramp in the plan: a campaign's emails per UTC day kept under its sending identity's cap.

While the identity warms up (modules/email's ``warmup``, ``outreach.warmup_ramp``), the worker counts
every email of every campaign against the day's cap at send time and defers the ones past it. The
planner keeps the campaign it plans under the same cap, so its own emails are not deferred: a slot on
a UTC day that already holds the day's effective cap (the ramp's, under the account's Max24HourSend)
moves to the next UTC day; nothing is dropped. After the ramp's last day, or without a ramp, nothing
moves. Other campaigns' emails on the same days are not seen here; the worker's count covers them.

The planner learns the ramp from the environment's Terraform output ``email_warmup`` (the module's
validated setting, each default declared once, in modules/email), the quota from GetAccount.
``WarmupPacing.earliest`` is the first instant at or after a candidate with room on its UTC day,
``record`` books one; ``report`` gives, per UTC day with a cap, the emails planned and the cap.
"""

from __future__ import annotations

from collections import Counter
from datetime import date
from typing import Any

from outreach.warmup_ramp import WarmupRamp, next_utc_day_start, utc_day


class WarmupPacing:
    """The campaign's emails per UTC day, held under the identity's effective cap of each day."""

    def __init__(self, ramp: WarmupRamp, max_24_hour_send: float) -> None:
        self._ramp = ramp
        self._quota = max_24_hour_send
        self._per_day: Counter[date] = Counter()

    def cap(self, day: date) -> int | None:
        """The effective cap on the UTC ``day`` (``None``: no ramp that day)."""
        return self._ramp.cap(day, self._quota)

    def earliest(self, candidate: float) -> float:
        """The first instant at or after ``candidate`` (epoch seconds) whose UTC day has room."""
        moment = candidate
        while True:
            day = utc_day(moment)
            cap = self.cap(day)
            if cap is None or self._per_day[day] < cap:
                return moment
            moment = next_utc_day_start(moment)

    def record(self, instant: float) -> None:
        """Book one email at ``instant``."""
        self._per_day[utc_day(instant)] += 1

    def report(self) -> list[dict[str, Any]]:
        """Per UTC day of the plan under a cap: the emails planned and the cap, in order."""
        return [
            {"day": day.isoformat(), "planned": planned, "cap": cap}
            for day, planned in sorted(self._per_day.items())
            if (cap := self.cap(day)) is not None
        ]
