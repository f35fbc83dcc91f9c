"""Job makespan on the embedded AWS against the limit N*t/C, with our retry schedule and with the seed's.

The whole pipeline runs on loopback (``outreach_tools.localaws.pipeline.local_pipeline``: the applied local
root, the real zips, the pollers, the virtual clock). The web farm's sites answer every page after
a fixed delay, except 5 % that fail their first three home-page requests (one whole delivery) and
then answer: a transient failure only an SQS redelivery heals. Measured, all on the virtual clock:

- makespan: first task created to last task terminal, from the task rows' own timestamps;
- t: mean duration of the scraper's invocations (one site each), timed around the runtime's invoke;
- C: the scraper concurrency that actually ran (the runtime's peak in flight).

The limit is N*t/C; the figure is limit / makespan (1.0: no time lost beyond the work itself). The
same sites then run again as a second job on the same stack and clock with the seed's schedule,
every retry after the 90-minute visibility: ``RETRY_SCHEDULE_SECONDS=5400`` set on the scraper
through the Lambda API (the runtime starts new environments when a function's configuration changes).
"""

from __future__ import annotations

import tempfile
import threading
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from outreach_tools.bench.report import Figure, MeasurementError, Section
from outreach_tools.localaws.pipeline import TERMINAL, FollowTimeout, LocalPipeline, local_pipeline
from outreach_tools.localaws.runtime import InvocationResult
from outreach_tools.packaging import build_packages

TRANSIENT_EVERY = 20  # 5 % of the sites
# Every request to a transient site's home page fails until this many were made: one delivery's attempts.
FAILED_REQUESTS = 3
SEED_SCHEDULE = "5400"
TARGET = 0.8
OUR_IDLE_SKIP = 20.0
SEED_IDLE_SKIP = 120.0


@dataclass(frozen=True)
class Makespan:
    tasks: int
    makespan: float
    mean_latency: float
    concurrency: int
    invocations: int
    retried: int

    @property
    def limit(self) -> float:
        return self.tasks * self.mean_latency / self.concurrency

    @property
    def efficiency(self) -> float:
        return self.limit / self.makespan

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "limit": self.limit, "efficiency": self.efficiency}


def _epoch(iso: str) -> float:
    return datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC).timestamp()


def _time_invocations(stack: LocalPipeline, function: str) -> list[float]:
    """Wrap this runtime's ``invoke`` so each call of ``function`` records its virtual duration."""
    durations: list[float] = []
    lock = threading.Lock()
    invoke = stack.runtime.invoke

    def timed(name: str, event: Any) -> InvocationResult:
        began = stack.clock.now()
        try:
            return invoke(name, event)
        finally:
            if name.rsplit(":", 1)[-1] == function:
                with lock:
                    durations.append(stack.clock.now() - began)

    stack.runtime.invoke = timed  # type: ignore[method-assign,assignment]
    return durations


def _job(
    stack: LocalPipeline,
    job_id: str,
    scraper: str,
    durations: list[float],
    *,
    timeout: float,
    idle_skip: float,
) -> Makespan:
    stack.runtime.reset_peak(scraper)
    first = len(durations)
    creation = stack.create_job(job_id, stack.farm.urls())
    total = len(creation.created)
    try:
        counts = dict(stack.wait_terminal(job_id, timeout=timeout, idle_skip=idle_skip, interval=1.0).counts)
    except FollowTimeout as exc:
        counts = dict(exc.progress.counts)
    done = sum(counts.get(status, 0) for status in TERMINAL)
    if done < total:
        raise MeasurementError(
            f"{job_id}: {total - done} of {total} tasks not terminal after {timeout:.0f} s"
        )
    rows = stack.tasks(job_id)
    mine = durations[first:]
    concurrency = stack.runtime.stats[scraper].max_in_flight
    if len(rows) != total or not mine or concurrency < 1:
        raise MeasurementError(
            f"{job_id}: {len(rows)} rows, {len(mine)} timed invocations, concurrency {concurrency}"
        )
    started = min(_epoch(row["created_at"]) for row in rows)
    return Makespan(
        tasks=total,
        makespan=max(_epoch(row["updated_at"]) for row in rows) - started,
        mean_latency=sum(mine) / len(mine),
        concurrency=concurrency,
        invocations=len(mine),
        retried=sum(1 for row in rows if int(row.get("attempts", 0)) > 1),
    )


