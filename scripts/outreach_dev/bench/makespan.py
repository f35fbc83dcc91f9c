"""Job makespan on the embedded AWS against the limit N*t/C, with our retry schedule and with the seed's.

The whole pipeline runs on loopback (``embedded_aws.pipeline.local_pipeline``: the applied local
root, the real zips, the pollers, the virtual clock). The web farm's sites answer every page after
a fixed delay, except 5 % that fail their first three home-page requests (one whole delivery) and
then answer: a transient failure only an SQS redelivery heals. Before each measured job a warm-up
job of one site per local worker starts the functions' environments, so the job runs on a warm
pipeline (the local cold start, every worker's interpreter started at once on the machine's cores,
is not Lambda's; ``cold_start.py`` measures the import). Measured, all on the virtual clock:

- makespan: first task created to last task terminal, from the task rows' own timestamps;
- t: mean duration of the scraper's invocations (one site each), timed around the runtime's invoke;
- C: the scraper concurrency that actually ran (the runtime's peak in flight);
- where the time over the limit went, by phase (``makespan_phases``);
- its timeline: busy slots and queue depth over virtual time, retries marked (``timeline``).

The limit is N*t/C; the figure is limit / makespan (1.0: no time lost beyond the work itself). The
same sites then run again as a second job on the same stack and clock with the seed's schedule,
every retry after the 90-minute visibility: ``RETRY_SCHEDULE_SECONDS=5400`` set on the scraper
through the Lambda API (the runtime starts new environments when a function's configuration changes).
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from embedded_aws.pipeline import TERMINAL, FollowTimeoutError, LocalPipeline, local_pipeline
from embedded_aws.runtime import InvocationResult
from outreach_dev.bench.makespan_phases import Phases, Span, split
from outreach_dev.bench.report import Figure, MeasurementError, Section
from outreach_dev.bench.timeline import Timeline, recorded_timeline
from outreach_dev.packaging import build_packages

TRANSIENT_EVERY = 20  # 5 % of the sites
# Every request to a transient site's home page fails until this many were made: one delivery's attempts.
FAILED_REQUESTS = 3
SEED_SCHEDULE = "5400"
TARGET = 0.9
# While nothing runs, the clock jumps ahead by the idle skip per settled real second. A retry that
# comes due during a jump is received at its end: at most one skip late. Short against our first
# retry, long enough to cross the seed's 90 minutes in well under a minute of wall time.
OUR_IDLE_SKIP = 5.0
SEED_IDLE_SKIP = 120.0


@dataclass(frozen=True)
class Makespan:
    tasks: int
    makespan: float
    mean_latency: float
    concurrency: int
    invocations: int
    retried: int
    phases: Phases
    timeline: Timeline | None = None

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


def _receive_count(event: Any) -> int:
    records = event.get("Records", []) if isinstance(event, dict) else []
    counts = [int(r.get("attributes", {}).get("ApproximateReceiveCount", 1)) for r in records]
    return max(counts, default=1)


@contextlib.contextmanager
def recorded_invocations(stack: LocalPipeline, function: str) -> Iterator[list[Span]]:
    """While open, every invocation of ``function`` on this runtime is recorded as a virtual-time span."""
    spans: list[Span] = []
    lock = threading.Lock()
    already_wrapped = "invoke" in vars(stack.runtime)
    invoke = stack.runtime.invoke

    def timed(name: str, event: Any) -> InvocationResult:
        began = stack.clock.now()
        try:
            return invoke(name, event)
        finally:
            if name.rsplit(":", 1)[-1] == function:
                with lock:
                    spans.append(Span(began, stack.clock.now(), _receive_count(event)))

    stack.runtime.invoke = timed  # type: ignore[method-assign,assignment]
    try:
        yield spans
    finally:
        if already_wrapped:
            stack.runtime.invoke = invoke  # type: ignore[method-assign]
        else:
            del stack.runtime.invoke


def _run_to_terminal(
    stack: LocalPipeline, job_id: str, urls: Sequence[str], *, timeout: float, idle_skip: float
) -> int:
    total = len(stack.create_job(job_id, list(urls)).created)
    try:
        counts = dict(stack.wait_terminal(job_id, timeout=timeout, idle_skip=idle_skip, interval=1.0).counts)
    except FollowTimeoutError as exc:
        counts = dict(exc.progress.counts)
    done = sum(counts.get(status, 0) for status in TERMINAL)
    if done < total:
        raise MeasurementError(
            f"{job_id}: {total - done} of {total} tasks not terminal after {timeout:.0f} s"
        )
    return total


def measure_job(
    stack: LocalPipeline,
    job_id: str,
    urls: Sequence[str],
    *,
    warm_urls: Sequence[str],
    timeout: float,
    idle_skip: float,
) -> Makespan:
    """Warm the functions with a job of ``warm_urls``, then run and measure the job of ``urls``."""
    scraper = str(stack.pipeline["scraper_function_name"])
    if warm_urls:
        _run_to_terminal(stack, f"{job_id}-warm-up", warm_urls, timeout=timeout, idle_skip=idle_skip)
    with recorded_invocations(stack, scraper) as spans, recorded_timeline(stack, scraper) as timeline:
        stack.runtime.reset_peak(scraper)
        total = _run_to_terminal(stack, job_id, urls, timeout=timeout, idle_skip=idle_skip)
        concurrency = stack.runtime.stats[scraper].max_in_flight
    rows = stack.tasks(job_id)
    if len(rows) != total or not spans or concurrency < 1:
        raise MeasurementError(
            f"{job_id}: {len(rows)} rows, {len(spans)} timed invocations, concurrency {concurrency}"
        )
    start = min(_epoch(row["created_at"]) for row in rows)
    end = max(_epoch(row["updated_at"]) for row in rows)
    mean_latency = sum(s.end - s.begin for s in spans) / len(spans)
    return Makespan(
        tasks=total,
        makespan=end - start,
        mean_latency=mean_latency,
        concurrency=concurrency,
        invocations=len(spans),
        retried=sum(1 for row in rows if int(row.get("attempts", 0)) > 1),
        phases=split(
            spans, start=start, end=end, tasks=total, mean_latency=mean_latency, concurrency=concurrency
        ),
        timeline=timeline,
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
    sites: int, package_dir: Path, *, slow_seconds: float, timeout: float, local_workers: int = 16
) -> tuple[Makespan, Makespan]:
    """The job with our schedule, then the same sites with the seed's, on one stack and clock."""
    # Every site answers each page after a fixed delay; every TRANSIENT_EVERY-th one is transient.
    # One more site per local worker, after the measured ones, serves the warm-up jobs.
    farm = {"mix": (("slow", 1.0),), "burst_failures": FAILED_REQUESTS, "slow_seconds": slow_seconds}
    with local_pipeline(
        sites=sites + local_workers,
        port=None,
        package_dir=package_dir,
        farm_options=farm,
        local_workers=local_workers,
    ) as stack:
        sites_list = stack.farm.sites
        for number in range(0, sites, TRANSIENT_EVERY):
            sites_list[number] = replace(sites_list[number], kind="burst")
        urls = stack.farm.urls()
        job, warm = urls[:sites], urls[sites:]
        scraper = str(stack.pipeline["scraper_function_name"])
        ours = measure_job(stack, "bench-ours", job, warm_urls=warm, timeout=timeout, idle_skip=OUR_IDLE_SKIP)
        # The farm counts requests per path: the second job's transient sites must fail their first
        # delivery again, so the count starts over.
        with stack.farm._lock:
            stack.farm.hits.clear()
        _set_retry_schedule(stack, scraper, SEED_SCHEDULE)
        seed = measure_job(
            stack, "bench-seed", job, warm_urls=warm, timeout=timeout, idle_skip=SEED_IDLE_SKIP
        )
    return ours, seed


