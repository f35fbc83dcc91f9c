"""A hostile site cannot crash, hang, exhaust or misdirect the scraper: one test per way found.

Each page is served by the loopback farm exactly as a hostile or broken site would send it, and the
test asserts the only outcome allowed: a result, or a named fatal reason, within the bounds.
"""

from __future__ import annotations

import gzip
import socket
import threading
import time
import tracemalloc
import zlib
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from outreach.errors import FatalScrapeError, RetryableScrapeError
from outreach.scraping import scrape_site
from outreach.scraping.address_guard import mapping_resolver
from outreach.scraping.charset import decode_html
from outreach.scraping.extract import extract_page
from outreach.scraping.markup_bounds import MAX_NESTING
from outreach.scraping.safe_fetch import fetch_page
from outreach.scraping.site_scrape import SiteScrape
from outreach.scraping.site_urls import parse_http_url
from tests.functions.scraping.conftest import deadline_in, settings
from tests.support.web_farm import Reply, WebFarm

HOME = (
    '<html lang="de"><head><title>Muster GmbH</title></head><body>'
    '<a href="/impressum">Impressum</a><p>info@muster.example</p></body></html>'
)
IMPRINT = "<html><body><p>Muster GmbH, Tel: +49 731 123456</p></body></html>"


def scrape(farm: WebFarm, path: str = "/", **changes: Any) -> SiteScrape:
    return scrape_site(
        farm.url(path), deadline=deadline_in(20), settings=settings(**changes), backoff_base_seconds=0.01
    )