def _set_retry_schedule(stack: LocalPipeline, scraper: str, schedule: str) -> None:
    """Change the scraper's environment through the Lambda API and check the runtime reads it."""
    lambda_client = stack.client("lambda")
    current = lambda_client.get_function_configuration(FunctionName=scraper)
    variables = {**current.get("Environment", {}).get("Variables", {}), "RETRY_SCHEDULE_SECONDS": schedule}
    lambda_client.update_function_configuration(FunctionName=scraper, Environment={"Variables": variables})
    if stack.runtime.spec(scraper, fresh=True).environment.get("RETRY_SCHEDULE_SECONDS") != schedule:
        raise MeasurementError("the scraper's configuration did not take the seed's retry schedule")


def run_jobs(
    sites: int, package_dir: Path, *, slow_seconds: float, timeout: float
) -> tuple[Makespan, Makespan]:
    """The job with our schedule, then the same sites with the seed's, on one stack and clock."""
    # Every site answers each page after a fixed delay; every TRANSIENT_EVERY-th one is transient.
    farm = {"mix": (("slow", 1.0),), "burst_failures": FAILED_REQUESTS, "slow_seconds": slow_seconds}
    with local_pipeline(sites=sites, port=None, package_dir=package_dir, farm_options=farm) as stack:
        sites_list = stack.farm.sites
        for number in range(0, sites, TRANSIENT_EVERY):
            sites_list[number] = replace(sites_list[number], kind="burst")
        scraper = str(stack.pipeline["scraper_function_name"])
        durations = _time_invocations(stack, scraper)
        # While nothing runs, the clock jumps ahead by the idle skip per real second: short against our
        # 120 s retry, long against the seed's 90 minutes (the overshoot is at most one skip).
        ours = _job(stack, "bench-ours", scraper, durations, timeout=timeout, idle_skip=OUR_IDLE_SKIP)
        # The farm counts requests per path: the second job's transient sites must fail their first
        # delivery again, so the count starts over.
        with stack.farm._lock:
            stack.farm.hits.clear()
        _set_retry_schedule(stack, scraper, SEED_SCHEDULE)
        seed = _job(stack, "bench-seed", scraper, durations, timeout=timeout, idle_skip=SEED_IDLE_SKIP)
    return ours, seed


def run(sites: int, *, slow_seconds: float, timeout: float) -> Section:
    with tempfile.TemporaryDirectory(prefix="outreach-bench-dist-") as dist:
        build_packages(dist_dir=Path(dist))
        ours, seed = run_jobs(sites, Path(dist), slow_seconds=slow_seconds, timeout=timeout)
    section = Section(
        "makespan", details={"sites": sites, "ours": ours.as_dict(), "seed_schedule": seed.as_dict()}
    )
    section.add(
        Figure(
            f"{sites:,} sites: limit / makespan",
            ours.efficiency,
            "ratio",
            baseline=seed.efficiency,
            target=f">= {TARGET}",
            met=ours.efficiency >= TARGET,
        )
    )
    section.add(Figure("makespan (virtual s)", ours.makespan, "s", baseline=seed.makespan))
    section.add(Figure("limit N*t/C (virtual s)", ours.limit, "s", baseline=seed.limit))
    section.add(
        Figure("t: mean scraper invocation (virtual s)", ours.mean_latency, "s", baseline=seed.mean_latency)
    )
    section.add(
        Figure("C: scraper concurrency that ran", ours.concurrency, "invocations", baseline=seed.concurrency)
    )
    section.add(Figure("tasks retried", ours.retried, "tasks", baseline=seed.retried))
    return section
