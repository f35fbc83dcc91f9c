"""Parsing and comparing the http(s) URLs the scraper is allowed to fetch."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

import httpx

from outreach.errors import FatalScrapeError

MAX_URL_LENGTH = 2048
DEFAULT_PORTS = {"http": 80, "https": 443}

# After IDNA encoding a host name is plain ASCII letters, digits, hyphens, underscores and dots.
_HOST_NAME = re.compile(r"^[a-z0-9_](?:[a-z0-9_.-]{0,251}[a-z0-9_])?$")
_CONTROL_OR_SPACE = re.compile(r"[\x00-\x20\x7f]")


@dataclass(frozen=True)
class HttpTarget:
    """A validated absolute http(s) URL and the parts the fetcher needs."""

    url: httpx.URL
    scheme: str
    host: str
    port: int

    @property
    def is_ip_literal(self) -> bool:
        return ip_literal(self.host) is not None

    @property
    def host_header(self) -> str:
        """The Host header value: the name as written in the URL, with the port when not the default."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        if self.port == DEFAULT_PORTS[self.scheme]:
            return host
        return f"{host}:{self.port}"

    def __str__(self) -> str:
        return str(self.url)


def ip_literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address if ``host`` is a canonical IPv4 or IPv6 literal (brackets and zone id allowed)."""
    candidate = host.strip("[]").split("%", 1)[0]
    try:
        return ipaddress.ip_address(candidate)
    except ValueError:  # outcome: not an address literal
        return None


def parse_http_url(raw: str, *, reason: str = "invalid_url") -> HttpTarget:
    """Validate an absolute http or https URL; anything else is a FatalScrapeError with ``reason``."""
    text = raw.strip() if isinstance(raw, str) else ""
    if not text:
        raise FatalScrapeError(reason, "empty URL")
    if len(text) > MAX_URL_LENGTH:
        raise FatalScrapeError(reason, f"URL longer than {MAX_URL_LENGTH} characters")
    if _CONTROL_OR_SPACE.search(text):
        raise FatalScrapeError(reason, "URL contains spaces or control characters")
    try:
        url = httpx.URL(text)
        raw_host = url.raw_host.decode("ascii")
        port = url.port
    except (httpx.InvalidURL, ValueError, UnicodeError) as exc:
        raise FatalScrapeError(reason, f"{text[:200]}: {exc}") from exc
    return _target_from(url, raw_host, port, reason=reason, shown=text)


def join_http_url(base: HttpTarget, reference: str, *, reason: str) -> HttpTarget:
    """Resolve ``reference`` (absolute or relative, e.g. a Location header) against ``base``."""
    reference = reference.strip()
    if not reference or _CONTROL_OR_SPACE.search(reference):
        raise FatalScrapeError(reason, f"unusable reference {reference[:200]!r}")
    try:
        joined = base.url.join(reference)
    except (httpx.InvalidURL, ValueError, UnicodeError) as exc:
        raise FatalScrapeError(reason, f"{reference[:200]}: {exc}") from exc
    return parse_http_url(str(joined), reason=reason)


def _target_from(url: httpx.URL, raw_host: str, port: int | None, *, reason: str, shown: str) -> HttpTarget:
    scheme = url.scheme
    if scheme not in DEFAULT_PORTS:
        raise FatalScrapeError(reason, f"scheme {scheme or '(none)'!r} is not http or https")
    if url.userinfo:
        raise FatalScrapeError(reason, "URLs with credentials are not fetched")
    host = raw_host.lower().rstrip(".")
    if not host:
        raise FatalScrapeError(reason, f"no host in {shown[:200]!r}")
    literal = ip_literal(host)
    if literal is None and not _HOST_NAME.match(host):
        raise FatalScrapeError(reason, f"invalid host {host[:100]!r}")
    if literal is not None and "%" in host:
        raise FatalScrapeError(reason, "IPv6 zone identifiers are not fetched")
    effective_port = DEFAULT_PORTS[scheme] if port is None else port
    if not 0 < effective_port < 65536:
        raise FatalScrapeError(reason, f"port {effective_port} out of range")
    return HttpTarget(url=url.copy_with(fragment=None), scheme=scheme, host=host, port=effective_port)


def site_host(host: str) -> str:
    """The host a site is known by: lower case, without a trailing dot or a leading ``www.``."""
    host = host.lower().rstrip(".")
    return host[4:] if host.startswith("www.") else host


def same_site(host_a: str, host_b: str) -> bool:
    """True when both hosts name the same site, counting ``www.example.de`` and ``example.de`` as one."""
    return site_host(host_a) == site_host(host_b)


def page_key(target: HttpTarget) -> str:
    """A key under which two URLs of the same page compare equal (scheme, www and trailing slash ignored)."""
    path = target.url.raw_path.decode("ascii", errors="replace")
    base, _, query = path.partition("?")
    base = base.rstrip("/") or "/"
    return f"{site_host(target.host)}:{target.port if target.port not in (80, 443) else ''}{base}?{query}"
