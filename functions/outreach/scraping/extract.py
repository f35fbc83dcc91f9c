"""What the scraper keeps from one HTML page: metadata, contact data, social links, text, next links.

The markup is bounded in size and nesting before it is parsed (:mod:`outreach.scraping.markup_bounds`).
A link that cannot be resolved to an http(s) URL in canonical form (``http://[ccpa-preferences]``,
``https://[domain]/impressum``) is skipped and counted in ``skipped_links``; an unusable
``<base href>`` is ignored (and counted) in favour of the page's own URL.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from selectolax.lexbor import LexborHTMLParser, LexborNode

from outreach.errors import FatalScrapeError
from outreach.scraping.markup_bounds import bound_markup
from outreach.scraping.site_urls import HttpTarget, join_url, page_key, parse_http_url, same_site

MAX_TITLE_CHARS = 300
MAX_DESCRIPTION_CHARS = 1000
MAX_EMAILS_PER_PAGE = 50
MAX_PHONES_PER_PAGE = 20

INVISIBLE_TAGS = ["script", "style", "noscript", "template", "svg", "iframe", "object", "canvas"]

# Candidate pages, in the order they are worth fetching: the imprint (legally required to name the
# company, address, e-mail and phone in Germany), then contact, then about.
LINK_KEYWORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("imprint", ("impressum", "imprint", "legal notice", "legal-notice", "legal_notice", "legalnotice")),
    ("contact", ("kontakt", "contact", "お問い合わせ", "問い合わせ")),
    (
        "about",
        ("über uns", "über-uns", "ueber uns", "ueber-uns", "ueber_uns", "uber-uns", "about", "会社概要"),
    ),
)
KIND_PRIORITY = {kind: rank for rank, (kind, _) in enumerate(LINK_KEYWORDS)}

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

_EMAIL = re.compile(
    r"(?<![\w.%+-])[a-z0-9][a-z0-9._%+-]{0,63}@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24}(?![\w-])",
    re.IGNORECASE,
)
_OBFUSCATED_AT = re.compile(r"\s*[\[(\{]\s*at\s*[\])\}]\s*", re.IGNORECASE)
_OBFUSCATED_DOT = re.compile(r"\s*[\[(\{]\s*(?:dot|punkt)\s*[\])\}]\s*", re.IGNORECASE)
_ASSET_SUFFIXES = (
    ".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".avif", ".ico", ".bmp", ".tif", ".tiff",
    ".css", ".js", ".woff", ".woff2", ".ttf", ".eot", ".mp4", ".webm",
)  # fmt: skip
_PLACEHOLDER_EMAIL_DOMAINS = frozenset(
    {"example.com", "example.org", "example.net", "example.de", "domain.com", "domain.de", "yourdomain.com"}
)
_TRACKER_EMAIL_DOMAINS = ("sentry.io", "sentry.wixpress.com", "sentry-next.wixpress.com")

# Conservative: an international number written with "+", or any number right after a phone label.
# Possessive quantifiers: a digit run is never split two ways, so a long run cannot backtrack badly.
_SEPARATOR = r"[ \t\u00a0]*+[./\-\u2010-\u2015]?[ \t\u00a0]*+"
_INTERNATIONAL_PHONE = re.compile(
    r"(?<![\w+])\+[1-9]\d{0,2}" + rf"(?:{_SEPARATOR}\(0\))?(?:{_SEPARATOR}\(?\d++\)?){{1,8}}(?!\d)"
)
_LABELLED_PHONE = re.compile(
    r"(?:\b(?:tel|telefon|telephone|phone|fon|mobil|mobile|handy)\b|電話(?:番号)?|☎)"
    r"[ \t\u00a0]*+[.:\uff1a]{0,2}[ \t\u00a0]*+"
    r"(\+?\(?\d[\d \t\u00a0()./\-]{4,24}\d)",
    re.IGNORECASE,
)
_FAX_LABEL_BEFORE = re.compile(r"fax\W*$", re.IGNORECASE)
_LANGUAGE = re.compile(r"^[a-z]{2,3}(?:-[a-z0-9]{1,8})*$")


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
    emails: tuple[str, ...]
    phones: tuple[str, ...]
    social_links: tuple[tuple[str, str], ...]
    text: str
    candidate_links: tuple[CandidateLink, ...]
    skipped_links: int = 0
    markup_cut: str | None = None


@dataclass(frozen=True)
class _Link:
    target: HttpTarget
    label: str


def extract_page(html: str, page_url: str, *, max_text_chars: int) -> PageExtract:
    """Extract everything the scraper keeps from one page; ``page_url`` resolves relative links."""
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

    tree.strip_tags(INVISIBLE_TAGS)
    root = tree.body or tree.root
    visible = _collapse(root.text(separator=" ")) if root is not None else ""

    emails = _unique(
        [*(_emails_from_mailto(href) for href, _ in anchors), _emails_in_text(visible)],
        limit=MAX_EMAILS_PER_PAGE,
    )
    phones = _unique(
        [*(_phones_from_tel(href) for href, _ in anchors), _phones_in_text(visible)],
        limit=MAX_PHONES_PER_PAGE,
    )
    return PageExtract(
        title=_bounded(_title(tree) or metas.get("og:title"), MAX_TITLE_CHARS),
        description=_bounded(metas.get("description") or metas.get("og:description"), MAX_DESCRIPTION_CHARS),
        language=_language(tree, metas),
        emails=emails,
        phones=phones,
        social_links=_social_links(links),
        text=visible[:max_text_chars].rstrip(),
        candidate_links=_candidate_links(page, links),
        skipped_links=skipped,
        markup_cut=bounded.cut,
    )


def _collapse(text: str | None) -> str:
    return " ".join(text.split()) if text else ""


def _bounded(text: str | None, limit: int) -> str | None:
    collapsed = _collapse(text)
    return collapsed[:limit].rstrip() or None


def _unique(groups: Iterable[Iterable[str]], *, limit: int) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for group in groups:
        for value in group:
            seen.setdefault(value, None)
            if len(seen) >= limit:
                return tuple(seen)
    return tuple(seen)


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
        value = raw.split(",")[0].strip().lower().replace("_", "-")
        if _LANGUAGE.match(value):
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


def _resolve(base_url: str, href: str) -> HttpTarget | None:
    """``href`` as a canonical http(s) target; None for other schemes (mailto:, tel:, javascript:).

    Raises ``FatalScrapeError`` when the reference is meant as a web link but cannot be one.
    """
    joined = join_url(base_url, href)
    try:
        scheme = urlsplit(joined).scheme.lower()
    except ValueError as exc:
        raise FatalScrapeError("invalid_url", f"{joined[:200]!r}: {exc}") from exc
    if scheme not in ("http", "https"):
        return None
    return parse_http_url(joined)


def _anchors(tree: LexborHTMLParser) -> Iterator[tuple[LexborNode, str]]:
    for node in tree.css("a[href], area[href]"):
        href = (node.attributes.get("href") or "").strip()
        if href:
            yield node, href


def _emails_from_mailto(href: str) -> list[str]:
    if not href.lower().startswith("mailto:"):
        return []
    addresses = unquote(href[len("mailto:") :]).split("?", 1)[0]
    found = []
    for candidate in re.split(r"[,;]", addresses):
        candidate = candidate.strip().lower()
        if _EMAIL.fullmatch(candidate) and _plausible_email(candidate):
            found.append(candidate)
    return found


def _emails_in_text(text: str) -> list[str]:
    readable = _OBFUSCATED_DOT.sub(".", _OBFUSCATED_AT.sub("@", text))
    found = (match.group(0).lower() for match in _EMAIL.finditer(readable))
    return [email for email in found if _plausible_email(email)]


def _plausible_email(email: str) -> bool:
    local, _, domain = email.rpartition("@")
    if len(email) > 254 or not local or domain.endswith(_ASSET_SUFFIXES):
        return False
    if domain in _PLACEHOLDER_EMAIL_DOMAINS or domain.endswith(_TRACKER_EMAIL_DOMAINS):
        return False
    # Retina image names ("logo@2x.png") are caught above; hashed tracker ids look like long hex.
    return not re.fullmatch(r"[0-9a-f]{24,}", local)


def _phones_from_tel(href: str) -> list[str]:
    if not href.lower().startswith("tel:"):
        return []
    number = re.split(r"[;?,]", unquote(href[len("tel:") :]), maxsplit=1)[0]
    normalised = normalise_phone(number, allow_double_zero=True)
    return [normalised] if normalised else []


def _phones_in_text(text: str) -> list[str]:
    raw = [
        match.group(0)
        for match in _INTERNATIONAL_PHONE.finditer(text)
        if not _FAX_LABEL_BEFORE.search(text, max(0, match.start() - 24), match.start())
    ]
    raw += [match.group(1) for match in _LABELLED_PHONE.finditer(text)]
    return [number for number in (normalise_phone(r) for r in raw) if number]


def normalise_phone(raw: str, *, allow_double_zero: bool = False) -> str | None:
    """``+<digits>`` for international numbers, plain digits for national ones; None if implausible."""
    text = raw.strip().replace("(0)", "")
    international = text.startswith("+")
    digits = re.sub(r"\D", "", text)
    if not international and allow_double_zero and digits.startswith("00"):
        international, digits = True, digits[2:]
    if not 7 <= len(digits) <= 15:
        return None
    if international:
        return None if digits.startswith("0") else f"+{digits}"
    return digits if digits.startswith("0") else None


def _social_links(links: Iterable[_Link]) -> tuple[tuple[str, str], ...]:
    found: dict[str, str] = {}
    for link in links:
        host = link.target.host
        network = _network_for(host)
        path = link.target.canonical.path.rstrip("/")
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


def _candidate_links(page: HttpTarget, links: Iterable[_Link]) -> tuple[CandidateLink, ...]:
    found: dict[str, CandidateLink] = {}
    for link in links:
        target = link.target
        path = target.canonical.path
        if not same_site(target, page) or path.lower().endswith(_FILE_SUFFIXES):
            continue
        if page_key(target) == page_key(page):
            continue
        kind = _link_kind(unquote(path).lower(), link.label.lower())
        if kind is not None:
            absolute = str(target.canonical)
            found.setdefault(absolute, CandidateLink(kind=kind, url=absolute))
    return tuple(sorted(found.values(), key=lambda link: KIND_PRIORITY[link.kind]))


def _link_kind(path: str, label: str) -> str | None:
    for kind, keywords in LINK_KEYWORDS:
        if any(keyword in path or keyword in label for keyword in keywords):
            return kind
    return None
