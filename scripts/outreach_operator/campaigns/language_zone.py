"""A recipient's ``language`` column: the tag, checked, and the zone it names when it names one time.

The column holds one language tag (BCP 47, RFC 5646), in the shape the scraper keeps a page's language
in (``outreach.scraping.language_tag``: ``de``, ``de-AT``, ``zh_Hant``, read as ``de``, ``de-at``,
``zh-hant``), at most ``MAX_CHARS`` characters (the length RFC 5646 section 4.4.1 asks every
implementation to support, unconfirmed against the RFC's text here: a tag of a language, an extended
language, a script, a region and two variants fits); anything else refuses the row, naming the
field. From a scrape job it holds the page's language when it is such a tag, else nothing.

A tag with a region (``de-at``, ``en-gb``, ``zh-hant-tw``) names that country: its zone when it keeps
one time (``country_zones``), else nothing (``en-us``, ``pt-br``); a region of numbers (``es-419``,
Latin America) names no country. A tag without one names the countries where Unicode CLDR counts the
language (with its script, if the tag gives one CLDR knows: ``zh-hant``) official or official in fact,
not only in a region of the country: ``ja`` Japan; ``de`` Germany, Austria, Switzerland, Liechtenstein,
Luxembourg and Belgium; ``en`` ninety-one (babel 2.18). It names a zone only when every one of those
countries keeps one time and all keep the same one (``country_zones.same_time``): ``ja`` Asia/Tokyo,
``de`` Europe/Berlin, ``it`` Europe/Rome, ``ko`` (both Koreas) Asia/Seoul; not ``en``, ``es``, ``fr``,
``pt``, ``ar``, ``nl`` (Suriname), ``sv`` (Finland), ``tr`` (Cyprus), ``zh`` (China's zone.tab lists
Urumqi beside Shanghai), nor a language CLDR counts official nowhere. The zone is that of the country
CLDR's likely subtags give the language (``de`` -> ``de_Latn_DE``) when it is one of them, else of the
first in alphabetical order.

CLDR's data is read from the ``babel`` package (``babel.core.get_global``: ``territory_languages``,
each territory's languages with their ``official_status``, and ``likely_subtags``), not copied; a
newer babel brings a newer CLDR. The planner is tooling: babel is a development dependency, never in a
Lambda zip.
"""

from __future__ import annotations

from collections import defaultdict
from functools import cache

from babel.core import get_global

from outreach.scraping.language_tag import language_tag
from outreach_operator.campaigns.country_zones import one_time_zone, same_time

COLUMN = "language"
MAX_CHARS = 35
# CLDR's official_status values of a language official in the whole territory (not "official_regional").
_NATIONAL = frozenset({"official", "de_facto_official"})


def language_of(value: str) -> str:
    """The tag of a ``language`` column, lower case with ``-``; ``ValueError`` naming the column for a
    value that is no such tag or longer than ``MAX_CHARS``."""
    if len(value) > MAX_CHARS:
        raise ValueError(f"{COLUMN}: {len(value):,} characters, a language tag has at most {MAX_CHARS}")
    tag = language_tag(value)
    if tag is None or "," in value:
        raise ValueError(f"{COLUMN}: not a language tag (such as de or de-AT): {value[:40]!r}")
    return tag


def language_cell(scraped: str) -> str:
    """The ``language`` column of a scraped page's language: the tag if it is one, else empty."""
    if len(scraped) > MAX_CHARS or "," in scraped:
        return ""
    return language_tag(scraped) or ""


@cache
def _official_territories() -> dict[str, frozenset[str]]:
    """CLDR's language key (``de``, ``zh_Hant``) -> the territories where it is official nationally."""
    territories: dict[str, set[str]] = defaultdict(set)
    for territory, languages in get_global("territory_languages").items():
        for language, info in languages.items():
            if info.get("official_status") in _NATIONAL:
                territories[language].add(territory)
    return {language: frozenset(found) for language, found in territories.items()}


def _parts(tag: str) -> tuple[str, str | None, str | None]:
    """The language, script and region subtags of a tag (extended languages, variants and extensions
    are passed over): ``zh-hant-tw`` -> ``("zh", "Hant", "TW")``."""
    language, *rest = tag.split("-")
    while rest and len(rest[0]) == 3 and rest[0].isalpha():  # an extended language subtag (zh-yue)
        rest.pop(0)
    script = rest.pop(0).title() if rest and len(rest[0]) == 4 and rest[0].isalpha() else None
    region = None
    if rest and ((len(rest[0]) == 2 and rest[0].isalpha()) or (len(rest[0]) == 3 and rest[0].isdigit())):
        region = rest[0].upper()
    return language, script, region


def language_zone(tag: str) -> str | None:
    """The zone a checked tag (``language_of``) names, by the rule above; None if it names none."""
    language, script, region = _parts(tag)
    if region is not None:
        return one_time_zone(region) if region.isalpha() else None
    key = f"{language}_{script}" if script and f"{language}_{script}" in _official_territories() else language
    countries = _official_territories().get(key, frozenset())
    zones = [one_time_zone(country) for country in sorted(countries)]
    if not zones or None in zones or not same_time(zone for zone in zones if zone is not None):
        return None
    likely = str(get_global("likely_subtags").get(key, "")).rsplit("_", 1)[-1]
    return one_time_zone(likely if likely in countries else min(countries))
