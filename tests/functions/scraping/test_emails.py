"""E-mail addresses: Cloudflare-protected, mailto, written out, placeholders (tests/fixtures/html/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from outreach.scraping.cloudflare_email import decode_cfemail
from outreach.scraping.contacts import Decoded
from outreach.scraping.emails import emails_in_text, mailto_addresses
from outreach.scraping.extract import PageExtract, extract_page

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "html"


def extract(name: str, page_url: str) -> PageExtract:
    return extract_page((FIXTURES / name).read_text(encoding="utf-8"), page_url, max_text_chars=5_000)


def found(page: PageExtract) -> list[tuple[str, str]]:
    return [(email.address, email.decoded.value) for email in page.emails]


def test_cloudflare_protected_addresses_are_decoded_from_links_and_data_cfemail() -> None:
    # GIVEN a protected link, an absolute protected link hiding a query string, and a data-cfemail span
    page = extract("contacts_cloudflare.html", "https://www.wolkenbau.de/kontakt")
    # THEN each address is decoded once; payloads that are not hex, cut short or not an address are not
    assert found(page) == [
        ("vertrieb@wolkenbau.de", "cloudflare"),
        ("info@wolkenbau.de", "cloudflare"),
        ("presse@wolkenbau.de", "cloudflare"),
    ]
    assert {email.page for email in page.emails} == {"https://www.wolkenbau.de/kontakt"}


@pytest.mark.parametrize(
    ("encoded", "decoded"),
    [
        ("5a2c3f282e28333f381a2d3536313f34383b2f743e3f", "vertrieb@wolkenbau.de"),
        ("206ae39c5247454e", "Jürgen"),
        ("zz12", None),
        ("5a2c3", None),
        ("5a", None),
    ],
)
def test_the_first_cloudflare_byte_is_the_key_xored_into_the_rest(encoded: str, decoded: str | None) -> None:
    assert decode_cfemail(encoded) == decoded


def test_mailto_links_with_display_names_several_recipients_and_query_strings_yield_each_address() -> None:
    page = extract("contacts_mailto.html", "https://harbourlights.co.uk/contact")
    assert found(page) == [
        ("sales@harbourlights.co.uk", "mailto"),  # percent-encoded "Sales Team <...>"
        ("jane.carter@harbourlights.co.uk", "mailto"),  # display name, lower-cased
        ("accounts@harbourlights.co.uk", "mailto"),
        ("orders@harbourlights.co.uk", "mailto"),
        ("press@harbourlights.co.uk", "mailto"),  # MAILTO: in capitals, subject and body dropped
        ("archive@harbourlights.co.uk", "mailto"),  # cc= in the query
        ("support@harbourlights.co.uk", "mailto"),  # to= in the query
    ]


def test_a_mailto_without_an_address_yields_none() -> None:
    assert mailto_addresses("") == []
    assert mailto_addresses("?subject=no-recipient") == []
    assert mailto_addresses("not-an-address") == []


def test_written_out_addresses_in_german_and_english_forms_are_read() -> None:
    page = extract("contacts_written_out.html", "https://steinmetz-albrecht.de/impressum")
    assert found(page) == [
        ("info@steinmetz-albrecht.de", "written_out"),  # [at] [dot]
        ("buchhaltung@steinmetz-albrecht.de", "written_out"),  # (at) (punkt)
        ("werkstatt@steinmetz-albrecht.de", "written_out"),  # [@]
        ("ausbildung@steinmetz-albrecht.de", "written_out"),  # (@) (dot)
        ("k.albrecht@steinmetz-albrecht.de", "written_out"),  # {at} [.]
        ("anfrage@steinmetz-albrecht.de", "written_out"),  # bare at / dot, the page's own domain
        ("m_huber@natursteinwerk-huber.at", "written_out"),  # bare at / punkt, local part not a word
        ("kontakt-nord@steinmetzverband.de", "written_out"),  # AT / DOT in capitals
    ]


@pytest.mark.parametrize(
    "prose",
    [
        "Find us at fairground.com today",
        "look at this dot com deal",
        "we are at home dot com prices",
        "Meet us at Halle 4 dot 12 at 10 am",
        "Results at a glance. Contact us at once.",
    ],
)
def test_prose_with_at_and_dot_is_never_made_an_address(prose: str) -> None:
    assert emails_in_text(prose, page_host="steinmetz-albrecht.de") == []


def test_placeholder_example_and_throwaway_addresses_are_dropped() -> None:
    # GIVEN example.*, beispiel.*, domain.*, *.tld, yourdomain, ihre-domain, empfaenger@, a sample
    # name, mailinator, trashmail and yopmail addresses next to one real address
    page = extract("contacts_placeholders.html", "https://gaertnerei-lindner.de/hilfe")
    assert found(page) == [("gaertnerei@gaertnerei-lindner.de", "plain")]


def test_a_plain_address_in_text_is_marked_plain() -> None:
    assert emails_in_text("Mail: Info@Lindner-Moebel.de.", page_host="lindner-moebel.de") == [
        ("info@lindner-moebel.de", Decoded.PLAIN)
    ]