def zeros_gzip(size: int, *, layers: int = 1) -> bytes:
    """``size`` zero bytes gzip-compressed ``layers`` times, built without holding them in memory."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = bytes(1024 * 1024)
    parts = [compressor.compress(block) for _ in range(size // len(block))]
    parts.append(compressor.flush())
    body = b"".join(parts)
    for _ in range(layers - 1):
        body = gzip.compress(body, 9)
    return body


# -- decompression: bounded while decompressing --------------------------------------------------


def test_a_stacked_gzip_bomb_is_refused_as_an_unsupported_encoding(farm: WebFarm) -> None:
    # GIVEN a home page gzip-compressed twice: a few hundred bytes that expand to 256 MiB
    bomb = zeros_gzip(256 * 1024 * 1024, layers=2)
    assert len(bomb) < 2048
    farm.route("/", Reply(body=bomb, headers={"Content-Encoding": "gzip, gzip"}))
    # WHEN the site is scraped THEN it fails at once with the named reason, fetched once
    with pytest.raises(FatalScrapeError) as failure:
        scrape(farm)
    assert failure.value.reason == "unsupported_encoding"
    assert farm.hits["/"] == 1


@pytest.mark.parametrize("encoding", ["br", "zstd", "compress", "gzip, identity, deflate"])
def test_an_unrequested_or_stacked_content_encoding_is_refused(farm: WebFarm, encoding: str) -> None:
    farm.route("/", Reply(body=b"\x00" * 64, headers={"Content-Encoding": encoding}))
    with pytest.raises(FatalScrapeError) as failure:
        fetch_page(farm.url("/"), deadline=deadline_in(5), settings=settings())
    assert failure.value.reason == "unsupported_encoding"


def test_a_gzip_bomb_never_holds_more_than_the_body_cap_in_memory(farm: WebFarm) -> None:
    # GIVEN one gzip layer of 256 MiB of zeros (about 256 KB on the wire) and a 64 KiB body cap
    farm.route("/", Reply(body=zeros_gzip(256 * 1024 * 1024), headers={"Content-Encoding": "gzip"}))
    tracemalloc.start()
    try:
        page = fetch_page(farm.url("/"), deadline=deadline_in(10), settings=settings())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # THEN the page is cut at the cap, and no decompressed chunk beyond a few caps was ever held
    assert (len(page.body), page.truncated) == (64 * 1024, True)
    assert peak < 8 * 1024 * 1024


# -- parsing: bounded in nesting and size, counted against the deadline ---------------------------


def test_a_nesting_bomb_is_cut_at_the_nesting_bound_and_parses_at_once() -> None:
    # GIVEN 100,000 unclosed <div>s (500 KB) after real content
    html = "<html><body><p>info@muster.example</p>" + "<div>" * 100_000 + "tail"
    started = time.monotonic()
    page = extract_page(html, "https://muster.example/", max_text_chars=1000)
    elapsed = time.monotonic() - started
    # THEN the markup is cut where it nests too deep, what came before is kept, and parsing took
    # a small fraction of the 39 s the unbounded parse needs
    assert page.markup_cut == "nesting"
    assert [email.address for email in page.emails] == ["info@muster.example"]
    assert "tail" not in page.text
    assert elapsed < 10


def test_a_page_nested_less_deep_than_the_bound_is_not_cut() -> None:
    html = "<html><body>" + "<div>" * (MAX_NESTING - 10) + "<p>deep text</p>" + "</div>" * (MAX_NESTING - 10)
    page = extract_page(html, "https://muster.example/", max_text_chars=1000)
    assert (page.markup_cut, page.text) == (None, "deep text")


def test_a_nesting_bomb_site_finishes_in_one_delivery_with_the_cut_recorded(farm: WebFarm) -> None:
    farm.html("/", "<html><body><title>Bomb</title>" + "<div>" * 400_000 + "</body></html>")
    site = scrape(farm, max_body_bytes=4 * 1024 * 1024)
    assert site.title == "Bomb"
    assert site.pages[0].markup_cut == "nesting"


def test_no_page_is_parsed_after_the_deadline(farm: WebFarm, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a home page that arrives exactly when the deadline passes
    farm.html("/", HOME)
    deadline = deadline_in(20)
    real_fetch = fetch_page

    def fetch_until_deadline(*args: Any, **kwargs: Any) -> Any:
        page = real_fetch(*args, **kwargs)
        monkeypatch.setattr(time, "monotonic", lambda: deadline)
        return page

    monkeypatch.setattr("outreach.scraping.site_crawl.fetch_page", fetch_until_deadline)
    with pytest.raises(RetryableScrapeError) as failure:
        scrape_site(farm.url("/"), deadline=deadline, settings=settings(respect_robots_txt=False))
    assert failure.value.reason == "deadline_exceeded"


# -- character sets: WHATWG labels only ----------------------------------------------------------


@pytest.mark.parametrize("label", ["hex", "base64", "rot13", "undefined", "zlib", "uu"])
def test_a_charset_python_knows_only_as_a_codec_is_ignored_like_an_unknown_label(label: str) -> None:
    body = "<p>Grüße aus Ulm</p>".encode()
    assert decode_html(body, label) == "<p>Grüße aus Ulm</p>"
    assert decode_html(f'<meta charset="{label}">'.encode() + body) == f'<meta charset="{label}">' + (
        "<p>Grüße aus Ulm</p>"
    )


def test_a_bogus_charset_on_the_imprint_page_still_finishes_the_site(farm: WebFarm) -> None:
    farm.html("/", HOME)
    farm.html("/impressum", '<meta charset="undefined">' + IMPRINT)
    farm.route("/kontakt", Reply(body=IMPRINT.encode(), content_type="text/html; charset=hex"))
    site = scrape(farm)
    assert "+49731123456" in [phone.e164 for phone in site.phones]
    assert all(page.skipped is None for page in site.pages)


def test_an_unexpected_error_extracting_the_home_page_is_the_named_fatal_extract_error(
    farm: WebFarm, monkeypatch: pytest.MonkeyPatch
) -> None:
    farm.html("/", HOME)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise LookupError("a parser bug")

    monkeypatch.setattr("outreach.scraping.site_crawl.extract_page", broken)
    with pytest.raises(FatalScrapeError) as failure:
        scrape(farm)
    assert failure.value.reason == "extract_error"
    assert "LookupError" in failure.value.detail


def test_an_unexpected_error_extracting_an_extra_page_skips_only_that_page(
    farm: WebFarm, monkeypatch: pytest.MonkeyPatch
) -> None:
    farm.html("/", HOME)
    farm.html("/impressum", IMPRINT)
    real_extract = extract_page

    def broken_on_imprint(html: str, page_url: str, **kwargs: Any) -> Any:
        if page_url.endswith("/impressum"):
            raise LookupError("a parser bug")
        return real_extract(html, page_url, **kwargs)

    monkeypatch.setattr("outreach.scraping.site_crawl.extract_page", broken_on_imprint)
    site = scrape(farm)
    assert [page.skipped for page in site.pages] == [None, "extract_error"]
    assert [email.address for email in site.emails] == ["info@muster.example"]


# -- links: unparseable ones are skipped and counted ---------------------------------------------


def test_an_unparseable_link_is_skipped_and_counted_not_fatal_to_the_page() -> None:
    html = (
        '<html><head><base href="http://[x]/"></head><body>'
        '<a href="http://[ccpa-preferences]">Privacy</a>'
        '<a href="https://[domain]/impressum">Impressum</a>'
        '<a href="https://www.linkedin.com/company/muster">LinkedIn</a>'
        '<a href="/kontakt">Kontakt</a></body></html>'
    )
    page = extract_page(html, "https://muster.example/", max_text_chars=1000)
    assert page.skipped_links == 3  # the base and two links
    assert [link.url for link in page.candidate_links] == ["https://muster.example/kontakt"]
    assert page.social_links == (("linkedin", "https://www.linkedin.com/company/muster"),)


def test_a_site_with_bracketed_links_finishes_with_the_count_recorded(farm: WebFarm) -> None:
    farm.html("/", HOME.replace("</body>", '<a href="http://[ccpa-preferences]">Do not sell</a></body>'))
    farm.html("/impressum", IMPRINT)
    site = scrape(farm)
    assert site.pages[0].links_skipped == 1
    assert site.to_document()["pages"][0]["links_skipped"] == 1


# -- one canonical URL form: IDNA 2008, ports part of the site -----------------------------------


def test_a_sharp_s_domain_is_fetched_under_its_own_idna_2008_name(farm: WebFarm) -> None:
    # GIVEN faß.test and fass.test, two different names (only the first resolves here)
    farm.html("/", HOME)
    resolver = mapping_resolver({"xn--fa-hia.test": ["127.0.0.1"]})
    url = f"http://faß.test:{farm.port}/"
    page = fetch_page(url, deadline=deadline_in(5), settings=settings(), resolver=resolver)
    assert page.url == f"http://xn--fa-hia.test:{farm.port}/"
    assert farm.requests[-1].host == f"xn--fa-hia.test:{farm.port}"


def test_another_port_is_another_site_for_page_selection() -> None:
    html = (
        '<a href="http://muster.example:8080/impressum">Impressum</a>'
        '<a href="http://www.muster.example/kontakt">Kontakt</a>'
    )
    page = extract_page(html, "http://muster.example/", max_text_chars=1000)
    assert [link.url for link in page.candidate_links] == ["http://www.muster.example/kontakt"]
    assert parse_http_url("http://muster.example:80/").site == parse_http_url("https://muster.example/").site


# -- name resolution under the deadline ----------------------------------------------------------


@pytest.fixture
def stuck_resolver() -> Iterator[Any]:
    """A resolver that answers only after 15 s (or when the test ends)."""
    release = threading.Event()

    def resolve(host: str, port: int, /, *, type: int = socket.SOCK_STREAM) -> Sequence[Any]:
        release.wait(15)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    yield resolve
    release.set()


def test_a_slow_resolver_is_abandoned_at_the_connect_timeout(stuck_resolver: Any) -> None:
    started = time.monotonic()
    with pytest.raises(RetryableScrapeError) as failure:
        fetch_page(
            "http://slow-dns.test/",
            deadline=deadline_in(8),
            settings=settings(connect_timeout=0.2, attempts_per_url=1),
            resolver=stuck_resolver,
        )
    assert failure.value.reason == "dns_timeout"
    assert time.monotonic() - started < 8


def test_name_resolution_never_runs_past_the_deadline(stuck_resolver: Any) -> None:
    deadline = deadline_in(0.5)
    with pytest.raises(RetryableScrapeError) as failure:
        fetch_page(
            "http://slow-dns.test/",
            deadline=deadline,
            settings=settings(connect_timeout=10.0),
            resolver=stuck_resolver,
            backoff_base_seconds=0.01,
        )
    assert failure.value.reason in {"dns_timeout", "deadline_exceeded"}
    assert time.monotonic() < deadline + 5
