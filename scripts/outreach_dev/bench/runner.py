"""Runs every benchmark at one size, prints one table and writes the results as JSON.

``python -m outreach_dev.bench`` runs the full size (``make bench``; ``BENCH_FULL=1`` makes the
makespan job 3,575 sites), ``--smoke`` each benchmark at a tiny size (``make bench-smoke``). A
benchmark that raises is reported as not measured and the run exits 1; nothing is filled in for it.
The handlers' log and metric lines go to stdout; while the benchmarks run, stdout is sent to
``/dev/null`` (to the file ``--log`` names, if any) so that the table is all the run prints.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import platform
import sys
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
    makespan,
    operator_commands,
    reconciler_scaling,
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
    # Recipients of the two-step campaign the operator's commands run on (3,600: 7,200 emails).
    campaign_recipients: int = 3_600


FULL = Sizes(1_000, 20, (1_000, 10_000, 100_000), 1_000, 7, 60, 15, 7, 1_000)
SMOKE = replace(Sizes(6, 2, (30, 120), 40, 3, 3, 3, 1, 0), campaign_recipients=5)
# BENCH_FULL=1: the makespan job is the seed's spike of 3,575 sites.
FULL_SPIKE = replace(FULL, makespan_sites=3_575)
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


def _attempt(name: str, build: Callable[[], list[Section]]) -> list[Section]:
    began = time.perf_counter()
    try:
        sections = build()
    except Exception as exc:
        sys.stderr.write(f"bench: {name} not measured\n{traceback.format_exc()}")
        return [Section(name, error=f"{type(exc).__name__}: {exc}")]
    sys.stderr.write(f"bench: {name} measured in {time.perf_counter() - began:.0f} s\n")
    return sections


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
    sections += _attempt(
        "extraction", lambda: [extraction.run(sizes.extraction_sites, sizes.extraction_repeats)]
    )
    sections += _attempt("cold start", lambda: [cold_start.run(sizes.cold_start_runs)])
    sections += _attempt("operator commands", lambda: [operator_commands.run(sizes.campaign_recipients)])
    if sizes.makespan_sites:
        timeout = 60.0 + sizes.makespan_sites * 2.0
        sections += _attempt(
            "makespan",
            lambda: [makespan.run(sizes.makespan_sites, slow_seconds=PAGE_SECONDS, timeout=timeout)],
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
    missing = failed(sections)
    if missing:
        print(f"not measured: {', '.join(missing)}", file=sys.stderr)
        return 1
    return 0
