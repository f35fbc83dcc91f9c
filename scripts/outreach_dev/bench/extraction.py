"""Extraction time per page against a bare parse-and-get-text of the same page, median and p95.

Three corpora, each with its own rows: the web farm's HTML pages (home, imprint, contact, about of its
sites, the oversized page included), the HTML fixtures under ``tests/fixtures/html`` (read as data),
and pages of real size in the shapes of the common site builders (30-500 KB, 500-3,000 tags,
100-400 links; :mod:`embedded_aws.site_builder_pages`). Each page is decoded once; then
``extract_page`` and the baseline (lexbor parse, ``text()`` of the document) each run ``repeats``
times, and the page's figure is the ratio of the two medians. Targets (issue 46): on the real-size
pages the ratio at most :data:`REAL_SIZE_TARGETS` at the median over the corpus's pages and at its
p95; on the farm pages and the fixtures, :data:`SMALL_PAGE_TARGETS`.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser

from embedded_aws.site_builder_pages import site_builder_pages
from embedded_aws.webfarm import WebFarm
from outreach.scraping.charset import decode_html
from outreach.scraping.extract import extract_page
from outreach_dev.bench.report import Figure, MeasurementError, Section

FIXTURES = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "html"
FARM_PAGES = ("home", "impressum", "kontakt", "about")
MAX_TEXT_CHARS = 20_000
FARM = "farm pages"
FIXTURE_PAGES = "tests/fixtures/html"
REAL_SIZE = "real-size pages"
REAL_SIZE_PAGES = 200
# (median, p95) of the ratio to a bare parse.
SMALL_PAGE_TARGETS = (6.0, 15.0)
REAL_SIZE_TARGETS = (4.0, 8.0)
TARGETS = {FARM: SMALL_PAGE_TARGETS, FIXTURE_PAGES: SMALL_PAGE_TARGETS, REAL_SIZE: REAL_SIZE_TARGETS}
# What bounds the ratio from below (docs/performance.md, "Extraction").
LIMITS = (
    "farm pages and fixtures are small (200-360 characters, 0.3-2.8 KB): a bare parse takes 10-40 us, "
    "while each phone number candidate costs phonenumbers (pure Python) about 60 us to parse and "
    "validate (a farm imprint has one, a fixture up to 15), and the e-mail and phone searches over the "
    "visible text, the page URL's canonical form and the result about 40 us a page more; on real-size "
    "pages the markup bound walk, which must run before the parse, is a Python step per tag: 10-11x "
    "a bare parse by itself on 4,300 '<' (iterating the tags alone costs 1.1-1.3x)"
)


Page = tuple[str, str, str]  # name, page URL, decoded HTML


def corpora(sites: int, real_size_pages: int = REAL_SIZE_PAGES) -> dict[str, list[Page]]:
    """Per corpus, (name, URL, decoded HTML) of every HTML page of ``sites`` farm sites, of the
    fixtures and of ``real_size_pages`` site builders' pages."""
    farm = WebFarm(sites)
    found: list[Page] = []
    for site in farm.sites:
        for page in FARM_PAGES:
            status, content_type, body, _ = farm.page(site, page)
            if status == 200 and content_type.startswith("text/html"):
                name = f"site-{site.number}/{page} ({site.kind})"
                found.append(
                    (name, f"http://127.0.0.1/site-{site.number}/{page}", decode_html(body, "utf-8"))
                )
    fixtures = [
        (path.name, f"http://127.0.0.1/{path.name}", decode_html(path.read_bytes()))
        for path in sorted(FIXTURES.glob("*.html"))
    ]
    return {FARM: found, FIXTURE_PAGES: fixtures, REAL_SIZE: site_builder_pages(real_size_pages)}


def _median_seconds(action: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        action()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def _bare(html: str) -> str:
    return LexborHTMLParser(html).text()


def _ratios(pages: list[Page], repeats: int) -> tuple[list[float], list[float], list[float]]:
    """Per page: the ratio of the medians, extract_page's median and the bare parse's median."""
    ratios: list[float] = []
    ours_times: list[float] = []
    bare_times: list[float] = []
    for name, url, html in pages:
        ours = _median_seconds(partial(extract_page, html, url, max_text_chars=MAX_TEXT_CHARS), repeats)
        bare = _median_seconds(partial(_bare, html), repeats)
        if bare <= 0:
            raise MeasurementError(f"{name}: the bare parse took no measurable time")
        ratios.append(ours / bare)
        ours_times.append(ours)
        bare_times.append(bare)
    if len(ratios) < 2:
        raise MeasurementError("fewer than two pages to measure")
    return ratios, ours_times, bare_times


def run(sites: int, repeats: int, real_size_pages: int = REAL_SIZE_PAGES) -> Section:
    section = Section("extraction", details={"repeats": repeats, "limits": LIMITS})
    for corpus, pages in corpora(sites, real_size_pages).items():
        median_target, p95_target = TARGETS[corpus]
        ratios, ours_times, bare_times = _ratios(pages, repeats)
        median = statistics.median(ratios)
        p95 = statistics.quantiles(ratios, n=20, method="inclusive")[-1]
        section.details[f"{corpus}: pages"] = len(ratios)
        section.add(
            Figure(
                f"{corpus}: per page, median (us)",
                statistics.median(ours_times) * 1e6,
                "us",
                baseline=statistics.median(bare_times) * 1e6,
            )
        )
        section.add(
            Figure(
                f"{corpus}: ratio to bare parse, median over pages",
                median,
                "x",
                target=f"<= {median_target:g}x",
                met=median <= median_target,
            )
        )
        section.add(
            Figure(
                f"{corpus}: ratio to bare parse, p95 over pages",
                p95,
                "x",
                target=f"<= {p95_target:g}x",
                met=p95 <= p95_target,
            )
        )
    return section
