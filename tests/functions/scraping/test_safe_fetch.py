"""Fetching one URL against a real loopback server: retries, classification, redirects, limits, TLS."""

from __future__ import annotations

import gzip
import time

import httpcore
import pytest

from outreach.errors import FatalScrapeError, RetryableFetchError, RetryableScrapeError
from outreach.scraping.address_guard import Resolver, mapping_resolver
from outreach.scraping.pinned_transport import PinnedBackend
from outreach.scraping.safe_fetch import FetchedPage, fetch_page
from tests.functions.scraping.conftest import TEST_USER_AGENT, deadline_in, settings
from tests.support.web_farm import HTML, CertificateAuthority, Reply, WebFarm, unused_port

PAGE = b"<!DOCTYPE html><html><body><p>Willkommen</p></body></html>"
LOOPBACK_NAMES = mapping_resolver({"site.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]})


def fetch(
    url: str, *, deadline: float | None = None, resolver: Resolver | None = None, **changes: object
) -> FetchedPage:
    return fetch_page(
        url,
        deadline=deadline if deadline is not None else deadline_in(10),
        settings=settings(**changes),
        resolver=resolver,
        backoff_base_seconds=0.01,
    )


def test_a_page_is_fetched_from_the_checked_address_with_host_header_and_user_agent(
    farm: WebFarm, connections: list[tuple[str, int]]
) -> None:
    farm.html("/", PAGE)

    page = fetch(farm.url("/", host="site.test"), resolver=LOOPBACK_NAMES)

    assert page.body == PAGE
    assert (page.status, page.media_type, page.charset, page.truncated) == (200, "text/html", "utf-8", False)
    assert page.url == farm.url("/", host="site.test")
    assert [(r.host, r.user_agent) for r in farm.requests] == [(f"site.test:{farm.port}", TEST_USER_AGENT)]
    assert connections == [("127.0.0.1", farm.port)]


def test_a_persistent_503_is_fetched_exactly_three_times_then_retryable(farm: WebFarm) -> None:
    farm.route("/", Reply(status=503))

    with pytest.raises(RetryableScrapeError) as failed:
        fetch(farm.url("/"))

    assert farm.hits["/"] == 3
    assert isinstance(failed.value, RetryableFetchError)
    assert failed.value.reason == "http_503"


def test_a_temporary_failure_that_recovers_within_the_attempts_succeeds(farm: WebFarm) -> None:
    farm.route("/", Reply(status=502), Reply(status=429), Reply(body=PAGE))

    assert fetch(farm.url("/")).body == PAGE
    assert farm.hits["/"] == 3


def test_attempts_per_url_lowers_the_number_of_requests(farm: WebFarm) -> None:
    farm.route("/", Reply(status=500))

    with pytest.raises(RetryableScrapeError):
        fetch(farm.url("/"), attempts_per_url=1)
    assert farm.hits["/"] == 1


def test_a_long_retry_after_ends_the_attempts_at_once(farm: WebFarm) -> None:
    # The queue's own redelivery comes back much later than any in-task wait could.
    farm.route("/", Reply(status=429, headers={"Retry-After": "3600"}))

    with pytest.raises(RetryableScrapeError):
        fetch(farm.url("/"))
    assert farm.hits["/"] == 1


@pytest.mark.parametrize("status", [404, 410, 403, 401, 400])
def test_a_client_error_is_fatal_after_one_request(farm: WebFarm, status: int) -> None:
    farm.route("/", Reply(status=status))

    with pytest.raises(FatalScrapeError) as failed:
        fetch(farm.url("/"))

    assert failed.value.reason == f"http_{status}"
    assert farm.hits["/"] == 1


def test_a_non_html_page_is_fatal_after_one_request(farm: WebFarm) -> None:
    farm.html("/", b"%PDF-1.7" + b"x" * 100_000, content_type="application/pdf")

    with pytest.raises(FatalScrapeError) as failed:
        fetch(farm.url("/"))

    assert failed.value.reason == "not_html"
    assert farm.hits["/"] == 1


@pytest.mark.parametrize(("body", "accepted"), [(PAGE, True), (b'{"json": true}', False)])
def test_a_page_without_content_type_is_accepted_only_if_it_looks_like_html(
    farm: WebFarm, body: bytes, accepted: bool
) -> None:
    farm.route("/", Reply(body=body, content_type=None))

    if accepted:
        assert fetch(farm.url("/")).media_type == "text/html"
    else:
        with pytest.raises(FatalScrapeError, match="not_html"):
            fetch(farm.url("/"))


def test_five_redirects_are_followed(farm: WebFarm) -> None:
    for hop in range(1, 6):
        farm.redirect(f"/r{hop}", f"/r{hop + 1}" if hop < 5 else "/final", status=301 + hop % 2)
    farm.html("/final", PAGE)

    page = fetch(farm.url("/r1"))

    assert page.url == farm.url("/final")
    assert page.redirects == tuple(farm.url(f"/r{hop}") for hop in range(1, 6))
    assert farm.hits["/final"] == 1


def test_a_sixth_redirect_is_fatal_and_not_followed(farm: WebFarm) -> None:
    for hop in range(6):
        farm.redirect(f"/r{hop}", f"/r{hop + 1}" if hop < 5 else "/final")
    farm.html("/final", PAGE)

    with pytest.raises(FatalScrapeError) as failed:
        fetch(farm.url("/r0"))

    assert failed.value.reason == "too_many_redirects"
    assert farm.hits["/r5"] == 1
    assert farm.hits["/final"] == 0


def test_max_redirects_zero_refuses_any_redirect(farm: WebFarm) -> None:
    farm.redirect("/", "/home")

    with pytest.raises(FatalScrapeError, match="too_many_redirects"):
        fetch(farm.url("/"), max_redirects=0)
    assert farm.hits["/home"] == 0


def test_a_redirect_loop_ends_as_too_many_redirects(farm: WebFarm) -> None:
    farm.redirect("/a", "/b")
    farm.redirect("/b", "/a")

    with pytest.raises(FatalScrapeError, match="too_many_redirects"):
        fetch(farm.url("/a"))
    assert farm.total_hits() == 6


@pytest.mark.parametrize("location", ["ftp://site.test/file", "mailto:info@site.test", "javascript:x()"])
def test_a_redirect_to_a_non_http_scheme_is_fatal(farm: WebFarm, location: str) -> None:
    farm.redirect("/", location)

    with pytest.raises(FatalScrapeError) as failed:
        fetch(farm.url("/"))
    assert failed.value.reason == "invalid_redirect"


def test_a_redirect_without_location_is_fatal(farm: WebFarm) -> None:
    farm.route("/", Reply(status=302, content_type=None))

    with pytest.raises(FatalScrapeError, match="invalid_redirect"):
        fetch(farm.url("/"))


def test_a_redirect_to_another_name_sends_that_name_as_host(farm: WebFarm) -> None:
    farm.redirect("/", farm.url("/welcome", host="other.test"))
    farm.html("/welcome", PAGE)

    page = fetch(farm.url("/", host="site.test"), resolver=LOOPBACK_NAMES)

    assert page.url == farm.url("/welcome", host="other.test")
    assert [r.host for r in farm.requests] == [f"site.test:{farm.port}", f"other.test:{farm.port}"]


def test_an_oversized_page_is_truncated_to_the_body_cap(farm: WebFarm) -> None:
    farm.html("/", b"<html>" + b"a" * 300_000)

    page = fetch(farm.url("/"), max_body_bytes=4096)

    assert (len(page.body), page.truncated) == (4096, True)


def test_a_page_exactly_at_the_body_cap_is_not_truncated(farm: WebFarm) -> None:
    farm.html("/", b"<html>" + b"a" * 4090)

    page = fetch(farm.url("/"), max_body_bytes=4096)

    assert (len(page.body), page.truncated) == (4096, False)


def test_a_compressed_page_is_decoded_and_capped_by_its_decoded_size(farm: WebFarm) -> None:
    # GIVEN 2 MB of HTML that compresses to a few kilobytes (a small "zip bomb")
    farm.route(
        "/",
        Reply(body=gzip.compress(b"<html>" + b"a" * 2_000_000), headers={"Content-Encoding": "gzip"}),
    )

    page = fetch(farm.url("/"), max_body_bytes=4096)

    assert page.body.startswith(b"<html>aaa")
    assert (len(page.body), page.truncated) == (4096, True)


def test_a_server_that_does_not_answer_cannot_hold_the_fetch_past_the_deadline(farm: WebFarm) -> None:
    farm.route("/", Reply(body=PAGE, delay=5.0))
    started = time.monotonic()

    with pytest.raises(RetryableScrapeError):
        fetch(farm.url("/"), deadline=deadline_in(0.6), read_timeout=10.0)

    assert time.monotonic() - started < 2.5  # the server would hold it 5 s, the read timeout 10 s
    assert farm.hits["/"] == 1  # no second attempt once the deadline is gone


def test_a_trickling_body_cannot_hold_the_fetch_past_the_deadline(farm: WebFarm) -> None:
    # Each byte arrives well within the read timeout; only the deadline stops the download.
    farm.route("/", Reply(body=b"<html>", trickle=0.02))
    started = time.monotonic()

    with pytest.raises(RetryableScrapeError):
        fetch(farm.url("/"), deadline=deadline_in(0.6), read_timeout=10.0, max_body_bytes=1_000_000)

    assert time.monotonic() - started < 2.5  # the server would hold it 5 s, the read timeout 10 s


def test_the_read_timeout_fails_an_attempt_before_the_deadline(farm: WebFarm) -> None:
    farm.route("/", Reply(body=PAGE, delay=5.0))
    started = time.monotonic()

    with pytest.raises(RetryableScrapeError) as failed:
        fetch(farm.url("/"), deadline=deadline_in(10), read_timeout=0.2, attempts_per_url=2)

    assert isinstance(failed.value, RetryableFetchError)
    assert failed.value.reason == "timeout"
    assert farm.hits["/"] == 2
    assert time.monotonic() - started < 3.0  # the server would hold each attempt 5 s


def test_no_attempt_starts_after_the_deadline(farm: WebFarm) -> None:
    farm.html("/", PAGE)

    with pytest.raises(RetryableScrapeError):
        fetch(farm.url("/"), deadline=deadline_in(-1))
    assert farm.total_hits() == 0


def test_a_refused_connection_is_attempted_three_times_then_retryable(
    connections: list[tuple[str, int]],
) -> None:
    port = unused_port()

    with pytest.raises(RetryableScrapeError):
        fetch(f"http://127.0.0.1:{port}/")
    assert connections == [("127.0.0.1", port)] * 3


@pytest.mark.parametrize(
    "url",
    [
        "",
        "not a url",
        "ftp://site.test/",
        "javascript:alert(1)",
        "http://",
        "https://user:secret@site.test/",
        "http://site.test:99999/",
        "http://exa mple.test/",
        "http://[fe80::1%25eth0]/",
        "//site.test/",
    ],
)
def test_an_invalid_url_is_fatal_without_connecting(url: str, connections: list[tuple[str, int]]) -> None:
    with pytest.raises(FatalScrapeError) as failed:
        fetch(url, resolver=LOOPBACK_NAMES)
    assert failed.value.reason == "invalid_url"
    assert connections == []


def test_https_is_fetched_with_sni_and_a_certificate_verified_for_the_host_name(
    tls_farm: WebFarm, authority: CertificateAuthority, connections: list[tuple[str, int]]
) -> None:
    tls_farm.html("/", PAGE)

    page = fetch_page(
        tls_farm.url("/", host="site.test"),
        deadline=deadline_in(10),
        settings=settings(),
        resolver=LOOPBACK_NAMES,
        ssl_context=authority.client_context(),
    )

    assert page.body == PAGE
    assert tls_farm.sni_names == ["site.test"]
    assert [r.host for r in tls_farm.requests] == [f"site.test:{tls_farm.port}"]
    assert connections == [("127.0.0.1", tls_farm.port)]


def test_a_certificate_for_another_name_is_fatal(tls_farm: WebFarm, authority: CertificateAuthority) -> None:
    tls_farm.html("/", PAGE)

    with pytest.raises(FatalScrapeError) as failed:
        fetch_page(
            tls_farm.url("/", host="other.test"),
            deadline=deadline_in(10),
            settings=settings(),
            resolver=LOOPBACK_NAMES,
            ssl_context=authority.client_context(),
        )

    assert failed.value.reason == "tls_certificate"
    assert tls_farm.total_hits() == 0


def test_an_untrusted_certificate_is_fatal(tls_farm: WebFarm) -> None:
    tls_farm.html("/", PAGE)

    with pytest.raises(FatalScrapeError, match="tls_certificate"):
        fetch(tls_farm.url("/", host="site.test"), resolver=LOOPBACK_NAMES)  # certifi trust store
    assert tls_farm.total_hits() == 0


def test_the_pinned_transport_refuses_any_address_but_the_checked_one(
    connections: list[tuple[str, int]],
) -> None:
    backend = PinnedBackend("127.0.0.1", deadline_in(5))

    with pytest.raises(httpcore.ConnectError, match="only the checked address"):
        backend.connect_tcp("10.0.0.1", 80)
    with pytest.raises(httpcore.ConnectError):
        backend.connect_tcp("site.test", 80)
    assert connections == []


def test_served_html_content_type_is_reported_without_parameters(farm: WebFarm) -> None:
    farm.html("/", PAGE, content_type="Application/XHTML+XML; charset=ISO-8859-1")

    page = fetch(farm.url("/"))

    assert (page.media_type, page.charset) == ("application/xhtml+xml", "ISO-8859-1")
    assert HTML.startswith("text/html")
