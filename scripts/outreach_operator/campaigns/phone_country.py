"""A recipient's ``phone`` column: its numbers, checked, and the one country they all name.

The column holds one or more numbers in international form (``+`` and the country calling code),
separated by ``;``: at most ``MAX_NUMBERS`` numbers in ``MAX_CHARS`` characters. Each is read as the
scraper reads a number (``outreach.scraping.phones.parse_phone``: valid for its country, not a template
such as ``+44 1234 567890``); a value that is not such a list refuses the row, naming the field.
From a scrape job the column holds the E.164 numbers (phone and fax) the site showed, the first
``MAX_NUMBERS``.

The country of a number is the region of its calling code and, where a code is shared, its leading
digits (``phones.region_of``: +49 Germany, +1 876 Jamaica, +1 212 the United States, +44 1481
Guernsey). The numbers name a country only when every one of them names the same one: a site with a
Berlin and a London number, or a non-geographic number (+800), names none.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from outreach.scraping.phones import parse_phone, region_of

COLUMN = "phone"
MAX_NUMBERS = 10
MAX_CHARS = 300


def phone_numbers(value: str) -> list[str]:
    """The numbers of a ``phone`` column in E.164 form; ``ValueError`` naming the column for a value
    too long, with too many numbers or with one that is not a valid number in international form."""
    if len(value) > MAX_CHARS:
        raise ValueError(f"{COLUMN}: {len(value):,} characters, at most {MAX_CHARS} are read")
    written = [part.strip() for part in value.split(";") if part.strip()]
    if len(written) > MAX_NUMBERS:
        raise ValueError(f"{COLUMN}: {len(written)} numbers, at most {MAX_NUMBERS} are read")
    numbers = []
    for raw in written:
        number = parse_phone(raw, None) if raw.startswith("+") else None
        if number is None:
            raise ValueError(
                f"{COLUMN}: not a valid number in international form (+ and country code): {raw[:40]!r}"
            )
        numbers.append(number)
    return numbers


def phone_cell(e164_numbers: Iterable[str]) -> str:
    """The ``phone`` column of scraped numbers: the first ``MAX_NUMBERS`` that are valid, ``;``-separated."""
    valid = (parse_phone(raw, None) for raw in e164_numbers if raw.startswith("+"))
    return ";".join([number for number in valid if number is not None][:MAX_NUMBERS])


def phone_country(numbers: Sequence[str]) -> str | None:
    """The country (ISO 3166 alpha-2) every one of the E.164 ``numbers`` names, else None."""
    regions = {region_of(number) for number in numbers}
    if len(regions) != 1:
        return None
    return regions.pop()
