"""Which countries keep one time, and in which zone: from the tz database's ``zone.tab``.

A country (ISO 3166 alpha-2) keeps one time when all its zones in ``zone.tab`` have the same offset
from UTC at noon UTC of every week of 2026: Germany's Berlin and Busingen do, Spain (the Canaries an
hour behind Madrid), the United States and Australia do not. Its zone is the first ``zone.tab`` lists
for it. Zones of different countries keep the same time by the same test (Berlin, Vienna and Zurich
do; Berlin and Helsinki do not). A weekly sample tells apart clocks that change on different dates;
two countries whose clocks change within the same week at different hours (Moldova's and Romania's)
count as keeping one time.

``zone.tab`` is read from the ``tzdata`` package (the same database ``zoneinfo`` uses), not copied.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from functools import cache
from importlib.resources import files
from zoneinfo import ZoneInfo

_SAMPLES = tuple(datetime(2026, 1, 1, 12, tzinfo=UTC) + timedelta(weeks=week) for week in range(53))


@cache
def _offsets(name: str) -> tuple[timedelta | None, ...]:
    zone = ZoneInfo(name)
    return tuple(moment.astimezone(zone).utcoffset() for moment in _SAMPLES)


def same_time(names: Iterable[str]) -> bool:
    """True when all the zones ``names`` (IANA names) keep one time."""
    return len({_offsets(name) for name in names}) <= 1


@cache
def _one_time_countries() -> dict[str, str]:
    """ISO country code -> its first zone in ``zone.tab``, for each country whose zones keep one time."""
    zones: dict[str, list[str]] = defaultdict(list)
    for line in files("tzdata").joinpath("zoneinfo/zone.tab").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            country, _, name = line.split("\t")[:3]
            zones[country].append(name)
    return {country: names[0] for country, names in zones.items() if same_time(names)}


def one_time_zone(country: str) -> str | None:
    """The zone of ``country`` (ISO 3166 alpha-2, upper case) if it keeps one time, else None."""
    return _one_time_countries().get(country)
