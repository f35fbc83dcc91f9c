"""Two jobs at once on the embedded AWS: a small job started while a big one runs, against each alone.

The whole pipeline runs on loopback as in ``makespan`` (the applied local root, the real zips, the
pollers, the virtual clock, the web farm's sites answering after a fixed delay, 5 % of them failing
their first delivery), and the scrape queue shares its consumers between jobs as SQS fair queues do
(``embedded_aws.sqs_fair_queues``; every scrape message carries one of its job's tenants as its
``MessageGroupId``, ``outreach.scrape_tenants``: many for the small job, few for the big one).
On one stack and clock, after a warm-up job: the small job alone, the big job alone, then the big
job with the small one created once the big one has run for ``START_AFTER`` of its makespan alone.

- small: its makespan beside the big job against its makespan alone; target ``<= SMALL_TARGET``;
- big: its makespan beside the small job against its makespan alone plus the small job's work
  (N_small * t / C, t the mean scraper invocation of the small job alone, C the slots that ran);
  target ``<= BIG_TARGET``;
- the big job alone gets every slot: the most scrapers it had running at once against the slots
  (``LOCAL_SLOTS``); target ``>= 1``, so nothing that shares the slots between jobs may hold a lone
  job below them; beside it, its mean busy slots over the samples at which its messages waited;
- the timeline of the run together: busy slots and queue depth per job, retries marked.

A job's makespan is first task created to last task terminal, from its task rows.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from embedded_aws.pipeline import TERMINAL, FollowTimeoutError, LocalPipeline, local_pipeline
from outreach_dev.bench.makespan import (
    FAILED_REQUESTS,
    OUR_IDLE_SKIP,
    TRANSIENT_EVERY,
    _epoch,
    _run_to_terminal,
    recorded_invocations,
)
from outreach_dev.bench.report import Figure, MeasurementError, Section
from outreach_dev.bench.timeline import Timeline, recorded_timeline
from outreach_dev.packaging import build_packages

SMALL_TARGET = 1.5
BIG_TARGET = 1.1
START_AFTER = 0.25
TIMELINE_INTERVAL = 2.0
LOCAL_SLOTS = 16


@dataclass(frozen=True)
class JobRun:
    """One job's makespan and its scraper invocations (mean duration, slots that ran at most).

    ``busy_while_queued``: its busy slots at each timeline sample at which its messages waited.
    """

    tasks: int
    makespan: float
    mean_latency: float
    concurrency: int
    busy_while_queued: tuple[int, ...] = ()

    @property
    def work(self) -> float:
        """N * t / C: the job's share of the slots' time."""
        return self.tasks * self.mean_latency / self.concurrency


def _makespan(stack: LocalPipeline, job_id: str) -> float:
    rows = stack.tasks(job_id)
    if not rows:
        raise MeasurementError(f"{job_id}: no task rows")
    return max(_epoch(r["updated_at"]) for r in rows) - min(_epoch(r["created_at"]) for r in rows)


def _fresh_farm(stack: LocalPipeline) -> None:
    """Transient sites fail their first delivery again: the farm's request counts start over."""
    with stack.farm._lock:
        stack.farm.hits.clear()


def _alone(stack: LocalPipeline, job_id: str, urls: Sequence[str], *, timeout: float) -> JobRun:
    scraper = str(stack.pipeline["scraper_function_name"])
    _fresh_farm(stack)
    with (
        recorded_invocations(stack, scraper) as spans,
        recorded_timeline(stack, scraper, interval=TIMELINE_INTERVAL) as timeline,
    ):
        stack.runtime.reset_peak(scraper)
        total = _run_to_terminal(stack, job_id, urls, timeout=timeout, idle_skip=OUR_IDLE_SKIP)
        concurrency = stack.runtime.stats[scraper].max_in_flight
    if not spans or concurrency < 1:
        raise MeasurementError(f"{job_id}: {len(spans)} timed invocations, concurrency {concurrency}")
    mean = sum(s.end - s.begin for s in spans) / len(spans)
    busy = tuple(timeline.busy_while_queued(job_id))
    return JobRun(total, _makespan(stack, job_id), mean, concurrency, busy)


def _together(
    stack: LocalPipeline,
    big: Sequence[str],
    small: Sequence[str],
    *,
    start_small_after: float,
    timeout: float,
) -> tuple[float, float, Timeline]:
    """The big job, then the small one ``start_small_after`` virtual seconds later; both makespans."""
    scraper = str(stack.pipeline["scraper_function_name"])
    _fresh_farm(stack)
    with recorded_timeline(stack, scraper, interval=TIMELINE_INTERVAL) as timeline:
        began = stack.clock.now()
        total = len(stack.create_job("big-together", list(big)).created)
        deadline = time.monotonic() + timeout
        while stack.clock.now() < began + start_small_after:
            if time.monotonic() > deadline:
                raise MeasurementError("the big job did not run long enough to start the small one")
            time.sleep(0.05)
        _run_to_terminal(stack, "small-together", small, timeout=timeout, idle_skip=OUR_IDLE_SKIP)
        try:
            stack.wait_terminal("big-together", timeout=timeout, idle_skip=OUR_IDLE_SKIP, interval=1.0)
        except FollowTimeoutError as exc:
            raise MeasurementError(f"big-together: not terminal after {timeout:.0f} s: {exc}") from exc
        counts = stack.job_counts("big-together")
        if sum(counts.get(status, 0) for status in TERMINAL) < total:
            raise MeasurementError(f"big-together: {counts} of {total} tasks")
    return _makespan(stack, "big-together"), _makespan(stack, "small-together"), timeline