def run(sites: int, *, slow_seconds: float, timeout: float) -> Section:
    with tempfile.TemporaryDirectory(prefix="outreach-bench-dist-") as dist:
        build_packages(dist_dir=Path(dist))
        ours, seed = run_jobs(sites, Path(dist), slow_seconds=slow_seconds, timeout=timeout)
    return section(sites, ours, seed)


def section(sites: int, ours: Makespan, seed: Makespan) -> Section:
    """The table's rows: the figure against its target, then what makes it up, ours beside the seed's."""
    result = Section(
        "makespan", details={"sites": sites, "ours": ours.as_dict(), "seed_schedule": seed.as_dict()}
    )
    result.add(
        Figure(
            f"{sites:,} sites: limit / makespan",
            ours.efficiency,
            "ratio",
            baseline=seed.efficiency,
            target=f">= {TARGET}",
            met=ours.efficiency >= TARGET,
        )
    )
    result.add(Figure("makespan (virtual s)", ours.makespan, "s", baseline=seed.makespan))
    result.add(Figure("limit N*t/C (virtual s)", ours.limit, "s", baseline=seed.limit))
    result.add(
        Figure("t: mean scraper invocation (virtual s)", ours.mean_latency, "s", baseline=seed.mean_latency)
    )
    result.add(
        Figure("C: scraper concurrency that ran", ours.concurrency, "invocations", baseline=seed.concurrency)
    )
    result.add(Figure("tasks retried", ours.retried, "tasks", baseline=seed.retried))
    over = (
        ("over the limit: before the first scrape", "before_first_scrape"),
        ("over the limit: idle slots while first deliveries ran", "idle_while_working"),
        ("over the limit: waiting for retries after them", "idle_in_retry_tail"),
        ("over the limit: redeliveries' own work", "redelivery_work"),
    )
    for label, name in over:
        result.add(
            Figure(
                f"{label} (virtual s)", getattr(ours.phases, name), "s", baseline=getattr(seed.phases, name)
            )
        )
    return result
