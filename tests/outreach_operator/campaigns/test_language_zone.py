"""A language names a zone only when every country CLDR counts it official in keeps one and the same time;
a tag's region names its own country; the tag is checked and bounded."""

from __future__ import annotations

import pytest

from outreach_operator.campaigns.country_zones import same_time
from outreach_operator.campaigns.language_zone import language_cell, language_of, language_zone


@pytest.mark.parametrize(
    ("tag", "zone"),
    [
        ("ja", "Asia/Tokyo"),  # official in Japan alone
        ("de", "Europe/Berlin"),  # DE, AT, CH, LI, LU, BE: one time, Germany the likely country
        ("it", "Europe/Rome"),  # IT, CH, SM, VA
        ("ko", "Asia/Seoul"),  # both Koreas
        ("zh-hant", "Asia/Taipei"),  # Traditional Chinese: TW, HK, MO, Taiwan the likely country
        ("de-at", "Europe/Vienna"),  # the region decides
        ("de-ch", "Europe/Zurich"),
        ("en-gb", "Europe/London"),
        ("zh-hant-tw", "Asia/Taipei"),
        ("de-u-co-phonebk", "Europe/Berlin"),  # an extension is no region
        ("en", None),  # official in ninety-one countries and territories
        ("es", None),
        ("fr", None),
        ("pt", None),
        ("ar", None),
        ("sv", None),  # Sweden and Finland are an hour apart
        ("nl", None),  # Suriname
        ("tr", None),  # Cyprus
        ("zh", None),  # China: zone.tab lists Urumqi beside Shanghai
        ("en-us", None),  # a country of several times
        ("pt-br", None),
        ("da", "Europe/Copenhagen"),
        ("da-gl", None),  # Danish names Copenhagen, but Greenland keeps four times
        ("es-419", None),  # Latin America: no country
        ("eu", None),  # Basque: official only in a region of Spain
    ],
)
def test_a_language_names_a_zone_only_when_all_its_countries_keep_one_time(
    tag: str, zone: str | None
) -> None:
    assert language_zone(tag) == zone


def test_countries_keep_one_time_only_if_their_clocks_change_in_the_same_weeks() -> None:
    # Egypt's summer time starts a month after the EU's: on 15 January and 15 July the two agree.
    assert (same_time(["Europe/Berlin", "Europe/Vienna"]), same_time(["Europe/Athens", "Africa/Cairo"])) == (
        True,
        False,
    )


def test_a_language_column_is_read_as_the_scraper_reads_a_page_language() -> None:
    assert [language_of(value) for value in ("de", "de-AT", "de_AT", " JA ", "zh-Hant-TW")] == [
        "de",
        "de-at",
        "de-at",
        "ja",
        "zh-hant-tw",
    ]


@pytest.mark.parametrize(
    ("scraped", "cell"), [("de-at", "de-at"), ("de-" + "-".join(["abcdefgh"] * 4), ""), ("", "")]
)
def test_a_scraped_language_longer_than_a_tag_fills_no_column(scraped: str, cell: str) -> None:
    assert language_cell(scraped) == cell