def run_jobs(
    big_sites: int, small_sites: int, package_dir: Path, *, slow_seconds: float, timeout: float
) -> dict[str, Any]:
    local_workers = LOCAL_SLOTS
    farm = {"mix": (("slow", 1.0),), "burst_failures": FAILED_REQUESTS, "slow_seconds": slow_seconds}
    with local_pipeline(
        sites=big_sites + small_sites + local_workers,
        port=None,
        package_dir=package_dir,
        farm_options=farm,
        local_workers=local_workers,
    ) as stack:
        sites = stack.farm.sites
        for first, count in ((0, big_sites), (big_sites, small_sites)):
            for number in range(first, first + count, TRANSIENT_EVERY):
                sites[number] = replace(sites[number], kind="burst")
        urls = stack.farm.urls()
        big, small = urls[:big_sites], urls[big_sites : big_sites + small_sites]
        warm = urls[big_sites + small_sites :]
        _run_to_terminal(stack, "two-jobs-warm-up", warm, timeout=timeout, idle_skip=OUR_IDLE_SKIP)
        small_alone = _alone(stack, "small-alone", small, timeout=timeout)
        big_alone = _alone(stack, "big-alone", big, timeout=timeout)
        big_together, small_together, timeline = _together(
            stack, big, small, start_small_after=START_AFTER * big_alone.makespan, timeout=timeout
        )
    return {
        "small_alone": small_alone,
        "big_alone": big_alone,
        "small_together": small_together,
        "big_together": big_together,
        "timeline": timeline,
        "slots": local_workers,
    }


def run(big_sites: int, small_sites: int, *, slow_seconds: float, timeout: float) -> Section:
    with tempfile.TemporaryDirectory(prefix="outreach-bench-dist-") as dist:
        build_packages(dist_dir=Path(dist))
        measured = run_jobs(big_sites, small_sites, Path(dist), slow_seconds=slow_seconds, timeout=timeout)
    return section(big_sites, small_sites, **measured)


def section(
    big_sites: int,
    small_sites: int,
    *,
    small_alone: JobRun,
    big_alone: JobRun,
    small_together: float,
    big_together: float,
    timeline: Timeline,
    slots: int,
) -> Section:
    small_ratio = small_together / small_alone.makespan
    big_bound = big_alone.makespan + small_sites * small_alone.mean_latency / big_alone.concurrency
    big_ratio = big_together / big_bound
    result = Section(
        "two jobs",
        details={
            "big_sites": big_sites,
            "small_sites": small_sites,
            "slots": slots,
            "slots_reached": big_alone.concurrency,
            "small_started_after": START_AFTER * big_alone.makespan,
            "small_alone": {**small_alone.__dict__, "work": small_alone.work},
            "big_alone": {**big_alone.__dict__, "work": big_alone.work},
            "small_together": small_together,
            "big_together": big_together,
            "big_alone_plus_small_work": big_bound,
            "mean_latency_together": {
                job: timeline.mean_invocation_seconds(job) for job in ("big-together", "small-together")
            },
            "scaled": (
                "3,000 and 300 sites on 140 slots scaled to the 16 local slots, keeping 10:1 and the "
                "sites per slot"
            ),
            "timeline": timeline.as_dict(),
        },
    )
    result.add(
        Figure(
            f"small job ({small_sites:,} sites) beside the big one / alone",
            small_ratio,
            "ratio",
            target=f"<= {SMALL_TARGET}",
            met=small_ratio <= SMALL_TARGET,
        )
    )
    result.add(
        Figure(
            f"big job ({big_sites:,} sites) beside the small one / (alone + small job's work)",
            big_ratio,
            "ratio",
            target=f"<= {BIG_TARGET}",
            met=big_ratio <= BIG_TARGET,
        )
    )
    if not big_alone.busy_while_queued:
        raise MeasurementError("big-alone: no timeline sample with its messages waiting")
    peak_share = big_alone.concurrency / slots
    result.add(
        Figure(
            f"big job alone: most scrapers running at once / slots ({slots})",
            peak_share,
            "ratio",
            target=">= 1",
            met=peak_share >= 1.0,
        )
    )
    mean_busy = sum(big_alone.busy_while_queued) / len(big_alone.busy_while_queued)
    result.add(
        Figure("big job alone: mean busy slots while its messages wait / slots", mean_busy / slots, "ratio")
    )
    result.add(Figure("small job makespan beside the big one (virtual s)", small_together, "s"))
    result.add(Figure("small job makespan alone (virtual s)", small_alone.makespan, "s"))
    result.add(Figure("big job makespan beside the small one (virtual s)", big_together, "s"))
    result.add(Figure("big job makespan alone (virtual s)", big_alone.makespan, "s"))
    return result
