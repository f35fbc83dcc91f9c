"""The site's robots.txt, fetched once per origin and task and honoured for the scraper's user agent.

Rules are parsed by Protego (RFC 9309 matching: longest match wins, ``*`` and ``$`` patterns). A
robots.txt that is missing (4xx), unreachable, slow (more than :data:`ROBOTS_BUDGET_SECONDS`), refused
by the address guard or otherwise unreadable allows everything: a site that publishes no readable
rules has none to honour. At most :data:`MAX_ROBOTS_BYTES` of it are read (the size RFC 9309 asks
crawlers to parse at least). Turned off (``SCRAPER_RESPECT_ROBOTS_TXT=0``), nothing is fetched and
every page is allowed. What was decided is kept for the result document (:meth:`RobotsRules.record`).

RFC 9309: https://www.rfc-editor.org/rfc/rfc9309
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from protego import Protego

from outreach.errors import ScrapeError
from outreach.scraping.site_urls import HttpTarget

MAX_ROBOTS_BYTES = 500 * 1024
ROBOTS_BUDGET_SECONDS = 15.0

# (robots.txt URL, deadline) -> its body; raises ScrapeError when it cannot be had.
RobotsFetch = Callable[[str, float], bytes]


@dataclass
class _Origin:
    url: str
    status: str
    detail: str = ""
    rules: Protego | None = None


@dataclass
class RobotsRules:
    """The robots.txt decisions of one task: fetched at most once per origin."""

    enabled: bool
    user_agent: str
    fetch: RobotsFetch
    deadline: float
    _origins: dict[str, _Origin] = field(default_factory=dict)
    _disallowed: list[str] = field(default_factory=list)

    def allows(self, target: HttpTarget) -> bool:
        """May the scraper fetch ``target``? Disallowed URLs are remembered for the record."""
        if not self.enabled:
            return True
        rules = self._origin(target).rules
        allowed = rules is None or rules.can_fetch(str(target), self.user_agent)
        if not allowed:
            self._disallowed.append(str(target))
        return allowed

    def record(self) -> dict[str, Any]:
        """For the result document: whether robots.txt was honoured, per origin what was read, refusals."""
        return {
            "respected": self.enabled,
            "origins": [
                {"url": origin.url, "status": origin.status, "detail": origin.detail}
                for origin in self._origins.values()
            ],
            "disallowed": list(self._disallowed),
        }

    def _origin(self, target: HttpTarget) -> _Origin:
        known = self._origins.get(target.origin)
        if known is not None:
            return known
        url = f"{target.origin}/robots.txt"
        deadline = min(self.deadline, time.monotonic() + ROBOTS_BUDGET_SECONDS)
        try:
            body = self.fetch(url, deadline)
        except ScrapeError as exc:  # outcome: an unreadable robots.txt allows, recorded as such
            origin = _Origin(url, "unavailable", exc.reason)
        else:
            text = body[:MAX_ROBOTS_BYTES].decode("utf-8", errors="replace")
            try:
                origin = _Origin(url, "read", f"{len(body)} bytes", Protego.parse(text))
            except ValueError as exc:  # outcome: a broken robots.txt allows, recorded as such
                origin = _Origin(url, "unparseable", type(exc).__name__)
        self._origins[target.origin] = origin
        return origin
