"""What the scraper keeps from one HTML page: metadata, contact data, social links, text, next links.

The markup is bounded in size and nesting before it is parsed (:mod:`outreach.scraping.markup_bounds`).
A link that cannot be resolved to an http(s) URL in canonical form (``http://[ccpa-preferences]``,
``https://[domain]/impressum``) is skipped and counted in ``skipped_links``; an unusable
``<base href>`` is ignored (and counted) in favour of the page's own URL. Each link is parsed once:
references with a scheme other than http(s) (``mailto:``, ``tel:``, ``javascript:``) are told apart by
their prefix before any joining.

E-mail addresses and phone numbers come from :mod:`outreach.scraping.emails` and
:mod:`outreach.scraping.phones`, in the shape of :mod:`outreach.scraping.contacts`; which links lead to
imprint, contact and about pages from :mod:`outreach.scraping.page_choice`; the page's language in the
shape of :mod:`outreach.scraping.language_tag`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from selectolax.lexbor import LexborHTMLParser, LexborNode

from outreach.canonical_url import CanonicalUrl, canonical_url
from outreach.errors import FatalScrapeError, UnusableUrlError
from outreach.scraping.contacts import FoundEmail, FoundPhone
from outreach.scraping.emails import find_emails
from outreach.scraping.language_tag import language_tag
from outreach.scraping.markup_bounds import bound_markup
from outreach.scraping.page_choice import KIND_PRIORITY, page_kind
from outreach.scraping.phones import find_phones
from outreach.scraping.site_urls import (
    HttpTarget,
    http_target,
    join_url,
    page_key,
    parse_http_url,
    same_company_site,
)

MAX_TITLE_CHARS = 300
MAX_DESCRIPTION_CHARS = 1000
MAX_EMAILS_PER_PAGE = 50
MAX_PHONES_PER_PAGE = 20

INVISIBLE_TAGS = ["script", "style", "noscript", "template", "svg", "iframe", "object", "canvas"]

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

_SCHEME = re.compile(r"^[ \t\n]*([a-z][a-z0-9+.-]*):", re.IGNORECASE)
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
    label: str


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
    page = parse_http_url(page_url)
    base_url, skipped = _base_url(tree, page_url)
    anchors = [(href, _collapse(node.text(separator=" "))) for node, href in _anchors(tree)]
    links: list[_Link] = []
    for href, label in anchors:
        try:
            target = _resolve(base_url, href)
        except FatalScrapeError:  # outcome: an unusable link is skipped and counted
            skipped += 1
            continue
        if target is not None:
            links.append(_Link(target, label))

    candidates, unfetchable = _candidate_links(page, links)
    skipped += unfetchable
    tree.strip_tags(INVISIBLE_TAGS)
    root = tree.body or tree.root
    visible = _collapse(root.text(separator=" ")) if root is not None else ""
    cloudflare = [node.attributes.get("data-cfemail") or "" for node in tree.css("[data-cfemail]")]
    language = _language(tree, metas)
    hrefs = [href for href, _ in anchors]
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
    node = tree.css_first("title")
    return node.text() if node is not None else None


def _meta_values(tree: LexborHTMLParser) -> dict[str, str]:
    """Meta tags by lower-case name, property or http-equiv; the first occurrence wins."""
    values: dict[str, str] = {}
    for node in tree.css("meta"):
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
    html = tree.css_first("html")
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


def _base_url(tree: LexborHTMLParser, page_url: str) -> tuple[str, int]:
    """The URL relative links resolve against, and 1 if an unusable ``<base href>`` was skipped."""
    node = tree.css_first("base[href]")
    href = (node.attributes.get("href") or "").strip() if node is not None else ""
    if not href:
        return page_url, 0
    try:
        target = _resolve(page_url, href)
    except FatalScrapeError:  # outcome: an unusable base is skipped and counted
        return page_url, 1
    return (page_url, 0) if target is None else (str(target), 0)


def _resolve(base_url: str, href: str) -> CanonicalUrl | None:
    """``href`` as a canonical http(s) URL; None for other schemes (mailto:, tel:, javascript:).

    Raises ``FatalScrapeError`` when the reference is meant as a web link but cannot be one.
    """
    scheme = _SCHEME.match(href)
    if scheme is not None and scheme.group(1).lower() not in ("http", "https"):
        return None
    joined = join_url(base_url, href)
    try:
        return canonical_url(joined)
    except UnusableUrlError as exc:
        raise FatalScrapeError("invalid_url", str(exc)) from exc


def _anchors(tree: LexborHTMLParser) -> Iterator[tuple[LexborNode, str]]:
    for node in tree.css("a[href], area[href]"):
        href = (node.attributes.get("href") or "").strip()
        if href:
            yield node, href


def _social_links(links: Iterable[_Link]) -> tuple[tuple[str, str], ...]:
    found: dict[str, str] = {}
    for link in links:
        host = link.target.host
        network = _network_for(host)
        path = link.target.path.rstrip("/")
        first_segment = path.lstrip("/").split("/", 1)[0].lower()
        if network is None or not path or first_segment in _NON_PROFILE_SEGMENTS:
            continue
        cleaned = f"https://{host}{path}"
        found.setdefault(cleaned, network)
    return tuple((network, url) for url, network in found.items())


def _network_for(hostname: str) -> str | None:
    host = hostname.lower()
    for domain, network in SOCIAL_NETWORKS.items():
        if host == domain or host.endswith("." + domain):
            return network
    return None


def _candidate_links(page: HttpTarget, links: Iterable[_Link]) -> tuple[tuple[CandidateLink, ...], int]:
    """Links to imprint, contact and about pages of this site or a parent domain, and how many of them
    could not be made fetchable (skipped and counted; only candidates are made fetchable).
    """
    found: dict[str, CandidateLink] = {}
    unfetchable = 0
    own_key = page_key(page)
    for link in links:
        url = link.target
        if not same_company_site(url, page.canonical) or url.path.lower().endswith(_FILE_SUFFIXES):
            continue
        kind = page_kind(url.path, link.label)
        if kind is None:
            continue
        try:
            target = http_target(url)
        except FatalScrapeError:  # outcome: an unusable link is skipped and counted
            unfetchable += 1
            continue
        if page_key(target) == own_key:
            continue
        absolute = str(url)
        found.setdefault(absolute, CandidateLink(kind=kind, url=absolute))
    ordered = tuple(sorted(found.values(), key=lambda link: KIND_PRIORITY[link.kind]))
    return ordered, unfetchable
