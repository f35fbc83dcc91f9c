"""A site's extra pages are fetched at once: capped per site, one deadline, each request guarded, same result.

The farm's extra pages wait at a barrier until as many requests wait there as the test expects at
once (``Reply.meet``, a generous timeout): a page is only answered if its fetch overlaps the others,
and a barrier that times out answers 503, which the crawl records as a skipped page. No timing is
asserted but the bound the deadline sets.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from outreach.scraping import SiteScrape, safe_fetch, scrape_site, site_crawl
from outreach.scraping.address_guard import mapping_resolver
from tests.functions.scraping.conftest import deadline_in, settings
from tests.support.web_farm import Reply, WebFarm

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "html"
NAMES = mapping_resolver({"site.test": ["127.0.0.1"]})
# However loaded the machine, the requests meet well within this; only a broken test waits it out.
MEETING_SECONDS = 30.0
HOME = (
    "<html><head><title>Kessler Werkzeugbau GmbH</title></head><body><p>Willkommen.</p>"
    '<a href="/impressum">Impressum</a> <a href="/kontakt">Kontakt</a> '
    '<a href="/about">About us</a> <a href="/ueber-uns">Über uns</a></body></html>'
)
EXTRA_PAGES = {
    "/impressum": "<p>Kessler Werkzeugbau GmbH, E-Mail: info@kessler-werkzeugbau.de</p>",
    "/kontakt": '<p><a href="mailto:vertrieb@kessler-werkzeugbau.de">Vertrieb</a></p>',
    "/about": "<p>Seit 1962. Tel. +49 711 4455660</p>",
    "/ueber-uns": "<p>Personal: jobs@kessler-werkzeugbau.de</p>",
}


def serve_kessler(
    farm: WebFarm, paths: list[str], meet: threading.Barrier | None = None, delay: float = 0.0
) -> None:
    farm.html("/", HOME)
    for path in paths:
        body = f"<html><body>{EXTRA_PAGES[path]}</body></html>".encode()
        farm.route(path, Reply(body=body, meet=meet, delay=delay))


def scrape(farm: WebFarm, *, deadline: float | None = None, **changes: Any) -> SiteScrape:
    return scrape_site(
        farm.url("/", host="site.test"),
        deadline=deadline if deadline is not None else deadline_in(MEETING_SECONDS * 2),
        settings=settings(**{"attempts_per_url": 1, "read_timeout": MEETING_SECONDS + 10, **changes}),
        resolver=NAMES,
        backoff_base_seconds=0.01,
    )


def test_the_extra_pages_of_a_site_are_fetched_at_once(farm: WebFarm) -> None:
    # GIVEN three extra pages that answer only once all three are requested
    paths = ["/impressum", "/kontakt", "/about"]
    serve_kessler(farm, paths, threading.Barrier(3, timeout=MEETING_SECONDS))

    site = scrape(farm, max_extra_pages=3, connections_per_site=3)

    assert [(page.url, page.status, page.skipped) for page in site.pages] == [
        (farm.url(path, host="site.test"), 200, None) for path in ["/", *paths]
    ]
    assert farm.peak_in_flight == 3
    assert {email.address for email in site.emails} == {
        "info@kessler-werkzeugbau.de",
        "vertrieb@kessler-werkzeugbau.de",
    }


def test_no_more_pages_of_a_site_are_fetched_at_once_than_connections_per_site(farm: WebFarm) -> None:
    # GIVEN four extra pages answered in pairs, each pair held a little after it met: two must be in
    # flight together, and a third or fourth sent meanwhile would be counted with them
    paths = ["/impressum", "/kontakt", "/about", "/ueber-uns"]
    serve_kessler(farm, paths, threading.Barrier(2, timeout=MEETING_SECONDS), delay=0.5)

    site = scrape(farm, max_extra_pages=4, connections_per_site=2)

    assert [page.skipped for page in site.pages] == [None] * 5
    assert [farm.hits[path] for path in paths] == [1, 1, 1, 1]
    assert farm.peak_in_flight == 2


def test_the_extra_pages_fetched_at_once_all_end_at_the_invocations_deadline(farm: WebFarm) -> None:
    # GIVEN three extra pages that would answer only long after the deadline (and the read timeout)
    farm.html("/", HOME)
    for path in ["/impressum", "/kontakt", "/about"]:
        farm.route(path, Reply(body=b"<p>late</p>", delay=MEETING_SECONDS * 4))
    began = time.monotonic()
    deadline = began + site_crawl.EXTRA_PAGE_MIN_SECONDS + 10.0

    site = scrape(farm, deadline=deadline, max_extra_pages=3, connections_per_site=3)

    # every page was started, and each one's fetch ended at the one deadline, not its read timeout
    assert [farm.hits[path] for path in ["/impressum", "/kontakt", "/about"]] == [1, 1, 1]
    assert [page.skipped for page in site.pages[1:]] == ["timeout"] * 3
    assert time.monotonic() < deadline + MEETING_SECONDS


def test_every_request_fetched_at_once_goes_through_the_address_guard(
    farm: WebFarm, connections: list[tuple[str, int]]
) -> None:
    # GIVEN three extra pages, requested together, each redirecting to an address no fetch may reach
    farm.html("/", HOME)
    meet = threading.Barrier(3, timeout=MEETING_SECONDS)
    for path, target in [
        ("/impressum", "http://10.0.0.7/impressum"),
        ("/kontakt", "http://169.254.169.254/latest/meta-data/"),
        ("/about", "http://[fd00:ec2::254]/about"),
    ]:
        farm.route(path, Reply(status=302, headers={"Location": target}, content_type=None, meet=meet))

    site = scrape(farm, max_extra_pages=3, connections_per_site=3)

    assert farm.peak_in_flight == 3
    assert [page.skipped for page in site.pages[1:]] == ["blocked_address"] * 3
    assert {address for address, _ in connections} == {"127.0.0.1"}


def test_fetching_at_once_gives_the_result_fetching_one_after_another_gives(farm: WebFarm) -> None:
    pages = {
        "/impressum": "mueller_impressum.html",
        "/kontakt/": "mueller_kontakt.html",
        "/ueber-uns": "mueller_ueber_uns.html",
    }
    farm.html("/", (FIXTURES / "mueller_home.html").read_bytes())
    for path, fixture in pages.items():
        farm.html(path, (FIXTURES / fixture).read_bytes())
    one_after_another = scrape(farm, connections_per_site=1)
    assert farm.peak_in_flight == 1
    # GIVEN the same pages meeting in flight, the imprint (chosen first) answering last
    meet = threading.Barrier(3, timeout=MEETING_SECONDS)
    for path, fixture in pages.items():
        delay = 0.5 if path == "/impressum" else 0.0
        farm.route(path, Reply(body=(FIXTURES / fixture).read_bytes(), meet=meet, delay=delay))

    at_once = scrape(farm, connections_per_site=3)

    assert farm.peak_in_flight == 3
    assert at_once.to_document() == one_after_another.to_document()
    assert at_once.summary() == one_after_another.summary()


def test_an_unknown_error_fetching_an_extra_page_at_once_reaches_the_caller(
    farm: WebFarm, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a fetch of the contact page that fails in a way no fetch outcome names
    serve_kessler(farm, ["/impressum", "/kontakt", "/about"])
    fetch_page = safe_fetch.fetch_page

    def failing_on_contact(url: str, **kwargs: Any) -> Any:
        if url.endswith("/kontakt"):
            raise KeyError("unforeseen")
        return fetch_page(url, **kwargs)

    monkeypatch.setattr(site_crawl, "fetch_page", failing_on_contact)

    with pytest.raises(KeyError, match="unforeseen"):
        scrape(farm, max_extra_pages=3, connections_per_site=3)


def test_a_retryable_error_on_an_extra_page_fetched_at_once_skips_only_that_page(farm: WebFarm) -> None:
    serve_kessler(farm, ["/impressum", "/about"])
    farm.route("/kontakt", Reply(status=503))

    site = scrape(farm, max_extra_pages=3, connections_per_site=3)

    assert [page.skipped for page in site.pages] == [None, None, "http_503", None]
    assert {email.address for email in site.emails} == {"info@kessler-werkzeugbau.de"}
