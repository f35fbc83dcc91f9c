"""What the scraper keeps from one HTML page: metadata, contact data, social links, text, next links.

The markup is bounded in size and nesting before it is parsed (:mod:`outreach.scraping.markup_bounds`).
A link that cannot be resolved to an http(s) URL in canonical form (``http://[ccpa-preferences]``,
``https://[domain]/impressum``) is skipped and counted in ``skipped_links``; an unusable
``<base href>`` is ignored (and counted) in favour of the page's own URL. Each link is parsed once,
against a base parsed once per page (:mod:`outreach.scraping.link_base`); only the few links that lead
to imprint, contact or about pages are made fetchable, and a link's text is read only for those that
could be one. Passes over the tree that cannot find anything are skipped on a look at the markup: no
element to make invisible without its start tag, no Cloudflare-protected address without
``data-cfemail``.

E-mail addresses and phone numbers come from :mod:`outreach.scraping.emails` and
:mod:`outreach.scraping.phones`, in the shape of :mod:`outreach.scraping.contacts`; which links lead to
imprint, contact and about pages from :mod:`outreach.scraping.page_choice`; the page's language in the
shape of :mod:`outreach.scraping.language_tag`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

from selectolax.lexbor import LexborHTMLParser, LexborNode

from outreach.canonical_url import CanonicalUrl
from outreach.errors import FatalScrapeError
from outreach.scraping.contacts import FoundEmail, FoundPhone
from outreach.scraping.emails import find_emails
from outreach.scraping.language_tag import language_tag
from outreach.scraping.link_base import LinkBase
from outreach.scraping.markup_bounds import bound_markup
from outreach.scraping.page_choice import KIND_PRIORITY, page_kind
from outreach.scraping.phones import find_phones
from outreach.scraping.site_urls import canonical_http_url, fetchable_page_key, same_company_site

MAX_TITLE_CHARS = 300
MAX_DESCRIPTION_CHARS = 1000
MAX_EMAILS_PER_PAGE = 50
MAX_PHONES_PER_PAGE = 20

INVISIBLE_TAGS = ["script", "style", "noscript", "template", "svg", "iframe", "object", "canvas"]
# The tree holds one of these elements only if the markup has its start tag (names are ASCII, any case).
_INVISIBLE_START = re.compile(rf"<(?:{'|'.join(INVISIBLE_TAGS)})[\t\n\f\r />]", re.IGNORECASE)
_CLOUDFLARE_ATTRIBUTE = re.compile("data-cfemail", re.IGNORECASE)
_BASE_START = re.compile(r"<base[\t\n\f\r />]", re.IGNORECASE)
_AREA_START = re.compile(r"<area[\t\n\f\r />]", re.IGNORECASE)
# Above this many characters the tree is asked directly (a query by tag name or attribute is a walk
# over the elements in C) instead of first searching the markup case-insensitively for the tag or
# attribute (a walk over every character, a few microseconds a kilobyte).
_LOOK_AT_MARKUP_BELOW = 8_192

SOCIAL_NETWORKS: dict[str, str] = {
    "linkedin.com": "linkedin",
    "xing.com": "xing",
    "facebook.com": "facebook",
    "fb.com": "facebook",
    "instagram.com": "instagram",
    "twitter.com": "x",
    "x.com": "x",
    "youtube.com": "youtube",
    "youtu.be": "youtube",
}
# First path segments of share buttons and app pages, which are not a company's profile.
_NON_PROFILE_SEGMENTS = frozenset(
    {
        "sharer",
        "sharer.php",
        "share",
        "share.php",
        "intent",
        "dialog",
        "sharearticle",
        "home",
        "login",
        "signup",
    }
)

_FILE_SUFFIXES = (
    ".pdf", ".jpg", ".jpeg", ".png", ".gif", ".svg", ".webp", ".zip", ".doc", ".docx", ".xls", ".xlsx",
    ".ppt", ".pptx", ".mp4", ".mp3", ".ics", ".vcf", ".xml", ".json", ".css", ".js",
)  # fmt: skip

_T = TypeVar("_T")


@dataclass(frozen=True)
class CandidateLink:
    """A same-site link that probably leads to an imprint, contact or about page."""

    kind: str
    url: str


@dataclass(frozen=True)
class PageExtract:
    title: str | None
    description: str | None
    language: str | None
    emails: tuple[FoundEmail, ...]
    phones: tuple[FoundPhone, ...]
    social_links: tuple[tuple[str, str], ...]
    text: str
    candidate_links: tuple[CandidateLink, ...]
    skipped_links: int = 0
    markup_cut: str | None = None


@dataclass(frozen=True)
class _Link:
    target: CanonicalUrl
    node: LexborNode

    @property
    def label(self) -> str:
        return _collapse(self.node.text(separator=" "))


def extract_page(
    html: str, page_url: str, *, max_text_chars: int, site_language: str | None = None
) -> PageExtract:
    """Extract everything the scraper keeps from one page; ``page_url`` resolves relative links.

    ``site_language`` (the home page's) stands in for this page's language when phone numbers are
    read and the page names none.
    """
    bounded = bound_markup(html)
    tree = LexborHTMLParser(bounded.html)
    metas = _meta_values(tree)
    page = canonical_http_url(page_url)
    base, skipped = _base_url(tree, bounded.html, page_url, page)
    anchors = list(_anchors(tree, bounded.html))
    links: list[_Link] = []
    for node, href in anchors:
        try:
            target = base.resolve(href)
        except FatalScrapeError:  # outcome: an unusable link is skipped and counted
            skipped += 1
            continue
        if target is not None:
            links.append(_Link(target, node))

    candidates, unfetchable = _candidate_links(page, links)
    skipped += unfetchable
    if _INVISIBLE_START.search(bounded.html):
        tree.strip_tags(INVISIBLE_TAGS)
    root = tree.body or tree.root
    visible = _collapse(root.text(separator=" ")) if root is not None else ""
    cloudflare = (
        [node.attributes.get("data-cfemail") or "" for node in tree.css("[data-cfemail]")]
        if _may_hold(bounded.html, _CLOUDFLARE_ATTRIBUTE)
        else []
    )
    language = _language(tree, metas)
    hrefs = [href for _, href in anchors]
    emails = _unique(
        find_emails(hrefs, cloudflare, visible, page_url=page_url, page_host=page.host),
        key=lambda email: email.address,
        limit=MAX_EMAILS_PER_PAGE,
    )
    tel_hrefs = [href for href in hrefs if href[:4].lower() == "tel:"]
    phones = _unique(
        find_phones(
            tel_hrefs, visible, page_url=page_url, host=page.host, language=language or site_language
        ),
        key=lambda phone: phone.e164,
        limit=MAX_PHONES_PER_PAGE,
    )
    return PageExtract(
        title=_bounded(_title(tree) or metas.get("og:title"), MAX_TITLE_CHARS),
        description=_bounded(metas.get("description") or metas.get("og:description"), MAX_DESCRIPTION_CHARS),
        language=language,
        emails=emails,
        phones=phones,
        social_links=_social_links(links),
        text=visible[:max_text_chars].rstrip(),
        candidate_links=candidates,
        skipped_links=skipped,
        markup_cut=bounded.cut,
    )


def _may_hold(markup: str, pattern: re.Pattern[str]) -> bool:
    """False when the tree cannot hold what ``pattern`` (a start tag or attribute name) would find in
    short ``markup``; for longer markup True: the tree query itself is then cheaper than the search."""
    return len(markup) >= _LOOK_AT_MARKUP_BELOW or pattern.search(markup) is not None


def _collapse(text: str | None) -> str:
    return " ".join(text.split()) if text else ""


def _bounded(text: str | None, limit: int) -> str | None:
    collapsed = _collapse(text)
    return collapsed[:limit].rstrip() or None


def _unique(found: Iterable[_T], *, key: Callable[[_T], str], limit: int) -> tuple[_T, ...]:
    """The first of each ``key`` in order, at most ``limit``."""
    seen: dict[str, _T] = {}
    for value in found:
        seen.setdefault(key(value), value)
        if len(seen) >= limit:
            break
    return tuple(seen.values())


def _title(tree: LexborHTMLParser) -> str | None:
    node = next(iter(tree.tags("title")), None)
    return node.text() if node is not None else None


def _meta_values(tree: LexborHTMLParser) -> dict[str, str]:
    """Meta tags by lower-case name, property or http-equiv; the first occurrence wins."""
    values: dict[str, str] = {}
    for node in tree.tags("meta"):
        attrs = node.attributes
        content = (attrs.get("content") or "").strip()
        if not content:
            continue
        for key in ("name", "property", "http-equiv"):
            name = (attrs.get(key) or "").strip().lower()
            if name:
                values.setdefault(name, content)
    return values


def _language(tree: LexborHTMLParser, metas: dict[str, str]) -> str | None:
    html = tree.root
    candidates = [
        html.attributes.get("lang") if html is not None else None,
        html.attributes.get("xml:lang") if html is not None else None,
        metas.get("content-language"),
        metas.get("language"),
        metas.get("og:locale"),
    ]
    for raw in candidates:
        if not raw:
            continue
        value = language_tag(raw)
        if value is not None:
            return value
    return None


def _base_url(tree: LexborHTMLParser, markup: str, page_url: str, page: CanonicalUrl) -> tuple[LinkBase, int]:
    """What relative links resolve against, and 1 if an unusable ``<base href>`` was skipped."""
    own = LinkBase.of(page_url, page)
    bases = tree.tags("base") if _may_hold(markup, _BASE_START) else []
    node = next((base for base in bases if "href" in base.attributes), None)
    href = (node.attributes.get("href") or "").strip() if node is not None else ""
    if not href:
        return own, 0
    try:
        target = own.resolve(href)
    except FatalScrapeError:  # outcome: an unusable base is skipped and counted
        return own, 1
    return (own, 0) if target is None else (LinkBase.of(str(target), target), 0)


def _anchors(tree: LexborHTMLParser, markup: str) -> Iterator[tuple[LexborNode, str]]:
    """Links with an href, in document order (elements by tag name: no selector to compile)."""
    has_area = tree.tags("area") if len(markup) >= _LOOK_AT_MARKUP_BELOW else _AREA_START.search(markup)
    nodes = tree.css("a[href], area[href]") if has_area else tree.tags("a")
    for node in nodes:
        href = (node.attributes.get("href") or "").strip()
        if href:
            yield node, href


def _social_links(links: Iterable[_Link]) -> tuple[tuple[str, str], ...]:
    found: dict[str, str] = {}
    for link in links:
        host = link.target.host
        network = _network_for(host)
        if network is None:
            continue
        path = link.target.path.rstrip("/")
        first_segment = path.lstrip("/").split("/", 1)[0].lower()
        if not path or first_segment in _NON_PROFILE_SEGMENTS:
            continue
        cleaned = f"https://{host}{path}"
        found.setdefault(cleaned, network)
    return tuple((network, url) for url, network in found.items())


@lru_cache(maxsize=4096)
def _network_for(hostname: str) -> str | None:
    """The social network of a host name; cached: a page names the same few hosts over and over."""
    host = hostname.lower()
    for domain, network in SOCIAL_NETWORKS.items():
        if host == domain or host.endswith("." + domain):
            return network
    return None


def _candidate_links(page: CanonicalUrl, links: Iterable[_Link]) -> tuple[tuple[CandidateLink, ...], int]:
    """Links to imprint, contact and about pages of this site or a parent domain, and how many of them
    could not be made fetchable (skipped and counted; only candidates are made fetchable).
    """
    found: dict[str, CandidateLink] = {}
    unfetchable = 0
    own_key: str | None = None
    for link in links:
        url = link.target
        if not same_company_site(url, page) or url.path.lower().endswith(_FILE_SUFFIXES):
            continue
        kind = page_kind(url.path, link.label)
        if kind is None:
            continue
        absolute = str(url)
        if absolute in found:
            continue  # made fetchable already, and not this page
        try:
            key = fetchable_page_key(url)
        except FatalScrapeError:  # outcome: an unusable link is skipped and counted
            unfetchable += 1
            continue
        if own_key is None:
            own_key = fetchable_page_key(page)
        if key == own_key:
            continue
        found[absolute] = CandidateLink(kind=kind, url=absolute)
    ordered = tuple(sorted(found.values(), key=lambda link: KIND_PRIORITY[link.kind]))
    return ordered, unfetchable
