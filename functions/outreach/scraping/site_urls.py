"""The http(s) URLs the scraper is allowed to fetch, in the one canonical form, and how they compare."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urljoin

import httpx

from outreach.canonical_url import DEFAULT_PORTS, CanonicalUrl, canonical_url, site_host
from outreach.errors import FatalScrapeError, UnusableUrlError
from outreach.scraping.registrable_domain import is_parent_domain

# Characters httpx keeps as written in a path and in a query: RFC 3986 unreserved and sub-delims,
# ":", "@", "/" and "%" (httpx percent-encodes by the WHATWG percent-encode sets,
# https://url.spec.whatwg.org/#percent-encoded-bytes, none of which holds these).
_KEPT_AS_WRITTEN = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*")


@dataclass(frozen=True)
class HttpTarget:
    """A validated absolute http(s) URL in canonical form and the parts the fetcher needs."""

    canonical: CanonicalUrl
    url: httpx.URL

    @property
    def scheme(self) -> str:
        return self.canonical.scheme

    @property
    def host(self) -> str:
        return self.canonical.host

    @property
    def port(self) -> int:
        return self.canonical.port

    @property
    def site(self) -> str:
        """The site identity: host without ``www.``, with the port when not the scheme's default."""
        return self.canonical.site

    @property
    def origin(self) -> str:
        """``scheme://host[:port]``: where the site's ``/robots.txt`` lives."""
        return f"{self.scheme}://{self.canonical.netloc}"

    @property
    def is_ip_literal(self) -> bool:
        return ip_literal(self.host) is not None

    @property
    def host_header(self) -> str:
        """The Host header value: the host name, with the port when not the default."""
        return self.canonical.netloc

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
    return http_target(canonical_http_url(raw, reason=reason), reason=reason)


def canonical_http_url(raw: str, *, reason: str = "invalid_url") -> CanonicalUrl:
    """The canonical form of the absolute http(s) URL ``raw``; FatalScrapeError with ``reason`` if none.

    What :func:`parse_http_url` checks short of building the fetcher's URL (for links that are only
    compared, never fetched).
    """
    try:
        return canonical_url(raw)
    except UnusableUrlError as exc:
        raise FatalScrapeError(reason, str(exc)) from exc


def http_target(canonical: CanonicalUrl, *, reason: str = "invalid_url") -> HttpTarget:
    """The fetchable target for a URL already in canonical form; FatalScrapeError if httpx refuses it."""
    parts: dict[str, object] = {
        "scheme": canonical.scheme,
        "host": canonical.host,
        "port": None if canonical.port == DEFAULT_PORTS[canonical.scheme] else canonical.port,
        "path": canonical.path,
    }
    if canonical.query:
        parts["query"] = canonical.query.encode("utf-8")
    try:
        url = httpx.URL(**parts)  # type: ignore[arg-type]
    except (httpx.InvalidURL, ValueError, UnicodeError) as exc:
        raise FatalScrapeError(reason, f"{str(canonical)[:200]}: {exc}") from exc
    return HttpTarget(canonical=canonical, url=url)


def join_http_url(base: HttpTarget, reference: str, *, reason: str) -> HttpTarget:
    """Resolve ``reference`` (absolute or relative, e.g. a Location header) against ``base``."""
    return parse_http_url(join_url(str(base), reference, reason=reason), reason=reason)


def join_url(base: str, reference: str, *, reason: str = "invalid_url") -> str:
    """``reference`` resolved against ``base`` as text; FatalScrapeError with ``reason`` if it cannot be."""
    reference = reference.strip()
    if not reference:
        raise FatalScrapeError(reason, "empty reference")
    try:
        return urljoin(base, reference)
    except ValueError as exc:
        raise FatalScrapeError(reason, f"{reference[:200]!r}: {exc}") from exc


def same_site(a: HttpTarget, b: HttpTarget) -> bool:
    """True when both name the same site: ``www.example.de`` and ``example.de`` are one, ports differ."""
    return a.site == b.site


def same_company_site(target: CanonicalUrl, page: CanonicalUrl) -> bool:
    """The page's site, or its parent domain on the same port: ``example.de`` for ``shop.example.de``."""
    if target.site == page.site:
        return True
    return target.port == page.port and is_parent_domain(target.host, page.host)


def page_key(target: HttpTarget) -> str:
    """A key under which two URLs of the same page compare equal (scheme, www and trailing slash ignored)."""
    path = target.url.raw_path.decode("ascii", errors="replace")
    base, _, query = path.partition("?")
    return _key(target.site, base, query)


def fetchable_page_key(canonical: CanonicalUrl) -> str:
    """``page_key(http_target(canonical))``: FatalScrapeError if the fetcher cannot take the URL.

    A URL whose host is a name with a letter in it or an IP address (httpx refuses a name of four
    numbers that is not one) and whose path and query hold only characters httpx keeps as written (no
    ``.`` segment either, which httpx drops) is one httpx takes unchanged: its key comes from the
    canonical parts without building the fetcher's URL (tens of microseconds).
    """
    host, path, query = canonical.host, canonical.path, canonical.query
    plain = (
        _takes_host_as_written(host)
        and "/." not in path
        and _KEPT_AS_WRITTEN.fullmatch(path) is not None
        and _KEPT_AS_WRITTEN.fullmatch(query) is not None
    )
    if not plain:
        return page_key(http_target(canonical))
    return _key(canonical.site, path, query)


@lru_cache(maxsize=1024)
def _takes_host_as_written(host: str) -> bool:
    """True for a canonical host httpx takes: a name with a letter in it, or an IP address.

    Cached: a page's candidate links share its host.
    """
    return not host.replace(".", "").isdigit() or ip_literal(host) is not None


def _key(site: str, path: str, query: str) -> str:
    return f"{site}{path.rstrip('/') or '/'}?{query}"


__all__ = [
    "DEFAULT_PORTS",
    "HttpTarget",
    "canonical_http_url",
    "fetchable_page_key",
    "http_target",
    "ip_literal",
    "join_http_url",
    "join_url",
    "page_key",
    "parse_http_url",
    "same_company_site",
    "same_site",
    "site_host",
]
