"""Where ``extract_page``'s time goes: its share per phase, on each corpus of the extraction bench.

Each phase is a name ``outreach.scraping.extract`` calls (the markup bound check, the parser, link
resolution, page choice, social links, e-mail and phone search); for the run, each is wrapped in a
timer (a generator's time is the time spent producing its items) and whatever ``extract_page`` spends
outside them (tree queries, visible text, metadata) is "rest". Each page runs ``repeats`` times and
each of its phases counts with its median over those runs (a run the machine's load interrupted
does not skew it); the page's medians are summed over the corpus. The wrappers cost a few hundred
nanoseconds per call, so the figures are those of the timed run, a little above the bench's own.

``python -m outreach_dev.bench.extraction_phases [--sites N] [--real-size-pages N] [--repeats N]``
prints one table per corpus (docs/performance.md's extraction profile).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import outreach.scraping.extract as extract_module
from outreach_dev.bench.extraction import MAX_TEXT_CHARS, REAL_SIZE_PAGES, Page, corpora

# Phase name -> the names in outreach.scraping.extract it covers (those that exist are timed).
PHASES: dict[str, tuple[str, ...]] = {
    "markup bound check": ("bound_markup",),
    "parse": ("LexborHTMLParser",),
    "links: resolve and canonicalise": ("_resolve", "_base_url", "parse_http_url", "canonical_http_url"),
    "links: page choice": ("_candidate_links",),
    "links: social": ("_social_links",),
    "emails": ("find_emails",),
    "phones": ("find_phones",),
}
REST = "rest (tree queries, text, metadata)"


class _Clock:
    def __init__(self) -> None:
        self.seconds: defaultdict[str, float] = defaultdict(float)

    def timed(self, phase: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            result = function(*args, **kwargs)
            self.seconds[phase] += time.perf_counter() - began
            if isinstance(result, Iterator):
                return self._timed_items(phase, result)
            return result

        return wrapper

    def _timed_items(self, phase: str, items: Iterator[Any]) -> Iterator[Any]:
        while True:
            began = time.perf_counter()
            try:
                item = next(items)
            except StopIteration:
                self.seconds[phase] += time.perf_counter() - began
                return
            self.seconds[phase] += time.perf_counter() - began
            yield item


@contextmanager
def _phases_timed(clock: _Clock) -> Iterator[None]:
    saved: dict[str, Any] = {}
    for phase, names in PHASES.items():
        for name in names:
            if hasattr(extract_module, name):
                saved[name] = getattr(extract_module, name)
                setattr(extract_module, name, clock.timed(phase, saved[name]))
    try:
        yield
    finally:
        for name, original in saved.items():
            setattr(extract_module, name, original)


def profile(pages: Sequence[Page], repeats: int) -> dict[str, float]:
    """Seconds per phase (and ``REST``, and ``total``): per page the median of ``repeats`` runs, summed."""
    clock = _Clock()
    summed: defaultdict[str, float] = defaultdict(float)
    with _phases_timed(clock):
        for _, url, html in pages:
            runs: defaultdict[str, list[float]] = defaultdict(list)
            for _ in range(repeats):
                clock.seconds.clear()
                began = time.perf_counter()
                extract_module.extract_page(html, url, max_text_chars=MAX_TEXT_CHARS)
                total = time.perf_counter() - began
                for phase in PHASES:
                    runs[phase].append(clock.seconds.get(phase, 0.0))
                runs[REST].append(total - sum(clock.seconds.values()))
                runs["total"].append(total)
            for phase, values in runs.items():
                summed[phase] += statistics.median(values)
    return dict(summed)


def render(corpus: str, seconds: dict[str, float], pages: int, repeats: int) -> str:
    parts = sum(seconds.get(phase, 0.0) for phase in [*PHASES, REST])
    lines = [
        f"{corpus}: {pages} pages, median of {repeats} runs each: "
        f"{seconds['total'] / pages * 1e6:.0f} us a page",
        "",
    ]
    lines += ["| phase | share | us a page |", "|---|---:|---:|"]
    for phase in [*PHASES, REST]:
        value = seconds.get(phase, 0.0)
        lines.append(f"| {phase} | {value / parts:.0%} | {value / pages * 1e6:.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sites", type=int, default=60)
    parser.add_argument("--real-size-pages", type=int, default=REAL_SIZE_PAGES)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    for corpus, pages in corpora(args.sites, args.real_size_pages).items():
        profile(pages, 1)  # warm-up: caches of hosts and suffixes, as after a site's first page
        print(render(corpus, profile(pages, args.repeats), len(pages), args.repeats), end="\n\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
