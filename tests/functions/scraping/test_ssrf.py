"""SSRF: internal addresses are refused before any connection is made, on the first URL and every hop.

Each test records every socket connect attempted in the process (``connections``) and asserts that
nothing reached the blocked address; where a counting server stands behind the address, it also
asserts the server saw no request.
"""

from __future__ import annotations

import pytest

from outreach.errors import FatalScrapeError
from outreach.scraping import scrape_site
from outreach.scraping.address_guard import Resolver, mapping_resolver
from outreach.scraping.safe_fetch import fetch_page
from tests.functions.scraping.conftest import deadline_in, settings
from tests.support.web_farm import WebFarm

PAGE = b"<!DOCTYPE html><html><body>intern</body></html>"


def refused(url: str, *, allow_loopback: bool, resolver: Resolver | None = None) -> FatalScrapeError:
    with pytest.raises(FatalScrapeError) as failure:
        fetch_page(
            url,
            deadline=deadline_in(5),
            settings=settings(allow_loopback=allow_loopback),
            resolver=resolver,
            backoff_base_seconds=0.01,
        )
    return failure.value


def test_a_loopback_literal_is_refused_without_connecting(
    farm: WebFarm, connections: list[tuple[str, int]]
) -> None:
    farm.html("/", PAGE)

    failure = refused(farm.url("/"), allow_loopback=False)

    assert failure.reason == "blocked_address"
    assert connections == []
    assert farm.total_hits() == 0


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.1/",
        "http://192.168.178.1/admin",
        "http://100.100.100.200/latest/meta-data",
        "http://0.0.0.0:8080/",
        "http://[fd00::1]/",
        "http://[::ffff:10.0.0.1]/",
    ],
)
def test_a_private_literal_is_refused_without_connecting(
    url: str, connections: list[tuple[str, int]]
) -> None:
    assert refused(url, allow_loopback=True).reason == "blocked_address"
    assert connections == []


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data",
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "http://[fd00:ec2::254]/latest/meta-data",
        "http://[::ffff:169.254.169.254]/latest/meta-data",
        "http://169.254.170.2/v2/credentials",
    ],
)
def test_the_metadata_address_is_refused_without_connecting(
    url: str, connections: list[tuple[str, int]]
) -> None:
    assert refused(url, allow_loopback=True).reason == "blocked_address"
    assert connections == []


def test_an_ipv6_loopback_literal_is_refused_without_connecting(connections: list[tuple[str, int]]) -> None:
    assert refused("http://[::1]/", allow_loopback=False).reason == "blocked_address"
    assert refused("http://[::1]:8080/status", allow_loopback=False).reason == "blocked_address"
    assert connections == []


def test_a_name_resolving_to_a_private_address_is_refused_without_connecting(
    connections: list[tuple[str, int]],
) -> None:
    resolver = mapping_resolver({"intranet.test": ["10.1.2.3"]})

    failure = refused("https://intranet.test/login", allow_loopback=True, resolver=resolver)

    assert failure.reason == "blocked_address"
    assert "10.1.2.3" in failure.detail
    assert connections == []


def test_a_name_resolving_to_public_and_private_addresses_is_refused_without_connecting(
    connections: list[tuple[str, int]],
) -> None:
    resolver = mapping_resolver({"mixed.test": ["93.184.215.14", "192.168.0.10"]})

    assert refused("http://mixed.test/", allow_loopback=True, resolver=resolver).reason == "blocked_address"
    assert connections == []


def test_a_name_resolving_to_loopback_is_refused_without_connecting(
    farm: WebFarm, connections: list[tuple[str, int]]
) -> None:
    farm.html("/", PAGE)
    resolver = mapping_resolver({"rebind.test": ["127.0.0.1"]})

    failure = refused(farm.url("/", host="rebind.test"), allow_loopback=False, resolver=resolver)

    assert failure.reason == "blocked_address"
    assert connections == []
    assert farm.total_hits() == 0


@pytest.mark.parametrize(
    "location",
    [
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data",
        "http://[fd00:ec2::254]/latest/meta-data",
        "https://intranet.test/",
        "http://[::ffff:192.168.0.1]/",
        "http://[::ffff:127.0.0.1]/",  # loopback in IPv4-mapped form stays blocked even when allowed
    ],
)
def test_a_redirect_to_a_private_address_is_refused_without_connecting(
    farm: WebFarm, connections: list[tuple[str, int]], location: str
) -> None:
    # GIVEN an allowed (loopback) site whose page redirects to an internal address or name
    farm.redirect("/", location)
    resolver = mapping_resolver({"intranet.test": ["10.20.30.40"]})

    failure = refused(farm.url("/"), allow_loopback=True, resolver=resolver)

    # THEN the redirect is refused and the only connection ever made was to the allowed site
    assert failure.reason == "blocked_address"
    assert farm.hits["/"] == 1
    assert connections == [("127.0.0.1", farm.port)]


def test_scrape_site_refuses_an_internal_home_page_without_connecting(
    connections: list[tuple[str, int]],
) -> None:
    with pytest.raises(FatalScrapeError) as failure:
        scrape_site(
            "http://169.254.169.254/latest/meta-data",
            deadline=deadline_in(5),
            settings=settings(allow_loopback=False),
        )
    assert failure.value.reason == "blocked_address"
    assert connections == []
