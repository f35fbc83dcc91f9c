"""Which addresses the scraper may connect to, and how name resolution failures are classified."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import pytest

from outreach.errors import FatalScrapeError, RetryableScrapeError
from outreach.scraping.address_guard import blocked_category, check_host, mapping_resolver

BLOCKED = [
    ("127.0.0.1", "loopback"),
    ("127.255.0.9", "loopback"),
    ("10.0.0.1", "private"),
    ("172.16.5.4", "private"),
    ("172.31.255.255", "private"),
    ("192.168.1.1", "private"),
    ("100.64.0.1", "shared address space"),
    ("169.254.169.254", "metadata"),
    ("169.254.10.10", "link-local"),
    ("0.0.0.0", "unspecified"),
    ("224.0.0.251", "multicast"),
    ("255.255.255.255", "reserved"),
    ("240.0.0.1", "reserved"),
    ("192.0.2.7", "documentation"),
    ("198.18.0.1", "reserved"),
    ("::1", "loopback"),
    ("::", "unspecified"),
    ("fc00::1", "private"),
    ("fd12:3456::1", "private"),
    ("fd00:ec2::254", "metadata"),
    ("fe80::1", "link-local"),
    ("ff02::1", "multicast"),
    ("2001:db8::1", "documentation"),
    ("100::1", "reserved"),
    ("::ffff:10.0.0.1", "IPv4-embedded private"),
    ("::ffff:127.0.0.1", "IPv4-embedded loopback"),
    ("::ffff:169.254.169.254", "IPv4-embedded metadata"),
    ("64:ff9b::a00:1", "IPv4-embedded private"),  # NAT64 form of 10.0.0.1
    ("2002:a9fe:a9fe::", "IPv4-embedded metadata"),  # 6to4 form of 169.254.169.254
]

PUBLIC = ["93.184.215.14", "8.8.8.8", "2606:4700::6810:85e5", "2a00:1450:4001:82b::200e", "::ffff:8.8.8.8"]


def resolver_for(*addresses: str) -> Any:
    return mapping_resolver({"site.test": addresses})


def refusing_resolver(host: str, port: int, /, *, type: int) -> Any:
    raise AssertionError(f"{host} is a literal and must not be resolved")


@pytest.mark.parametrize(("address", "category"), BLOCKED)
def test_internal_address_literals_are_refused_with_their_category(address: str, category: str) -> None:
    assert blocked_category(ipaddress.ip_address(address)) == category
    with pytest.raises(FatalScrapeError) as refused:
        check_host(address, 80, resolver=refusing_resolver)
    assert refused.value.reason == "blocked_address"
    assert category in refused.value.detail


@pytest.mark.parametrize("address", PUBLIC)
def test_public_address_literals_are_allowed_without_resolving(address: str) -> None:
    checked = check_host(address, 443, resolver=refusing_resolver)
    assert ipaddress.ip_address(checked) == ipaddress.ip_address(address)


@pytest.mark.parametrize("address", ["127.0.0.1", "127.8.9.10", "::1"])
def test_allow_loopback_permits_native_loopback(address: str) -> None:
    assert check_host(address, 80, allow_loopback=True, resolver=refusing_resolver) == address


@pytest.mark.parametrize(
    "address", ["10.0.0.1", "169.254.169.254", "0.0.0.0", "::ffff:127.0.0.1", "fd00:ec2::254", "fe80::1"]
)
def test_allow_loopback_permits_nothing_but_loopback(address: str) -> None:
    with pytest.raises(FatalScrapeError) as refused:
        check_host(address, 80, allow_loopback=True, resolver=refusing_resolver)
    assert refused.value.reason == "blocked_address"


def test_a_name_is_refused_if_any_of_its_addresses_is_blocked() -> None:
    with pytest.raises(FatalScrapeError) as refused:
        check_host("site.test", 80, resolver=resolver_for("93.184.215.14", "10.1.2.3"))
    assert refused.value.reason == "blocked_address"
    assert "site.test -> 10.1.2.3 is private" in refused.value.detail


def test_a_public_name_yields_one_checked_address_preferring_ipv4() -> None:
    resolver = resolver_for("2606:4700::6810:85e5", "93.184.215.14")
    assert check_host("site.test", 80, resolver=resolver) == "93.184.215.14"
    assert (
        check_host("site.test", 80, resolver=resolver_for("2606:4700::6810:85e5")) == "2606:4700::6810:85e5"
    )


@pytest.mark.parametrize("code", [socket.EAI_NONAME, socket.EAI_NODATA])
def test_a_name_that_does_not_exist_is_fatal(code: int) -> None:
    def missing(host: str, port: int, /, *, type: int) -> Any:
        raise socket.gaierror(code, "Name or service not known")

    with pytest.raises(FatalScrapeError) as failed:
        check_host("gone.test", 80, resolver=missing)
    assert failed.value.reason == "dns_not_found"


def test_a_name_without_any_address_is_fatal() -> None:
    with pytest.raises(FatalScrapeError) as failed:
        check_host("empty.test", 80, resolver=lambda host, port, /, *, type: [])
    assert failed.value.reason == "dns_not_found"


@pytest.mark.parametrize("code", [socket.EAI_AGAIN, socket.EAI_FAIL])
def test_a_temporary_resolver_failure_is_retryable(code: int) -> None:
    def flaky(host: str, port: int, /, *, type: int) -> Any:
        raise socket.gaierror(code, "Temporary failure in name resolution")

    with pytest.raises(RetryableScrapeError) as failed:
        check_host("flaky.test", 80, resolver=flaky)
    assert not isinstance(failed.value, FatalScrapeError)


@pytest.mark.parametrize("host", ["localhost", "2130706433", "0x7f.1"])
def test_names_and_numeric_forms_that_resolve_to_loopback_are_refused(host: str) -> None:
    # The system resolver turns these into 127.0.0.1; the resolved address is what gets checked.
    with pytest.raises(FatalScrapeError) as refused:
        check_host(host, 80)
    assert refused.value.reason == "blocked_address"
