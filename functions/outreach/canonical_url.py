"""The one canonical form of a website address, shared by task ids, the fetcher and page selection.

A URL is split once (``urllib.parse.urlsplit``) and put together from its parts:

- scheme ``http`` or ``https``, lower case; no credentials; a host is required;
- the host in IDNA 2008 with UTS #46 mapping, non-transitional (``faß.de`` → ``xn--fa-hia.de``, not
  ``fass.de`` as the IDNA 2003 codec of the standard library would have it: those are two domains
  with two registrants), lower case, without a trailing dot; IP literals in their canonical form;
- the port dropped when it is the scheme's default (:data:`DEFAULT_PORTS`), kept otherwise: a port is
  part of the site's identity;
- the path (``/`` when empty) and the query as written, no fragment;
- at most :data:`MAX_URL_LENGTH` characters, as written and in canonical form; no spaces or control
  characters.

IDNA 2008 / UTS #46: https://www.unicode.org/reports/tr46/ (implemented by the ``idna`` package).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit, urlunsplit

import idna

from outreach.errors import UnusableUrlError

MAX_URL_LENGTH = 2048
DEFAULT_PORTS = {"http": 80, "https": 443}

# After IDNA encoding a host name is plain ASCII letters, digits, hyphens, underscores and dots.
_HOST_NAME = re.compile(r"^[a-z0-9_](?:[a-z0-9_.-]{0,251}[a-z0-9_])?$")
_CONTROL_OR_SPACE = re.compile(r"[\x00-\x20\x7f]")


@dataclass(frozen=True)
class CanonicalUrl:
    """An http(s) URL in canonical form; ``str()`` gives the text stored and fetched."""

    scheme: str
    host: str
    port: int
    path: str
    query: str

    @property
    def netloc(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"

    @property
    def site(self) -> str:
        """The site this URL belongs to: host without ``www.``, plus the port unless it is the default."""
        host = site_host(self.host)
        return host if self.port == DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"

    def __str__(self) -> str:
        return urlunsplit((self.scheme, self.netloc, self.path, self.query, ""))


def canonical_url(raw: str) -> CanonicalUrl:
    """The canonical form of the absolute http(s) URL ``raw``; :class:`UnusableUrlError` if it has none."""
    if not isinstance(raw, str):
        raise UnusableUrlError(f"a URL is a string, not {type(raw).__name__}")
    text = raw.strip()
    if not text:
        raise UnusableUrlError("empty URL")
    if len(text) > MAX_URL_LENGTH:
        raise UnusableUrlError(f"URL longer than {MAX_URL_LENGTH} characters")
    if _CONTROL_OR_SPACE.search(text):
        raise UnusableUrlError("URL contains spaces or control characters")
    try:
        parts = urlsplit(text)
        raw_host = parts.hostname
        port = parts.port
    except ValueError as exc:
        raise UnusableUrlError(f"malformed host or port in {text[:200]!r}: {exc}") from exc
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise UnusableUrlError(f"scheme {parts.scheme or '(none)'!r} is not http or https")
    if parts.username is not None or parts.password is not None:
        raise UnusableUrlError("URLs with credentials are not used")
    if not raw_host:
        raise UnusableUrlError(f"no host in {text[:200]!r}")
    host = canonical_host(raw_host)
    effective_port = DEFAULT_PORTS[scheme] if port is None else port
    if not 0 < effective_port < 65536:
        raise UnusableUrlError(f"port {effective_port} out of range")
    canonical = CanonicalUrl(scheme, host, effective_port, parts.path or "/", parts.query)
    if len(str(canonical)) > MAX_URL_LENGTH:
        raise UnusableUrlError(f"URL longer than {MAX_URL_LENGTH} characters in canonical form")
    return canonical


@lru_cache(maxsize=1024)
def canonical_host(raw_host: str) -> str:
    """A host name in IDNA 2008 / UTS #46 non-transitional ASCII form, or a canonical IP literal.

    Cached: a page's links name the same few hosts over and over, and encoding one is the costly part.
    """
    host = raw_host.strip("[]").rstrip(".")
    if not host:
        raise UnusableUrlError("empty host")
    if "%" in host:
        raise UnusableUrlError(f"invalid host {host[:100]!r}: IPv6 zone identifiers are not used")
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:  # outcome: not an address literal, encoded as a name below
        pass
    try:
        encoded = idna.encode(host, uts46=True, transitional=False).decode("ascii")
    except (idna.IDNAError, UnicodeError, ValueError) as exc:
        # Plain ASCII names that IDNA rejects (underscores, labels such as "-x") still exist in DNS;
        # a non-ASCII name or a broken A-label ("xn--...") does not.
        if not host.isascii() or any(label.lower().startswith("xn--") for label in host.split(".")):
            raise UnusableUrlError(f"host {host[:100]!r} has no IDNA 2008 form: {exc}") from exc
        encoded = host
    encoded = encoded.lower()
    if not _HOST_NAME.match(encoded):
        raise UnusableUrlError(f"invalid host {host[:100]!r}")
    return encoded


def site_host(host: str) -> str:
    """The host a site is known by: lower case, without a trailing dot or a leading ``www.``."""
    host = host.lower().rstrip(".")
    return host[4:] if host.startswith("www.") else host
