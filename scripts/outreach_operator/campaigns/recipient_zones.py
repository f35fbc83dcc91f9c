"""A recipient's time zone, in which the campaign's window applies: where it comes from, in order.

1. The recipients file's ``timezone`` column (an IANA name, e.g. ``America/New_York``); a value that is
   no IANA zone refuses the row, naming the field.
2. The country of the address's domain: a country-code top-level domain of a country whose zones in
   the tz database's ``zone.tab`` all keep one time (``.de`` Europe/Berlin, ``.fr`` Europe/Paris;
   ``.uk`` is GB's). A country of several times (``.us``, ``.au``, ``.es`` with the Canaries) tells
   nothing, nor does a generic domain (``.com``).
3. The campaign window's own zone.

``zone.tab`` is read from the ``tzdata`` package (the same database ``zoneinfo`` uses), not copied.
A scraped page's language and phone numbers are not read yet.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from importlib.resources import files
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

COLUMN = "timezone"
# Top-level domains that are not their country's ISO 3166 code.
_TLD_COUNTRY = {"uk": "GB"}
# A winter and a summer instant of either hemisphere, at which a country's zones are compared.
_SEASONS = (datetime(2026, 1, 15, 12, tzinfo=UTC), datetime(2026, 7, 15, 12, tzinfo=UTC))

Source = Literal["column", "country", "campaign"]


@dataclass(frozen=True)
class RecipientZone:
    """The zone a recipient's window applies in, and which rule gave it."""

    name: str
    source: Source

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.name)


def _offsets(name: str) -> tuple[timedelta | None, ...]:
    zone = ZoneInfo(name)
    return tuple(moment.astimezone(zone).utcoffset() for moment in _SEASONS)


@cache
def _one_time_countries() -> dict[str, str]:
    """ISO country code -> its first zone in ``zone.tab``, for each country whose zones all keep the
    same offsets from UTC in winter and summer (Germany's Berlin and Busingen; not Spain's Canaries)."""
    zones: dict[str, list[str]] = defaultdict(list)
    for line in files("tzdata").joinpath("zoneinfo/zone.tab").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            country, _, name = line.split("\t")[:3]
            zones[country].append(name)
    return {
        country: names[0] for country, names in zones.items() if len({_offsets(name) for name in names}) == 1
    }


def country_zone(address: str) -> str | None:
    """The zone of the address's domain's country, when its top-level domain names a one-time country."""
    tld = address.rsplit(".", 1)[-1].lower()
    if len(tld) != 2:
        return None
    return _one_time_countries().get(_TLD_COUNTRY.get(tld, tld.upper()))


def zone_of(address: str, column: str | None, campaign_zone: str) -> RecipientZone:
    """The recipient's zone from its ``timezone`` column, its domain's country or the campaign;
    ``ValueError`` naming the column for a value that is no IANA zone."""
    if column:
        try:
            ZoneInfo(column)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"{COLUMN}: not an IANA time zone: {column[:60]!r}") from exc
        return RecipientZone(column, "column")
    found = country_zone(address)
    if found is not None:
        return RecipientZone(found, "country")
    return RecipientZone(campaign_zone, "campaign")
