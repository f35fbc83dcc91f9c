"""Imprint, contact and about pages chosen by path segment and link text; a parent domain is one company."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest

from outreach.scraping import scrape_site
from outreach.scraping.address_guard import mapping_resolver
from outreach.scraping.extract import CandidateLink, extract_page
from outreach.scraping.page_choice import page_kind
from outreach.scraping.registrable_domain import is_parent_domain, offline_extractor, registrable_domain
from tests.functions.scraping.conftest import deadline_in, settings
from tests.support.web_farm import WebFarm

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "html"


def test_pages_are_chosen_by_path_segment_and_link_text_not_substrings() -> None:
    html = (FIXTURES / "links_page_choice.html").read_text(encoding="utf-8")
    page = extract_page(html, "https://shop.lindner-moebel.de/", max_text_chars=1000)
    assert page.candidate_links == (
        CandidateLink("imprint", "https://lindner-moebel.de/impressum"),  # the parent domain
        CandidateLink("contact", "https://shop.lindner-moebel.de/kontakt"),
        CandidateLink("contact", "https://shop.lindner-moebel.de/service/index.html"),  # by its text
        CandidateLink("about", "https://www.lindner-moebel.de/ueber-uns.html"),  # by its segment
    )


@pytest.mark.parametrize(
    ("path", "text", "kind"),
    [
        ("/impressum/", "", "imprint"),
        ("/en/legal-notice.html", "", "imprint"),
        ("/x", "Legal notice", "imprint"),
        ("/contacto", "", "contact"),
        ("/x", "Get in touch", "contact"),
        ("/unternehmen/ueber_uns", "", "about"),
        ("/x", "Über uns", "about"),
        ("/x", "Quiénes somos", "about"),
        ("/blog/about-kontakt-impressum", "Read more", None),
        ("/kontakt/anfahrt", "Anfahrt", None),
        ("/x", "About our new showroom", None),
    ],
)
def test_a_page_kind_needs_a_whole_segment_or_the_whole_link_text(
    path: str, text: str, kind: str | None
) -> None:
    assert page_kind(path, text) == kind


@pytest.mark.parametrize(
    ("host", "domain"),
    [
        ("shop.lindner-moebel.de", "lindner-moebel.de"),
        ("www.harbourlights.co.uk", "harbourlights.co.uk"),
        ("a.b.example.com.au", "example.com.au"),
        ("shop.site.test", "site.test"),  # special-use suffix: the last two labels
        ("127.0.0.1", "127.0.0.1"),
    ],
)
def test_the_registrable_domain_comes_from_the_public_suffix_list(host: str, domain: str) -> None:
    assert registrable_domain(host) == domain


def test_only_a_parent_within_the_registrable_domain_is_the_same_company() -> None:
    assert is_parent_domain("lindner-moebel.de", "shop.lindner-moebel.de")
    assert is_parent_domain("www.lindner-moebel.de", "shop.lindner-moebel.de")
    assert not is_parent_domain("blog.lindner-moebel.de", "shop.lindner-moebel.de")
    assert not is_parent_domain("co.uk", "harbourlights.co.uk")
    assert not is_parent_domain("de", "lindner-moebel.de")


def test_the_suffix_list_is_read_offline_without_network_or_cache_writes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN no network at all, and every file opened for writing and directory made recorded
    def no_network(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"network access: {args!r}")

    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    written: list[str] = []
    real_open = open

    def recording_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if any(flag in mode for flag in "wax+"):
            written.append(str(file))
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.open", recording_open)
    monkeypatch.setattr(os, "makedirs", lambda path, *args, **kwargs: written.append(str(path)))
    offline_extractor.cache_clear()
    # WHEN a fresh extractor is built and used
    domain = registrable_domain("shop.lindner-moebel.co.uk")
    # THEN it answers from the bundled snapshot, fetched nothing and wrote nothing
    assert domain == "lindner-moebel.co.uk"
    assert offline_extractor().suffix_list_urls == ()
    assert written == []


def test_an_imprint_on_the_parent_domain_is_crawled_as_the_same_company(farm: WebFarm) -> None:
    # GIVEN a shop on a subdomain whose only imprint link points at the parent domain
    farm.html("/", f'<html lang="de"><a href="http://site.test:{farm.port}/impressum">Impressum</a></html>')
    farm.html("/impressum", "<html><p>Telefon: 0711 / 58 37 41-0</p><p>info@site.test</p></html>")
    resolver = mapping_resolver({"shop.site.test": ["127.0.0.1"], "site.test": ["127.0.0.1"]})
    site = scrape_site(
        farm.url("/", host="shop.site.test"), deadline=deadline_in(15), settings=settings(), resolver=resolver
    )
    # THEN the parent domain's imprint is fetched and merged, not skipped as off-site, and its
    # national number is read in the home page's language (the imprint names none)
    assert [page.url for page in site.pages] == [
        farm.url("/", host="shop.site.test"),
        farm.url("/impressum", host="site.test"),
    ]
    assert [page.skipped for page in site.pages] == [None, None]
    assert [email.address for email in site.emails] == ["info@site.test"]
    assert [phone.e164 for phone in site.phones] == ["+497115837410"]
