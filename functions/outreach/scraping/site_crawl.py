"""Scrape one company site: the home page, then a few imprint / contact / about pages of the same site.

The home page decides the task: its fatal and retryable errors propagate unchanged. Extra pages are a
bonus: any error on one is recorded on its page record and the crawl goes on, and no extra page is
started once less than :data:`EXTRA_PAGE_MIN_SECONDS` remain before the deadline.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterable

from outreach.config import ScrapeSettings
from outreach.errors import FatalScrapeError, RetryableScrapeError
from outreach.scraping.address_guard import Resolver
from outreach.scraping.charset import decode_html
from outreach.scraping.extract import KIND_PRIORITY, CandidateLink, PageExtract, extract_page
from outreach.scraping.safe_fetch import BACKOFF_BASE_SECONDS, FetchedPage, fetch_page
from outreach.scraping.site_scrape import PageRecord, SiteScrape
from outreach.scraping.site_urls import page_key, parse_http_url, same_site

EXTRA_PAGE_MIN_SECONDS = 3.0
MAX_EMAILS = 50
MAX_PHONES = 20
MAX_SOCIAL_LINKS_PER_NETWORK = 5
TEXT_SEPARATOR = "\n\n"


def scrape_site(
    url: str,
    *,
    deadline: float,
    settings: ScrapeSettings,
    resolver: Resolver | None = None,
    ssl_context: ssl.SSLContext | None = None,
    backoff_base_seconds: float = BACKOFF_BASE_SECONDS,
) -> SiteScrape:
    """Scrape the site at ``url`` (an absolute http/https URL) before ``deadline`` (time.monotonic()).

    Raises ``FatalScrapeError`` / ``RetryableScrapeError`` for the home page as classified in
    :mod:`outreach.scraping.safe_fetch`.
    """
    start = parse_http_url(url)

    def fetch(page_url: str) -> FetchedPage:
        return fetch_page(
            page_url,
            deadline=deadline,
            settings=settings,
            resolver=resolver,
            ssl_context=ssl_context,
            backoff_base_seconds=backoff_base_seconds,
        )

    home = fetch(str(start))
    home_target = parse_http_url(home.url)
    home_extract = _extract(home, settings)
    site_hosts = {start.host, home_target.host}
    seen = {page_key(start), page_key(home_target)}
    pages = [_record(home)]
    extracts = [home_extract]

    for link in choose_extra_links(home_extract.candidate_links, settings.max_extra_pages, seen):
        if deadline - time.monotonic() < EXTRA_PAGE_MIN_SECONDS:
            break
        try:
            page = fetch(link.url)
        except FatalScrapeError as exc:  # outcome: extra page skipped, recorded on its page record
            pages.append(PageRecord(link.url, _status_of(exc.reason), 0, False, skipped=exc.reason))
            continue
        except RetryableScrapeError as exc:  # outcome: extra page skipped, recorded on its page record
            reason = exc.reason
            pages.append(PageRecord(link.url, _status_of(reason), 0, False, skipped=reason))
            continue
        final = parse_http_url(page.url)
        if not any(same_site(final.host, host) for host in site_hosts):
            pages.append(_record(page, skipped="off_site"))
            continue
        if page_key(final) in seen:
            pages.append(_record(page, skipped="duplicate"))
            continue
        seen.add(page_key(final))
        pages.append(_record(page))
        extracts.append(_extract(page, settings))

    return _merge(home.url, extracts, tuple(pages), settings)


def choose_extra_links(
    candidates: Iterable[CandidateLink], limit: int, seen: set[str]
) -> list[CandidateLink]:
    """Up to ``limit`` links: the best of each kind first (imprint, contact, about), then the rest."""
    fresh: list[CandidateLink] = []
    keys = set(seen)
    for link in candidates:
        try:
            key = page_key(parse_http_url(link.url))
        except FatalScrapeError:  # outcome: a malformed link on the page is not worth a fetch
            continue
        if key not in keys:
            keys.add(key)
            fresh.append(link)
    firsts: dict[str, CandidateLink] = {}
    for link in fresh:
        firsts.setdefault(link.kind, link)
    ordered = sorted(firsts.values(), key=lambda link: KIND_PRIORITY[link.kind])
    ordered += [link for link in fresh if link not in ordered]
    return ordered[: max(0, limit)]


def _extract(page: FetchedPage, settings: ScrapeSettings) -> PageExtract:
    html = decode_html(page.body, page.charset)
    return extract_page(html, page.url, max_text_chars=settings.max_text_chars)


def _record(page: FetchedPage, *, skipped: str | None = None) -> PageRecord:
    return PageRecord(page.url, page.status, len(page.body), page.truncated, skipped=skipped)


def _status_of(reason: str) -> int:
    """The HTTP status named by a reason like ``http_404``, else 0 (no response)."""
    code = reason.removeprefix("http_")
    return int(code) if reason.startswith("http_") and code.isdigit() else 0


def _merge(
    final_url: str, extracts: list[PageExtract], pages: tuple[PageRecord, ...], settings: ScrapeSettings
) -> SiteScrape:
    home = extracts[0]

    def first(values: Iterable[str | None]) -> str | None:
        return next((value for value in values if value), None)

    emails = dict.fromkeys(email for extract in extracts for email in extract.emails)
    phones = dict.fromkeys(phone for extract in extracts for phone in extract.phones)
    social: dict[str, list[str]] = {}
    for extract in extracts:
        for network, link in extract.social_links:
            links = social.setdefault(network, [])
            if link not in links and len(links) < MAX_SOCIAL_LINKS_PER_NETWORK:
                links.append(link)
    text = TEXT_SEPARATOR.join(extract.text for extract in extracts if extract.text)
    return SiteScrape(
        final_url=final_url,
        title=home.title or first(extract.title for extract in extracts),
        description=home.description or first(extract.description for extract in extracts),
        language=home.language or first(extract.language for extract in extracts),
        emails=tuple(emails)[:MAX_EMAILS],
        phones=tuple(phones)[:MAX_PHONES],
        social_links={network: tuple(links) for network, links in social.items()},
        text=text[: settings.max_text_chars].rstrip(),
        pages=pages,
    )
