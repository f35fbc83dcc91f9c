"""Runs every benchmark at one size, prints one table and writes the results as JSON.

``python -m outreach_dev.bench`` runs the full size (``make bench``; ``BENCH_FULL=1`` runs the
makespan job at 3,575 sites too, after the one of 1,000), ``--smoke`` each benchmark at a tiny size
(``make bench-smoke``). A benchmark that raises is reported as not measured and the run exits 1;
nothing is filled in for it. The handlers' log and metric lines go to stdout; while the benchmarks
run, stdout is sent to ``/dev/null`` (to the file ``--log`` names, if any) so that the table is all
the run prints.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import platform
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from outreach_dev.bench import (
    calls_per_task,
    cold_start,
    cost_per_thousand,
    dispatcher_overhead,
    extraction,
    index_hot_spot,
    large_job,
    makespan,
    operator_commands,
    operator_lookups,
    plots,
    reconciler_scaling,
    sharded_creation,
    site_fetch,
    two_jobs,
)
from outreach_dev.bench.cost_model import PriceTable
from outreach_dev.bench.report import Section, failed, render

RESULTS = Path(__file__).resolve().parents[3] / "bench" / "results.json"


@dataclass(frozen=True)
class Sizes:
    tasks: int
    retry_tasks: int
    reconciler_tables: tuple[int, ...]
    dispatch_records: int
    dispatch_repeats: int
    extraction_sites: int
    extraction_repeats: int
    cold_start_runs: int
    makespan_sites: int  # 0: not run at this size
    # Pages of real size the extraction bench generates (embedded_aws.site_builder_pages).
    extraction_real_size_pages: int = 200
    # Slow sites scraped one by one and at once (site_fetch); None: the web farm's own page delay.
    site_fetch_sites: int = 12
    site_fetch_page_seconds: float | None = None
    # A second makespan job at this size after the first (0: none).
    makespan_spike_sites: int = 0
    sharded_creation_tasks: int = 100_000  # one job created unsharded, then over the shards
    large_job_sites: int = 100_000  # a job through creation and dispatch on the embedded AWS
    # The two-job run: 3,000 and 300 sites on 140 slots, scaled to the 16 local ones (0: not run).
    two_jobs_big: int = 343
    two_jobs_small: int = 34
    # Recipients of the two-step campaign the operator's commands run on (3,600: 7,200 emails).
    campaign_recipients: int = 3_600
    # Sites of the finished job ``job status`` reads (a fifth failed), and so of the ledger's size.
    lookup_job_sites: int = 3_575
    # The functions whose cold start is measured (None: every one; each is a build, two unpacked
    # trees, a compile and imports in fresh interpreters).
    cold_start_functions: tuple[str, ...] | None = None


FULL = Sizes(1_000, 20, (1_000, 10_000, 100_000), 1_000, 7, 60, 15, 7, 1_000)
SMOKE = replace(
    Sizes(6, 2, (30, 120), 40, 3, 3, 3, 1, 0),
    extraction_real_size_pages=6,
    site_fetch_sites=2,
    site_fetch_page_seconds=0.05,
    sharded_creation_tasks=100,
    large_job_sites=50,
    two_jobs_big=0,
    two_jobs_small=0,
    campaign_recipients=5,
    lookup_job_sites=40,
    cold_start_functions=("dispatcher",),
)
# BENCH_FULL=1: a second makespan job, the seed's spike of 3,575 sites (docs/performance.md: its cost).
FULL_SPIKE = replace(FULL, makespan_spike_sites=3_575)
# Seconds each page of a farm site takes to answer (real time; x10 on the virtual clock).
PAGE_SECONDS = 0.1


@contextlib.contextmanager
def _quiet_stdout(log: Path | None) -> Iterator[None]:
    """Point file descriptor 1 elsewhere (the handlers' loggers hold the original stream object)."""
    sys.stdout.flush()
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
    saved = os.dup(1)
    target = os.open(str(log) if log else os.devnull, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(target, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        os.close(target)


def _empty_emulator() -> None:
    """Forget every resource moto holds in this process. A section's stack (the embedded AWS's server
    runs moto in-process) outlives its server, so the next section's ``terraform apply`` of the same
    local root would find its table, roles and aliases already there and fail."""
    from moto.moto_api._internal.models import moto_api_backend

    moto_api_backend.reset()


def _attempt(name: str, build: Callable[[], list[Section]]) -> list[Section]:
    began = time.perf_counter()
    try:
        sections = build()
    except Exception as exc:
        sys.stderr.write(f"bench: {name} not measured\n{traceback.format_exc()}")
        return [Section(name, error=f"{type(exc).__name__}: {exc}")]
    finally:
        _empty_emulator()
    sys.stderr.write(f"bench: {name} measured in {time.perf_counter() - began:.0f} s\n")
    return sections


def _makespan(sites: int) -> Callable[[], list[Section]]:
    timeout = 60.0 + sites * 2.0
    return lambda: [makespan.run(sites, slow_seconds=PAGE_SECONDS, timeout=timeout)]


def run_all(sizes: Sizes) -> list[Section]:
    sections: list[Section] = []
    job: list[calls_per_task.JobCalls] = []

    def calls_and_cost() -> list[Section]:
        job.append(calls_per_task.measure(sizes.tasks, sizes.retry_tasks))
        return [
            cost_per_thousand.calls_section(job[0]),
            cost_per_thousand.cost_section(job[0], PriceTable.load()),
        ]

    sections += _attempt("calls per task", calls_and_cost)

    def hot_spot() -> list[Section]:
        if not job:
            raise RuntimeError("the job creation it rates was not measured")
        creation = job[0].phases["job creation"]
        return [index_hot_spot.section(creation.tasks, sum(creation.handler_seconds))]

    sections += _attempt("index hot spot", hot_spot)
    sections += _attempt(
        "dispatcher overhead",
        lambda: [dispatcher_overhead.run(sizes.dispatch_records, sizes.dispatch_repeats)],
    )
    sections += _attempt("reconciler scaling", lambda: [reconciler_scaling.run(sizes.reconciler_tables)])
    sections += _attempt("sharded creation", lambda: [sharded_creation.run(sizes.sharded_creation_tasks)])
    sections += _attempt("large job", lambda: [large_job.run(sizes.large_job_sites)])
    sections += _attempt(
        "extraction",
        lambda: [
            extraction.run(sizes.extraction_sites, sizes.extraction_repeats, sizes.extraction_real_size_pages)
        ],
    )
    sections += _attempt(
        "cold start", lambda: [cold_start.run(sizes.cold_start_runs, sizes.cold_start_functions)]
    )
    sections += _attempt("operator commands", lambda: [operator_commands.run(sizes.campaign_recipients)])
    sections += _attempt("operator look-ups", lambda: [operator_lookups.run(sizes.lookup_job_sites)])
    sections += _attempt(
        "site fetch",
        lambda: [site_fetch.run(sizes.site_fetch_sites, slow_seconds=sizes.site_fetch_page_seconds)],
    )
    for makespan_sites in (sizes.makespan_sites, sizes.makespan_spike_sites):
        if makespan_sites:
            sections += _attempt(f"makespan {makespan_sites:,}", _makespan(makespan_sites))
    if sizes.two_jobs_big:
        big, small = sizes.two_jobs_big, sizes.two_jobs_small
        sections += _attempt(
            "two jobs",
            lambda: [two_jobs.run(big, small, slow_seconds=PAGE_SECONDS, timeout=60.0 + (big + small) * 4.0)],
        )
    return sections


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--smoke", action="store_true", help="each benchmark at a tiny size")
    parser.add_argument("--output", type=Path, default=None, help=f"results JSON (full run: {RESULTS})")
    parser.add_argument("--log", type=Path, default=None, help="where the handlers' own output goes")
    args = parser.parse_args(argv)
    # The embedded AWS's clients share small connection pools across threads; their warnings are noise.
    logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)
    sizes = SMOKE if args.smoke else FULL_SPIKE if os.environ.get("BENCH_FULL") == "1" else FULL
    output = args.output if args.output is not None else (None if args.smoke else RESULTS)
    began = time.perf_counter()
    with _quiet_stdout(args.log):
        sections = run_all(sizes)
    elapsed = time.perf_counter() - began
    print(render(sections))
    print(
        f"\n{len(sections)} sections in {elapsed:.0f} s on {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}"
    )
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        document = {
            "size": "smoke" if args.smoke else "full",
            "measured_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "seconds": elapsed,
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
            "sizes": asdict(sizes),
            "sections": [section.as_dict() for section in sections],
        }
        output.write_text(json.dumps(document, indent=2, default=list) + "\n")
        if not args.smoke:
            for picture in plots.draw_sections(sections, output.parent):
                print(f"drew {picture}")
    if args.smoke:
        with tempfile.TemporaryDirectory(prefix="outreach-bench-plots-") as scratch:
            plots.drawing_works(Path(scratch))
    missing = failed(sections)
    if missing:
        print(f"not measured: {', '.join(missing)}", file=sys.stderr)
        return 1
    return 0
