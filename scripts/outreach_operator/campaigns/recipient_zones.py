"""A recipient's time zone, in which the campaign's window applies: where it comes from, in order.

1. ``column``: the recipients file's ``timezone`` column (an IANA name, e.g. ``America/New_York``).
2. ``country``: the country of the address's domain: a country-code top-level domain of a country
   that keeps one time (``country_zones``: ``.de`` Europe/Berlin, ``.fr`` Europe/Paris; ``.uk`` is
   GB's). A country of several times (``.us``, ``.au``, ``.es`` with the Canaries) tells nothing, nor
   does a generic domain (``.com``).
3. ``phone``: the country every number of the ``phone`` column names (``phone_country``: from a
   scrape job, the numbers the site showed), when it keeps one time: ``+49`` Europe/Berlin; a ``+1``
   number of the United States, or numbers of two countries, tell nothing.
4. ``language``: the zone the ``language`` column names (``language_zone``: from a scrape job, the
   page's language), when every country whose language it is keeps the same one time: ``ja``
   Asia/Tokyo, ``de`` Europe/Berlin, ``de-at`` Europe/Vienna; ``en`` or ``es`` tell nothing.
5. ``campaign``: the campaign window's own zone.

Every one of the three columns a row has is checked, whichever decides: a value that is no IANA zone,
no list of valid international numbers or no language tag refuses the row, naming the column.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from outreach_operator.campaigns import language_zone, phone_country
from outreach_operator.campaigns.country_zones import one_time_zone

COLUMN = "timezone"
# Top-level domains that are not their country's ISO 3166 code.
_TLD_COUNTRY = {"uk": "GB"}

Source = Literal["column", "country", "phone", "language", "campaign"]


@dataclass(frozen=True)
class RecipientZone:
    """The zone a recipient's window applies in, and which rule gave it."""

    name: str
    source: Source

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.name)


def country_zone(address: str) -> str | None:
    """The zone of the address's domain's country, when its top-level domain names a one-time country."""
    tld = address.rsplit(".", 1)[-1].lower()
    if len(tld) != 2:
        return None
    return one_time_zone(_TLD_COUNTRY.get(tld, tld.upper()))


def _timezone_column(value: str) -> str:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"{COLUMN}: not an IANA time zone: {value[:60]!r}") from exc
    return value


def zone_of(address: str, values: Mapping[str, str], campaign_zone: str) -> RecipientZone:
    """The recipient's zone from its ``timezone`` column, its domain's country, its phone numbers' country,
    its language or the campaign; ``ValueError`` naming the column for a value that is not one."""
    column = _timezone_column(values[COLUMN]) if values.get(COLUMN) else None
    phones = (
        phone_country.phone_numbers(values[phone_country.COLUMN]) if values.get(phone_country.COLUMN) else []
    )
    tag = (
        language_zone.language_of(values[language_zone.COLUMN]) if values.get(language_zone.COLUMN) else None
    )
    if column is not None:
        return RecipientZone(column, "column")
    found = country_zone(address)
    if found is not None:
        return RecipientZone(found, "country")
    country = phone_country.phone_country(phones) if phones else None
    found = one_time_zone(country) if country is not None else None
    if found is not None:
        return RecipientZone(found, "phone")
    found = language_zone.language_zone(tag) if tag is not None else None
    if found is not None:
        return RecipientZone(found, "language")
    return RecipientZone(campaign_zone, "campaign")
