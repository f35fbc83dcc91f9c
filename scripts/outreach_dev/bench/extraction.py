"""Extraction time per page against a bare parse-and-get-text of the same page, median and p95.

Pages: the web farm's HTML pages (home, imprint, contact, about of its sites, the oversized page
included) and the HTML fixtures under ``tests/fixtures/html`` (read as data). Each page is decoded
once; then ``extract_page`` and the baseline (lexbor parse, ``text()`` of the document) each run
``repeats`` times, alternating, and the page's figure is the ratio of the two medians.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser

from embedded_aws.webfarm import WebFarm
from outreach.scraping.charset import decode_html
from outreach.scraping.extract import extract_page
from outreach_dev.bench.report import Figure, MeasurementError, Section

FIXTURES = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "html"
FARM_PAGES = ("home", "impressum", "kontakt", "about")
MAX_TEXT_CHARS = 20_000


def pages(sites: int) -> list[tuple[str, str]]:
    """(name, decoded HTML) of every HTML page of ``sites`` farm sites and of the fixtures."""
    farm = WebFarm(sites)
    found: list[tuple[str, str]] = []
    for site in farm.sites:
        for page in FARM_PAGES:
            status, content_type, body, _ = farm.page(site, page)
            if status == 200 and content_type.startswith("text/html"):
                found.append((f"site-{site.number}/{page} ({site.kind})", decode_html(body, "utf-8")))
    found.extend((path.name, decode_html(path.read_bytes())) for path in sorted(FIXTURES.glob("*.html")))
    return found


def _median_seconds(action: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        action()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def _bare(html: str) -> str:
    return LexborHTMLParser(html).text()


def run(sites: int, repeats: int) -> Section:
    ratios: list[float] = []
    ours_times: list[float] = []
    bare_times: list[float] = []
    for name, html in pages(sites):
        url = f"http://127.0.0.1/{name.split(' ', 1)[0]}"
        ours = _median_seconds(partial(extract_page, html, url, max_text_chars=MAX_TEXT_CHARS), repeats)
        bare = _median_seconds(partial(_bare, html), repeats)
        if bare <= 0:
            raise MeasurementError(f"{name}: the bare parse took no measurable time")
        ratios.append(ours / bare)
        ours_times.append(ours)
        bare_times.append(bare)
    if len(ratios) < 2:
        raise MeasurementError("fewer than two pages to measure")
    p95 = statistics.quantiles(ratios, n=20, method="inclusive")[-1]
    section = Section("extraction", details={"pages": len(ratios), "repeats": repeats})
    section.add(
        Figure(
            "per page, median (us)",
            statistics.median(ours_times) * 1e6,
            "us",
            baseline=statistics.median(bare_times) * 1e6,
        )
    )
    section.add(Figure("ratio to bare parse, median over pages", statistics.median(ratios), "x"))
    section.add(Figure("ratio to bare parse, p95 over pages", p95, "x"))
    return section
