"""Refuses to connect to addresses that are not on the public internet (SSRF protection).

Every host the scraper contacts, including every redirect hop, goes through :func:`check_host`. It
resolves the name once and returns one checked address; the fetcher then connects to exactly that
address, so a second DNS answer (DNS rebinding) cannot send the connection elsewhere.

Blocked: loopback, private (RFC 1918, 100.64.0.0/10 shared address space, fc00::/7), link-local,
cloud metadata (169.254.169.254, fd00:ec2::254), multicast, unspecified, reserved and documentation
ranges, anything in IPv6 outside global unicast 2000::/3, and IPv4 addresses embedded in IPv6
(IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16) whose IPv4 address is blocked.
If any address a name resolves to is blocked, the name is refused.

``allow_loopback`` exempts only native 127.0.0.0/8 and ::1 (tests and a local web farm); embedded
forms such as ::ffff:127.0.0.1 stay blocked.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from outreach.errors import FatalScrapeError, RetryableScrapeError
from outreach.scraping.site_urls import ip_literal

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class Resolver(Protocol):
    """Anything called like :func:`socket.getaddrinfo` (the default)."""

    def __call__(
        self, host: str, port: int, /, *, type: int
    ) -> Sequence[tuple[Any, Any, Any, Any, tuple[Any, ...]]]: ...


_V4 = ipaddress.IPv4Network
_V6 = ipaddress.IPv6Network

# Order matters only for the category named in the refusal: the narrower entry comes first.
_IPV4_BLOCKS: tuple[tuple[ipaddress.IPv4Network, str], ...] = (
    (_V4("169.254.169.254/32"), "metadata"),
    (_V4("0.0.0.0/8"), "unspecified"),
    (_V4("10.0.0.0/8"), "private"),
    (_V4("100.64.0.0/10"), "shared address space"),
    (_V4("127.0.0.0/8"), "loopback"),
    (_V4("169.254.0.0/16"), "link-local"),
    (_V4("172.16.0.0/12"), "private"),
    (_V4("192.0.0.0/24"), "reserved"),
    (_V4("192.0.2.0/24"), "documentation"),
    (_V4("192.88.99.0/24"), "reserved"),
    (_V4("192.168.0.0/16"), "private"),
    (_V4("198.18.0.0/15"), "reserved"),
    (_V4("198.51.100.0/24"), "documentation"),
    (_V4("203.0.113.0/24"), "documentation"),
    (_V4("224.0.0.0/4"), "multicast"),
    (_V4("240.0.0.0/4"), "reserved"),
)

_IPV6_BLOCKS: tuple[tuple[ipaddress.IPv6Network, str], ...] = (
    (_V6("fd00:ec2::254/128"), "metadata"),
    (_V6("::/128"), "unspecified"),
    (_V6("::1/128"), "loopback"),
    (_V6("fc00::/7"), "private"),
    (_V6("fe80::/10"), "link-local"),
    (_V6("fec0::/10"), "reserved"),
    (_V6("ff00::/8"), "multicast"),
    (_V6("2001::/23"), "reserved"),
    (_V6("2001:db8::/32"), "documentation"),
    (_V6("3fff::/20"), "documentation"),
)

_GLOBAL_UNICAST = _V6("2000::/3")
_IPV4_MAPPED = _V6("::ffff:0:0/96")
_NAT64 = _V6("64:ff9b::/96")
_SIX_TO_FOUR = _V6("2002::/16")

_NOT_FOUND_CODES = frozenset(
    code for code in (getattr(socket, "EAI_NONAME", None), getattr(socket, "EAI_NODATA", None)) if code
)


def blocked_category(address: IPAddress, *, allow_loopback: bool = False) -> str | None:
    """Why ``address`` must not be contacted, or ``None`` if it is a public address."""
    if isinstance(address, ipaddress.IPv4Address):
        category = _ipv4_category(address)
        if category == "loopback" and allow_loopback:
            return None
        return category
    if address.scope_id:
        return "link-local"
    plain = ipaddress.IPv6Address(int(address))
    embedded = _embedded_ipv4(plain)
    if embedded is not None:
        inner = _ipv4_category(embedded)
        return None if inner is None else f"IPv4-embedded {inner}"
    for network, category in _IPV6_BLOCKS:
        if plain in network:
            if category == "loopback" and allow_loopback:
                return None
            return category
    if plain not in _GLOBAL_UNICAST:
        return "reserved"
    return None


def check_host(
    host: str, port: int, *, allow_loopback: bool = False, resolver: Resolver | None = None
) -> str:
    """Resolve ``host`` and return the one address to connect to, or refuse.

    Raises ``FatalScrapeError("blocked_address")`` if the literal or any resolved address is blocked,
    ``FatalScrapeError("dns_not_found")`` if the name does not exist, and ``RetryableScrapeError`` for
    a temporary resolver failure. Of the resolved addresses the first IPv4 one is preferred (Lambda
    functions outside a VPC have no IPv6 egress), else the first.
    """
    literal = ip_literal(host)
    if literal is not None:
        _refuse_if_blocked(host, literal, allow_loopback=allow_loopback)
        return str(literal)
    addresses = _resolve(host, port, resolver or socket.getaddrinfo)
    for address in addresses:
        _refuse_if_blocked(host, address, allow_loopback=allow_loopback)
    preferred = next((a for a in addresses if a.version == 4), addresses[0])
    return str(preferred)


def mapping_resolver(names: Mapping[str, Sequence[str]]) -> Resolver:
    """A resolver answering from a fixed table (a local web farm, tests); unknown names do not exist."""
    table = {name.lower().rstrip("."): tuple(addresses) for name, addresses in names.items()}

    def resolve(
        host: str, port: int, /, *, type: int = socket.SOCK_STREAM
    ) -> list[tuple[Any, Any, Any, Any, tuple[Any, ...]]]:
        addresses = table.get(host.lower().rstrip("."))
        if not addresses:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        answers: list[tuple[Any, Any, Any, Any, tuple[Any, ...]]] = []
        for text in addresses:
            family = socket.AF_INET6 if ":" in text else socket.AF_INET
            sockaddr: tuple[Any, ...] = (text, port, 0, 0) if family == socket.AF_INET6 else (text, port)
            answers.append((family, type, socket.IPPROTO_TCP, "", sockaddr))
        return answers

    return resolve


def _ipv4_category(address: ipaddress.IPv4Address) -> str | None:
    for network, category in _IPV4_BLOCKS:
        if address in network:
            return category
    return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address in _IPV4_MAPPED:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _SIX_TO_FOUR:
        return address.sixtofour
    return None


def _refuse_if_blocked(host: str, address: IPAddress, *, allow_loopback: bool) -> None:
    category = blocked_category(address, allow_loopback=allow_loopback)
    if category is not None:
        shown = host if host == str(address) else f"{host} -> {address}"
        raise FatalScrapeError("blocked_address", f"{shown} is {category}")


def _resolve(host: str, port: int, resolver: Resolver) -> list[IPAddress]:
    try:
        answers = resolver(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        if exc.errno in _NOT_FOUND_CODES:
            raise FatalScrapeError("dns_not_found", f"{host}: {exc.strerror}") from exc
        raise RetryableScrapeError("dns_error", f"{host}: {exc.strerror or exc}") from exc
    except UnicodeError as exc:
        raise FatalScrapeError("invalid_url", f"host {host!r} cannot be encoded: {exc}") from exc
    addresses: list[IPAddress] = []
    for family, _type, _proto, _canonical, sockaddr in answers:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        parsed = ip_literal(str(sockaddr[0]))
        if parsed is None:
            raise FatalScrapeError("blocked_address", f"{host} resolved to unusable {sockaddr[0]!r}")
        if family == socket.AF_INET6 and len(sockaddr) >= 4 and sockaddr[3]:
            parsed = ipaddress.IPv6Address(f"{parsed}%{sockaddr[3]}")
        if parsed not in addresses:
            addresses.append(parsed)
    if not addresses:
        raise FatalScrapeError("dns_not_found", f"{host}: no IPv4 or IPv6 address")
    return addresses
