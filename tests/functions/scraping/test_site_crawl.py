"""Scraping a whole site: home page decides, extra pages add data, the result stays small and JSON-able."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from outreach.errors import FatalScrapeError, RetryableScrapeError
from outreach.scraping import SiteScrape, scrape_site
from outreach.scraping.address_guard import mapping_resolver
from outreach.scraping.site_crawl import EXTRA_PAGE_MIN_SECONDS
from outreach.scraping.site_scrape import PageRecord
from tests.functions.scraping.conftest import deadline_in, settings
from tests.support.web_farm import Reply, WebFarm

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "html"
NAMES = mapping_resolver(
    {"site.test": ["127.0.0.1"], "www.site.test": ["127.0.0.1"], "elsewhere.test": ["127.0.0.1"]}
)


def serve_mueller(farm: WebFarm) -> None:
    for path, fixture in [
        ("/", "mueller_home.html"),
        ("/impressum", "mueller_impressum.html"),
        ("/kontakt/", "mueller_kontakt.html"),
        ("/ueber-uns", "mueller_ueber_uns.html"),
    ]:
        farm.html(path, (FIXTURES / fixture).read_bytes())


def scrape(farm: WebFarm, path: str = "/", *, deadline: float | None = None, **changes: Any) -> SiteScrape:
    return scrape_site(
        farm.url(path, host="site.test"),
        deadline=deadline if deadline is not None else deadline_in(15),
        settings=settings(**changes),
        resolver=NAMES,
        backoff_base_seconds=0.01,
    )


def test_a_site_is_scraped_from_its_home_imprint_contact_and_about_pages(farm: WebFarm) -> None:
    serve_mueller(farm)

    site = scrape(farm)

    assert site.final_url == farm.url("/", host="site.test")
    assert site.title == "Müller Maschinenbau GmbH | Sondermaschinen aus Stuttgart"
    assert site.language == "de-de"
    assert [email.address for email in site.emails] == [
        "vertrieb@mueller-maschinenbau.de",
        "service@mueller-maschinenbau.de",
        "datenschutz@mueller-maschinenbau.de",
        "info@mueller-maschinenbau.de",
        "personal@mueller-maschinenbau.de",
    ]
    # "0711 / 98765-0" on the imprint is the home page's "+49 (0) 711 98765-0": one number
    assert [(phone.e164, phone.kind.value) for phone in site.phones] == [
        ("+49711987650", "phone"),
        ("+497119876599", "fax"),
        ("+498005893370", "phone"),
        ("+491715839204", "phone"),
    ]
    assert site.social_links["linkedin"] == ("https://www.linkedin.com/company/mueller-maschinenbau",)
    assert [page.url for page in site.pages] == [
        farm.url(path, host="site.test") for path in ("/", "/impressum", "/kontakt/", "/ueber-uns")
    ]
    assert all(page.status == 200 and page.skipped is None for page in site.pages)
    assert "Angaben gemäß § 5 TMG" in site.text
    # the off-site partner portal and the PDF are never requested
    assert set(farm.hits) == {"/robots.txt", "/", "/impressum", "/kontakt/", "/ueber-uns"}


def test_extra_pages_are_limited_to_max_extra_pages_imprint_first(farm: WebFarm) -> None:
    serve_mueller(farm)

    site = scrape(farm, max_extra_pages=1)

    assert [page.url for page in site.pages] == [farm.url(p, host="site.test") for p in ("/", "/impressum")]
    assert farm.hits["/kontakt/"] == 0
    assert farm.hits["/ueber-uns"] == 0


def test_no_extra_pages_are_fetched_when_max_extra_pages_is_zero(farm: WebFarm) -> None:
    serve_mueller(farm)

    site = scrape(farm, max_extra_pages=0)

    assert len(site.pages) == 1
    assert dict(farm.hits) == {"/robots.txt": 1, "/": 1}


def test_a_missing_extra_page_is_skipped_not_fatal(farm: WebFarm) -> None:
    serve_mueller(farm)
    farm.route("/impressum", Reply(status=404))

    site = scrape(farm)

    imprint = site.pages[1]
    assert (imprint.status, imprint.skipped, imprint.bytes) == (404, "http_404", 0)
    assert farm.hits["/impressum"] == 1
    assert "info@mueller-maschinenbau.de" not in [email.address for email in site.emails]
    assert site.summary()["pages"] == 3


def test_an_extra_page_that_keeps_failing_is_skipped_after_three_requests(farm: WebFarm) -> None:
    serve_mueller(farm)
    farm.route("/kontakt/", Reply(status=503))

    site = scrape(farm)

    assert site.pages[2] == PageRecord(farm.url("/kontakt/", host="site.test"), 503, 0, False, "http_503")
    assert farm.hits["/kontakt/"] == 3
    assert farm.hits["/ueber-uns"] == 1


def test_a_non_html_extra_page_is_skipped(farm: WebFarm) -> None:
    serve_mueller(farm)
    farm.html("/ueber-uns", b"%PDF-1.7", content_type="application/pdf")

    site = scrape(farm)

    assert site.pages[3].skipped == "not_html"


def test_an_extra_page_redirecting_to_another_site_is_not_merged(farm: WebFarm) -> None:
    serve_mueller(farm)
    farm.redirect("/kontakt/", farm.url("/partner-kontakt", host="elsewhere.test"))
    farm.html("/partner-kontakt", (FIXTURES / "mueller_kontakt.html").read_bytes())

    site = scrape(farm)

    assert site.pages[2].skipped == "off_site"
    assert site.pages[2].url == farm.url("/partner-kontakt", host="elsewhere.test")
    assert farm.hits["/partner-kontakt"] == 1
    assert "+491715839204" not in [phone.e164 for phone in site.phones]


def test_a_redirect_to_the_www_host_keeps_its_pages_on_site(farm: WebFarm) -> None:
    # GIVEN site.test redirects to www.site.test, whose pages link relatively
    farm.redirect("/", farm.url("/start", host="www.site.test"))
    farm.html("/start", (FIXTURES / "mueller_home.html").read_bytes())
    farm.html("/impressum", (FIXTURES / "mueller_impressum.html").read_bytes())

    site = scrape(farm, max_extra_pages=1)

    assert site.final_url == farm.url("/start", host="www.site.test")
    assert site.pages[1].url == farm.url("/impressum", host="www.site.test")
    assert site.pages[1].skipped is None
    assert "info@mueller-maschinenbau.de" in [email.address for email in site.emails]


def test_extra_pages_are_not_started_when_the_deadline_is_near(farm: WebFarm) -> None:
    serve_mueller(farm)

    site = scrape(farm, deadline=deadline_in(EXTRA_PAGE_MIN_SECONDS - 0.5))

    assert len(site.pages) == 1
    assert dict(farm.hits) == {"/robots.txt": 1, "/": 1}


def test_a_missing_home_page_is_fatal_after_one_request(farm: WebFarm) -> None:
    farm.route("/", Reply(status=404))

    with pytest.raises(FatalScrapeError) as failed:
        scrape(farm)

    assert failed.value.reason == "http_404"
    assert farm.hits["/"] == 1


@pytest.mark.parametrize("status", [403, 410])
def test_a_home_page_client_error_is_fatal(farm: WebFarm, status: int) -> None:
    farm.route("/", Reply(status=status))

    with pytest.raises(FatalScrapeError, match=f"http_{status}"):
        scrape(farm)


def test_a_non_html_home_page_is_fatal(farm: WebFarm) -> None:
    farm.html("/", b"{}", content_type="application/json")

    with pytest.raises(FatalScrapeError, match="not_html"):
        scrape(farm)


def test_a_home_page_that_keeps_failing_is_retryable_after_three_requests(farm: WebFarm) -> None:
    farm.route("/", Reply(status=503))

    with pytest.raises(RetryableScrapeError):
        scrape(farm)
    assert farm.hits["/"] == 3


def test_an_invalid_url_is_fatal() -> None:
    with pytest.raises(FatalScrapeError, match="invalid_url"):
        scrape_site("www.example.de", deadline=deadline_in(5), settings=settings())


def test_a_slow_home_page_fails_retryable_within_the_deadline(farm: WebFarm) -> None:
    farm.route("/", Reply(body=b"<html></html>", delay=5.0))
    started = time.monotonic()

    with pytest.raises(RetryableScrapeError):
        scrape(farm, deadline=deadline_in(0.5))
    assert time.monotonic() - started < 2.5  # the server would hold it 5 s, the read timeout 10 s


def test_the_document_is_json_serialisable_and_holds_every_page(farm: WebFarm) -> None:
    serve_mueller(farm)

    document = scrape(farm).to_document()

    assert json.loads(json.dumps(document)) == document
    assert set(document) == {
        "final_url", "title", "description", "language", "emails", "phones", "social_links", "text", "pages",
        "robots",
    }  # fmt: skip
    assert document["pages"][0] == {
        "url": farm.url("/", host="site.test"),
        "status": 200,
        "bytes": len((FIXTURES / "mueller_home.html").read_bytes()),
        "truncated": False,
        "skipped": None,
        "links_skipped": 0,
        "markup_cut": None,
    }


def test_the_summary_is_small_and_holds_only_strings_string_maps_and_ints(farm: WebFarm) -> None:
    # GIVEN a home page with 15 addresses and 8 phone numbers and a very long title
    emails = "".join(f'<a href="mailto:person{n}@site.test">m</a>' for n in range(15))
    phones = "".join(f'<a href="tel:+49305839{n:02d}7">t</a>' for n in range(8))
    farm.html("/", f"<html lang=de><title>{'Sehr langer Titel ' * 40}</title>{emails}{phones}</html>")

    summary = scrape(farm).summary()

    assert set(summary) == {"title", "language", "emails", "phones", "pages"}
    assert len(summary["emails"]) == 10
    assert len(summary["phones"]) == 5
    assert len(summary["title"]) <= 200
    assert summary["language"] == "de"
    assert summary["pages"] == 1
    assert set(summary["emails"][0]) == {"address", "page", "decoded"}
    assert set(summary["phones"][0]) == {"e164", "kind", "as_found", "page"}
    contacts = [*summary["emails"], *summary["phones"]]
    values = [summary["title"], summary["language"], *(v for item in contacts for v in item.values())]
    assert all(isinstance(value, str) for value in values)
    assert type(summary["pages"]) is int
    assert len(json.dumps(summary)) < 4000


def test_a_truncated_home_page_is_still_scraped(farm: WebFarm) -> None:
    filler = "<p>" + "Lorem ipsum " * 2000 + "</p>"
    farm.html("/", f"<html><title>Gekürzt</title><a href='mailto:info@site.test'>m</a>{filler}</html>")

    site = scrape(farm, max_body_bytes=4096)

    assert site.pages[0].truncated is True
    assert site.pages[0].bytes == 4096
    assert site.title == "Gekürzt"
    assert [email.address for email in site.emails] == ["info@site.test"]
