"""Extraction rules for one HTML page (fixtures in tests/fixtures/html/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from outreach.scraping.charset import decode_html, looks_like_html
from outreach.scraping.contacts import PhoneKind
from outreach.scraping.extract import CandidateLink, PageExtract, extract_page

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "html"
MUELLER = "https://www.mueller-maschinenbau.de/"


def extract_fixture(name: str, page_url: str, max_text_chars: int = 5_000) -> PageExtract:
    html = decode_html((FIXTURES / name).read_bytes())
    return extract_page(html, page_url, max_text_chars=max_text_chars)


def addresses(page: PageExtract) -> tuple[str, ...]:
    return tuple(email.address for email in page.emails)


def numbers(page: PageExtract, kind: PhoneKind = PhoneKind.PHONE) -> tuple[str, ...]:
    return tuple(phone.e164 for phone in page.phones if phone.kind is kind)


@pytest.fixture(scope="module")
def home() -> PageExtract:
    return extract_fixture("mueller_home.html", MUELLER)


def test_the_title_comes_from_the_title_element_with_whitespace_collapsed(home: PageExtract) -> None:
    assert home.title == "Müller Maschinenbau GmbH | Sondermaschinen aus Stuttgart"


def test_without_a_title_element_the_open_graph_title_is_used() -> None:
    page = extract_fixture("northwind_about.html", "https://www.northwind.example/en/about")
    assert page.title == "Northwind Traders Ltd \u2013 About us"


def test_the_description_comes_from_meta_description_whatever_its_case(home: PageExtract) -> None:
    assert home.description == "Sondermaschinen und Automatisierung für die Automobilindustrie seit 1978."


def test_without_meta_description_the_open_graph_description_is_used() -> None:
    page = extract_fixture("northwind_about.html", "https://www.northwind.example/en/about")
    assert page.description == "Importers of fine foods since 1995."


@pytest.mark.parametrize(
    ("fixture", "language"),
    [
        ("mueller_home.html", "de-de"),  # <html lang="de-DE">
        ("sample_kogyo_shift_jis.html", "ja"),
        ("northwind_about.html", "en-gb"),  # og:locale en_GB
        ("junk_contacts.html", "de-at"),  # invalid lang attribute, then the content-language meta
    ],
)
def test_the_language_comes_from_html_lang_then_meta(fixture: str, language: str) -> None:
    assert extract_fixture(fixture, "https://site.example/").language == language


def test_a_page_without_any_language_hint_has_no_language() -> None:
    assert extract_page("<p>hallo</p>", "https://site.example/", max_text_chars=100).language is None


def test_emails_come_from_mailto_links_and_visible_text_lowercased_and_deduplicated(
    home: PageExtract,
) -> None:
    # GIVEN a mailto link with a query, the same address as link text, and "[at]"/"[dot]" in text
    # THEN each address appears once, lower case, mailto first
    assert addresses(home) == ("vertrieb@mueller-maschinenbau.de", "service@mueller-maschinenbau.de")
    assert [email.decoded.value for email in home.emails] == ["mailto", "written_out"]
    assert {email.page for email in home.emails} == {MUELLER}


def test_addresses_in_scripts_styles_noscript_and_templates_are_ignored(home: PageExtract) -> None:
    for hidden in ("tracking@", "css@", "noscript@", "template@", "sentry"):
        assert not any(hidden in email for email in addresses(home))


def test_image_names_placeholders_and_tracker_ids_are_not_emails() -> None:
    page = extract_fixture("junk_contacts.html", "https://firma-beispiel.de/")
    assert addresses(page) == ("a@firma-beispiel.de", "b@firma-beispiel.de", "kontakt@firma-beispiel.de")


def test_a_mailto_with_several_recipients_yields_each_address() -> None:
    page = extract_fixture("northwind_about.html", "https://www.northwind.example/en/about")
    assert addresses(page) == (
        "sales@northwind.example",
        "support@northwind.example",
        "hello@northwind.example",
    )


def test_phones_come_from_tel_links_and_labelled_or_international_numbers(home: PageExtract) -> None:
    # tel:+49 711 98765-0 and "+49 (0) 711 98765-0" are one number; the fax number is kept apart
    assert numbers(home) == ("+49711987650", "+498005893370")
    assert [phone.as_found for phone in home.phones if phone.kind is PhoneKind.PHONE] == [
        "+49 711 98765-0",
        "0800 / 589 33 70",
    ]


def test_a_fax_number_is_kept_apart_as_kind_fax() -> None:
    imprint = extract_fixture("mueller_impressum.html", MUELLER + "impressum")
    assert numbers(imprint) == ("+49711987650",)
    assert numbers(imprint, PhoneKind.FAX) == ("+497119876599",)
    about = extract_fixture("northwind_about.html", "https://www.northwind.example/en/about")
    assert numbers(about) == ("+442079460958",)  # "tel:0044-20-..." is the same number as the text
    assert numbers(about, PhoneKind.FAX) == ("+442079460999",)


def test_order_numbers_dates_postcodes_and_ibans_are_not_phone_numbers() -> None:
    assert extract_fixture("junk_contacts.html", "https://firma-beispiel.de/").phones == ()


def test_japanese_labelled_phone_numbers_are_found() -> None:
    page = extract_fixture("sample_kogyo_shift_jis.html", "https://sample-kogyo.co.jp/")
    assert numbers(page) == ("+81354128830",)


def test_social_links_are_collected_per_network_without_share_buttons(home: PageExtract) -> None:
    assert dict(home.social_links) == {
        "linkedin": "https://www.linkedin.com/company/mueller-maschinenbau",
        "xing": "https://www.xing.com/pages/muellermaschinenbau",
        "facebook": "https://de-de.facebook.com/MuellerMaschinenbau",
        "instagram": "https://www.instagram.com/mueller.maschinenbau",
        "youtube": "https://www.youtube.com/@MuellerMaschinenbau",
        "x": "https://twitter.com/mueller_mb",
    }
    assert len(home.social_links) == 6  # sharer, shareArticle and intent links are dropped


def test_visible_text_excludes_scripts_and_styles_and_collapses_whitespace(home: PageExtract) -> None:
    assert "Sondermaschinen aus Stuttgart Seit 1978" in home.text
    assert "dataLayer" not in home.text
    assert "font-family" not in home.text
    assert "  " not in home.text


def test_visible_text_is_bounded_to_max_text_chars() -> None:
    page = extract_fixture("mueller_home.html", MUELLER, max_text_chars=120)
    assert 0 < len(page.text) <= 120
    assert page.text.startswith("Start Leistungen")


def test_candidate_links_are_same_site_and_ordered_imprint_contact_about(home: PageExtract) -> None:
    # GIVEN nav links to the imprint, contact and about pages, a job application page whose slug
    # contains "kontakt", an external contact page, a PDF, a javascript: link and an in-page anchor
    assert home.candidate_links == (
        CandidateLink("imprint", MUELLER + "impressum"),
        CandidateLink("contact", MUELLER + "kontakt/"),
        CandidateLink("about", MUELLER + "ueber-uns"),
    )


def test_candidate_links_resolve_against_base_href_and_skip_subdomains() -> None:
    page = extract_fixture("northwind_about.html", "https://www.northwind.example/en/about")
    assert page.candidate_links == (
        CandidateLink("imprint", "https://www.northwind.example/en/legal-notice"),
        CandidateLink("contact", "https://www.northwind.example/en/contact-us"),
        CandidateLink("about", "https://northwind.example/en/about-us/"),
    )


def test_japanese_contact_and_company_pages_are_candidates() -> None:
    page = extract_fixture("sample_kogyo_shift_jis.html", "https://sample-kogyo.co.jp/")
    assert page.candidate_links == (
        CandidateLink("contact", "https://sample-kogyo.co.jp/contact/"),
        CandidateLink("about", "https://sample-kogyo.co.jp/company/"),
    )


def test_a_meta_charset_decides_the_decoding_when_http_names_none() -> None:
    html = decode_html((FIXTURES / "sample_kogyo_shift_jis.html").read_bytes())
    assert "株式会社サンプル工業" in html


def test_the_http_charset_wins_over_the_meta_charset() -> None:
    body = '<meta charset="utf-8"><p>Straße</p>'.encode("cp1252")
    assert "Straße" in decode_html(body, "windows-1252")


def test_undeclared_bytes_that_are_not_utf8_decode_as_windows_1252() -> None:
    assert decode_html("<p>Grüße</p>".encode("cp1252")) == "<p>Grüße</p>"


def test_a_body_cut_inside_a_utf8_character_drops_the_partial_character() -> None:
    body = "<p>Müller</p>ü".encode()[:-1]
    assert decode_html(body, "utf-8") == "<p>Müller</p>"


@pytest.mark.parametrize(
    ("body", "is_html"),
    [
        (b"\n<!DOCTYPE html><html></html>", True),
        (b"<html lang=de>", True),
        (b"%PDF-1.7", False),
        (b'{"json": true}', False),
    ],
)
def test_html_is_recognised_by_its_first_bytes(body: bytes, is_html: bool) -> None:
    assert looks_like_html(body) is is_html
