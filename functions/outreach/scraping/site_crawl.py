"""Scrape one company site: the home page, then a few imprint / contact / about pages of the same site.

An extra page may also be on a parent domain of the site (``example.de/impressum`` for
``shop.example.de``): the same company.

Once the home page is read and robots.txt has been asked about every chosen extra page, the allowed
ones are fetched at once, at most ``connections_per_site`` at a time
(:mod:`outreach.scraping.page_fetches`), each with the same limits, address guard and deadline as
the home page. Their answers are recorded and merged in the order the pages were chosen, so the
result is the one fetching them one after another gives.

The home page decides the task: its fatal and retryable errors propagate unchanged. Extra pages are a
bonus: any error on one (fetching or extracting it) is recorded on its page record and the crawl goes
on, and no extra page is started once less than :data:`EXTRA_PAGE_MIN_SECONDS` remain before the
deadline. Parsing counts against the same deadline: a page is not parsed after it has passed.

An unexpected exception while decoding or extracting one page is ``FatalScrapeError("extract_error")``
naming the exception class: the page's bytes are what they are, and a retry parses them the same way.
With robots.txt respected (the default, :mod:`outreach.scraping.robots`), a disallowed home page is
``FatalScrapeError("robots_disallowed")`` and a disallowed extra page is skipped unfetched.
"""

from __future__ import annotations

import dataclasses
import ssl
import time
from collections.abc import Iterable

from outreach.config import ScrapeSettings
from outreach.errors import FatalScrapeError, RetryableScrapeError, ScrapeError
from outreach.scraping.address_guard import Resolver
from outreach.scraping.charset import decode_html
from outreach.scraping.contacts import FoundEmail, FoundPhone
from outreach.scraping.extract import CandidateLink, PageExtract, extract_page
from outreach.scraping.page_choice import KIND_PRIORITY
from outreach.scraping.page_fetches import PageFetches
from outreach.scraping.robots import MAX_ROBOTS_BYTES, RobotsRules
from outreach.scraping.safe_fetch import BACKOFF_BASE_SECONDS, FetchedPage, fetch_page
from outreach.scraping.site_scrape import PageRecord, SiteScrape
from outreach.scraping.site_urls import page_key, parse_http_url, same_company_site

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

    def fetch_robots(robots_url: str, robots_deadline: float) -> bytes:
        robots_settings = dataclasses.replace(settings, max_body_bytes=MAX_ROBOTS_BYTES, attempts_per_url=1)
        return fetch_page(
            robots_url,
            deadline=robots_deadline,
            settings=robots_settings,
            resolver=resolver,
            ssl_context=ssl_context,
            any_media_type=True,
        ).body

    robots = RobotsRules(settings.respect_robots_txt, settings.user_agent, fetch_robots, deadline)
    if not robots.allows(start):
        raise FatalScrapeError("robots_disallowed", f"robots.txt disallows {start}")
    home = fetch(str(start))
    home_target = parse_http_url(home.url)
    if not robots.allows(home_target):
        raise FatalScrapeError("robots_disallowed", f"robots.txt disallows {home_target}")
    home_extract = _extract(home, settings, deadline)
    site_targets = [start, home_target]
    seen = {page_key(start), page_key(home_target)}
    pages = [_record(home, extract=home_extract)]
    extracts = [home_extract]

    # robots.txt first (of the parent domain too), then the allowed pages fetched at once.
    planned: list[PageRecord | CandidateLink] = []
    for link in choose_extra_links(home_extract.candidate_links, settings.max_extra_pages, seen):
        if deadline - time.monotonic() < EXTRA_PAGE_MIN_SECONDS:
            break
        if robots.allows(parse_http_url(link.url)):
            planned.append(link)
        else:
            planned.append(PageRecord(link.url, 0, 0, False, skipped="robots_disallowed"))

    with PageFetches(
        fetch,
        connections=settings.connections_per_site,
        deadline=deadline,
        min_seconds=EXTRA_PAGE_MIN_SECONDS,
    ) as fetches:
        started = [item if isinstance(item, PageRecord) else fetches.start(item.url) for item in planned]
        for item in started:
            if isinstance(item, PageRecord):
                pages.append(item)
                continue
            try:
                page = item.result()
            except FatalScrapeError as exc:  # outcome: extra page skipped, recorded on its page record
                pages.append(PageRecord(item.url, _status_of(exc.reason), 0, False, skipped=exc.reason))
                continue
            except RetryableScrapeError as exc:  # outcome: extra page skipped, recorded on its page record
                reason = exc.reason
                pages.append(PageRecord(item.url, _status_of(reason), 0, False, skipped=reason))
                continue
            if page is None:  # the deadline came before it could start
                continue
            final = parse_http_url(page.url)
            if not any(same_company_site(final.canonical, known.canonical) for known in site_targets):
                pages.append(_record(page, skipped="off_site"))
                continue
            if page_key(final) in seen:
                pages.append(_record(page, skipped="duplicate"))
                continue
            seen.add(page_key(final))
            try:
                extract = _extract(page, settings, deadline, site_language=home_extract.language)
            except ScrapeError as exc:  # outcome: extra page skipped, recorded on its page record
                pages.append(_record(page, skipped=exc.reason))
                continue
            pages.append(_record(page, extract=extract))
            extracts.append(extract)

    return _merge(home.url, extracts, tuple(pages), settings, robots.record())


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


def _extract(
    page: FetchedPage, settings: ScrapeSettings, deadline: float, *, site_language: str | None = None
) -> PageExtract:
    """Decode and extract one page; any unexpected failure is the named fatal ``extract_error``."""
    if time.monotonic() >= deadline:
        raise RetryableScrapeError("deadline_exceeded", f"no time left to parse {page.url}")
    try:
        html = decode_html(page.body, page.charset)
        return extract_page(
            html, page.url, max_text_chars=settings.max_text_chars, site_language=site_language
        )
    except (ScrapeError, MemoryError):
        raise
    except Exception as exc:
        raise FatalScrapeError("extract_error", f"{type(exc).__name__} on {page.url}: {exc}") from exc


def _record(
    page: FetchedPage, *, skipped: str | None = None, extract: PageExtract | None = None
) -> PageRecord:
    return PageRecord(
        page.url,
        page.status,
        len(page.body),
        page.truncated,
        skipped=skipped,
        links_skipped=extract.skipped_links if extract is not None else 0,
        markup_cut=extract.markup_cut if extract is not None else None,
    )


def _status_of(reason: str) -> int:
    """The HTTP status named by a reason like ``http_404``, else 0 (no response)."""
    code = reason.removeprefix("http_")
    return int(code) if reason.startswith("http_") and code.isdigit() else 0


def _merge(
    final_url: str,
    extracts: list[PageExtract],
    pages: tuple[PageRecord, ...],
    settings: ScrapeSettings,
    robots: dict[str, object],
) -> SiteScrape:
    home = extracts[0]

    def first(values: Iterable[str | None]) -> str | None:
        return next((value for value in values if value), None)

    emails: dict[str, FoundEmail] = {}
    phones: dict[str, FoundPhone] = {}
    for extract in extracts:
        for email in extract.emails:
            emails.setdefault(email.address, email)
        for phone in extract.phones:
            phones.setdefault(phone.e164, phone)
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
        emails=tuple(emails.values())[:MAX_EMAILS],
        phones=tuple(phones.values())[:MAX_PHONES],
        social_links={network: tuple(links) for network, links in social.items()},
        text=text[: settings.max_text_chars].rstrip(),
        pages=pages,
        robots=robots,
    )
