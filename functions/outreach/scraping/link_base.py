"""A page's links resolved against its base URL, the base parsed once for all of the page's links.

A link either has a scheme other than http(s) (``mailto:``, ``tel:``, ``javascript:``; told apart by
its prefix, no joining) or is resolved with ``urljoin`` and put in canonical form. Most links of a
page are its own paths (``/kontakt``) or fragments (``#top``); for those that need no joining rule
(no whitespace or control characters, no ``.`` or ``..`` segment, no ``;``, short enough) the
canonical URL is put together from the base's parts directly: what ``urljoin`` then ``canonical_url``
would give, namely
the base's scheme, host and port with the link's path and query (a fragment-only link is the base
itself). Every other link takes the general route.

URL resolution: https://www.rfc-editor.org/rfc/rfc3986#section-5.2 (as ``urllib.parse.urljoin`` does it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from outreach.canonical_url import MAX_URL_LENGTH, CanonicalUrl
from outreach.scraping.site_urls import canonical_http_url, join_url

_SCHEME = re.compile(r"^[ \t\n]*([a-z][a-z0-9+.-]*):", re.IGNORECASE)
# urljoin drops tabs and newlines, the canonical form refuses other control characters and spaces and
# strips whitespace of any kind off the ends, ahead of an empty query or fragment too.
_WHITESPACE_OR_CONTROL = re.compile(r"[\s\x00-\x20\x7f]")


@dataclass(frozen=True)
class LinkBase:
    """The URL a page's relative links resolve against: as written, and in canonical form."""

    url: str
    canonical: CanonicalUrl
    # Characters a link may have before base and link together could pass MAX_URL_LENGTH.
    room: int

    @classmethod
    def of(cls, url: str, canonical: CanonicalUrl) -> LinkBase:
        """The base ``url`` (as written), whose canonical form is ``canonical``."""
        return cls(url, canonical, MAX_URL_LENGTH - len(str(canonical)))

    def resolve(self, href: str) -> CanonicalUrl | None:
        """``href`` as a canonical http(s) URL; None for other schemes (mailto:, tel:, javascript:).

        Raises ``FatalScrapeError`` when the reference is meant as a web link but cannot be one.
        """
        scheme = _SCHEME.match(href)
        if scheme is not None and scheme.group(1).lower() not in ("http", "https"):
            return None
        direct = self._direct(href)
        if direct is not None:
            return direct
        return canonical_http_url(join_url(self.url, href))

    def _direct(self, href: str) -> CanonicalUrl | None:
        """The resolved URL of a path-absolute or fragment-only ``href`` that needs no joining rule."""
        fragment_only = href[:1] == "#"
        # urljoin drops an empty ";" parameter part: such a link takes the general route.
        if not fragment_only and (href[:1] != "/" or href[:2] == "//" or "/." in href or ";" in href):
            return None
        if len(href) > self.room or _WHITESPACE_OR_CONTROL.search(href):
            return None
        if fragment_only:
            return self.canonical
        path, _, query = href.partition("#")[0].partition("?")
        base = self.canonical
        return CanonicalUrl(base.scheme, base.host, base.port, path, query)
