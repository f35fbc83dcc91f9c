"""Phone and fax numbers parsed with phonenumbers: region, validity, E.164, garbage (tests/fixtures/html/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from outreach.scraping.extract import PageExtract, extract_page
from outreach.scraping.phones import parse_phone, region_of, site_region

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "html"
KALTENBACH = "https://www.kaltenbach-druck.de/kontakt"


def extract(name: str, page_url: str) -> PageExtract:
    return extract_page((FIXTURES / name).read_text(encoding="utf-8"), page_url, max_text_chars=5_000)


@pytest.fixture(scope="module")
def kaltenbach() -> PageExtract:
    return extract("contacts_phones_de.html", KALTENBACH)


def e164s(page: PageExtract, kind: str = "phone") -> list[str]:
    return [phone.e164 for phone in page.phones if phone.kind.value == kind]


def test_an_en_dash_inside_a_number_does_not_cut_it_short(kaltenbach: PageExtract) -> None:
    assert "+4922198222220" in e164s(kaltenbach)  # "0221 / 9822 \u2013 2220"
    assert "+492219822" not in e164s(kaltenbach)
    found = next(phone for phone in kaltenbach.phones if phone.e164 == "+4922198222220")
    assert found.as_found == "0221 / 9822 \u2013 2220"


def test_a_zero_width_space_inside_a_number_is_ignored(kaltenbach: PageExtract) -> None:
    assert "+4922198222230" in e164s(kaltenbach)  # "0221\u200b 9822\u200b 2230"


def test_a_glued_on_extension_is_cut_off(kaltenbach: PageExtract) -> None:
    assert "+4922198229147" in e164s(kaltenbach)  # "0221 9822-9147/48"
    assert not any(e164.endswith("914748") for e164 in e164s(kaltenbach))


def test_a_tel_link_with_a_leading_zero_after_the_country_code_is_read(kaltenbach: PageExtract) -> None:
    assert "+492219822225" in e164s(kaltenbach)  # tel:+4902219822225
    assert "+4902219822225" not in e164s(kaltenbach)


def test_national_and_international_forms_of_one_number_are_one_number(kaltenbach: PageExtract) -> None:
    # tel:+49 (0)221 9822-2240 and "Telefon 0221 9822-2240"
    assert e164s(kaltenbach).count("+4922198222240") == 1
    first = next(phone for phone in kaltenbach.phones if phone.e164 == "+4922198222240")
    assert first.as_found == "+49 (0)221 9822-2240"
    assert first.page == KALTENBACH


def test_template_and_invalid_numbers_are_dropped(kaltenbach: PageExtract) -> None:
    # "+44 1234 567890", "0123 4567890", "0000 000000", order numbers, dates, IBANs, "Tel: 12"
    assert e164s(kaltenbach) == [
        "+4922198222240",
        "+492219822225",
        "+4922198222220",
        "+4922198222230",
        "+4922198229147",
        "+498005837412",
    ]


def test_fax_numbers_are_kept_apart_as_kind_fax(kaltenbach: PageExtract) -> None:
    assert e164s(kaltenbach, "fax") == ["+4922198222299", "+4922198222298"]  # Fax, Telefax


def test_spanish_labels_and_the_page_language_give_the_region() -> None:
    # GIVEN a .com site in Spanish with Teléfono, Móvil and Fax labels and the same number with +34
    page = extract("contacts_phones_es.html", "https://ceramicasortega.com/contacto")
    assert e164s(page) == ["+34954213786", "+34654321987"]
    assert e164s(page, "fax") == ["+34954213799"]


@pytest.mark.parametrize(
    ("host", "language", "region"),
    [
        ("www.kaltenbach-druck.de", None, "DE"),  # the country-code suffix
        ("harbourlights.co.uk", "en", "GB"),  # .uk is GB
        ("ceramicasortega.com", "es", "ES"),  # the language
        ("alpenblick.com", "de-at", "AT"),  # the language's region
        ("northwind.example", "en", None),  # neither says a country
    ],
)
def test_the_region_comes_from_the_country_suffix_then_the_language(
    host: str, language: str | None, region: str | None
) -> None:
    assert site_region(host, language) == region


def test_without_a_region_the_first_international_number_on_the_page_gives_it() -> None:
    html = "<p>Call +43 512 58 37 44 or, in Austria, Telefon 0512 58 37 45</p>"
    page = extract_page(html, "https://alpenblick.com/", max_text_chars=1000)
    assert [phone.e164 for phone in page.phones] == ["+43512583744", "+43512583745"]


@pytest.mark.parametrize(
    ("raw", "region", "expected"),
    [
        ("+49 (0) 711 98765-0", None, "+49711987650"),
        ("0711 / 98765-0", "DE", "+49711987650"),
        ("0044 20 7946 0958", None, "+442079460958"),
        ("+44 1234 567890", None, None),  # template
        ("0711 98765-0", None, None),  # national number, no region
        ("123", "DE", None),
    ],
)
def test_numbers_are_parsed_to_e164_only_when_valid(
    raw: str, region: str | None, expected: str | None
) -> None:
    assert parse_phone(raw, region) == expected


@pytest.mark.parametrize(
    ("label", "kind"),
    [
        ("Tel.", "phone"),
        ("Telefon:", "phone"),
        ("Telefonnummer", "phone"),
        ("Phone", "phone"),
        ("Hotline:", "phone"),
        ("Teléfono:", "phone"),
        ("Fax:", "fax"),
        ("Telefax", "fax"),
    ],
)
def test_the_usual_labels_mark_a_national_number_and_fax_labels_make_a_fax(label: str, kind: str) -> None:
    page = extract_page(f"<p>{label} 0221 / 58 37 41</p>", "https://kaltenbach-druck.de/", max_text_chars=500)
    assert [(phone.e164, phone.kind.value) for phone in page.phones] == [("+49221583741", kind)]


def test_a_national_number_without_a_label_is_not_taken() -> None:
    page = extract_page("<p>Auftrag 0221 58 37 41</p>", "https://kaltenbach-druck.de/", max_text_chars=500)
    assert page.phones == ()


@pytest.mark.parametrize(
    ("e164", "region"),
    [
        ("+493020934567", "DE"),
        ("+12126392000", "US"),  # +1 is shared: the area code names the country
        ("+18769291234", "JM"),
        ("+441481710000", "GG"),  # +44 1481: Guernsey, not the United Kingdom
        ("+80024547890", None),  # international freephone: no country
        ("+88216803974", None),
    ],
)
def test_a_numbers_country_comes_from_its_calling_code_and_leading_digits(
    e164: str, region: str | None
) -> None:
    assert region_of(e164) == region
