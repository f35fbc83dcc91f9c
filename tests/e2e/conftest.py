"""The whole pipeline on the embedded AWS, brought up once for the package.

``terraform/environments/local`` is applied once (about 75 s) against an in-process moto server,
receiving replies at ``LOCAL_REPLY_DOMAIN`` (modules/email-inbound), its email worker keeping
``LOCAL_FIRST_CONTACT_GAP_SECONDS`` between two first contacts to an address; every scenario creates its own
job over its own web farm sites, so scenarios never see each other's tasks, fetches or results.
moto's state is global to the pytest process: the stack is torn down when the package ends, before
any other test package runs, and nothing here resets state other tests own.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from embedded_aws import faults as fault_injection
from embedded_aws.applied_config import SqsMappingConfig
from embedded_aws.pipeline import (
    LOCAL_FIRST_CONTACT_GAP_SECONDS,
    LOCAL_REPLY_DOMAIN,
    TERMINAL,
    FollowTimeoutError,
    LocalPipeline,
    local_pipeline,
)
from embedded_aws.schedule_expressions import rate_seconds
from embedded_aws.sqs_poller import SqsMappingPoller
from embedded_aws.webfarm import Site
from outreach.task_ids import normalise_url, scrape_task_id
from outreach.task_model import Kind
from tests.support.call_timeouts import count_the_call_only
from tests.support.packages import full_packages

pytestmark = pytest.mark.e2e

# Set to a file path to get one JSON line of figures per scenario (docs/reliability.md).
FIGURES_ENV = "OUTREACH_E2E_FIGURES"
# Sites in the farm: the 3,575 of the full load spike plus room for every other scenario.
FARM_SITES = 4200
CLOCK_SCALE = 10.0
# Fast kinds: no deliberate delays, so short scenarios stay short.
FAST_KINDS = ("normal", "redirect", "missing", "gone", "binary", "oversized")
# Sites of each hostile kind, added after the generated ones (test_hostile_sites.py).
HOSTILE_COPIES = 1
# Building the zips and applying the local root, once per stack (tests/e2e/stacks.py): about 75 s on
# a quiet machine, several times that beside CPU hogs. It is bounded on its own, so that no
# scenario's timeout pays it.
STACK_START_BUDGET_SECONDS = 900
PACKAGE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each scenario's timeout counts its own run, not the package's stack start (which the first
    scenario to run would otherwise pay; the start is bounded by STACK_START_BUDGET_SECONDS)."""
    count_the_call_only(items, PACKAGE)


@dataclass
class SitePool:
    """Hands out farm sites so that no two scenarios share one (hit counts stay per scenario)."""

    sites: list[Site]
    used: set[int] = field(default_factory=set)

    def take(self, count: int, kinds: Iterable[str] = FAST_KINDS) -> list[Site]:
        wanted = set(kinds)
        chosen = [s for s in self.sites if s.kind in wanted and s.number not in self.used][:count]
        if len(chosen) < count:
            raise AssertionError(f"the farm has only {len(chosen)} unused sites of kinds {sorted(wanted)}")
        self.used.update(s.number for s in chosen)
        return chosen


@dataclass
class E2E:
    """The running stack plus what the scenarios need around it."""

    stack: LocalPipeline
    pool: SitePool
    figures: list[dict[str, Any]] = field(default_factory=list)

    @property
    def scraper(self) -> str:
        return str(self.stack.pipeline["scraper_function_name"])

    @property
    def dispatcher(self) -> str:
        return str(self.stack.pipeline["dispatcher_function_name"])

    @property
    def reconciler(self) -> str:
        return str(self.stack.pipeline["scrape_reconciler_function_name"])

    @property
    def results_bucket(self) -> str:
        return str(self.stack.pipeline["results_bucket"])

    @property
    def failure_bucket(self) -> str:
        return str(self.stack.pipeline["dispatch_failure_bucket"])

    @property
    def scrape_queue_url(self) -> str:
        return str(self.stack.pipeline["scrape_queue_url"])

    @property
    def scrape_queue_name(self) -> str:
        return self.scrape_queue_url.rsplit("/", 1)[1]

    def url(self, site: Site) -> str:
        return self.stack.farm.url(site.number)

    def task_id(self, job_id: str, site: Site) -> str:
        return scrape_task_id(job_id, normalise_url(self.url(site)))

    def create_job(self, job_id: str, sites: list[Site]) -> dict[Site, str]:
        creation = self.stack.create_job(job_id, [self.url(s) for s in sites])
        assert len(creation.created) == len(sites), creation
        return {site: self.task_id(job_id, site) for site in sites}

    def scraper_mapping(self) -> dict[str, Any]:
        # The scrape queue's mapping (the SES events queue has one of its own).
        return self._mapping(f":sqs:{self.stack.region}:")

    def stream_mapping(self) -> dict[str, Any]:
        return self._mapping(":dynamodb:")

    def _mapping(self, source: str) -> dict[str, Any]:
        listed = self.stack.client("lambda").list_event_source_mappings()["EventSourceMappings"]
        found = [m for m in listed if source in m["EventSourceArn"]]
        if source.startswith(":sqs:"):
            found = [m for m in found if m["EventSourceArn"].endswith(f":{self.scrape_queue_name}")]
        assert len(found) == 1, listed
        mapping: dict[str, Any] = found[0]
        return mapping

    def reconciler_bound(self) -> ReconcilerBound:
        """The documented bound B, from what was applied (modules/reconciler/README.md)."""
        lam = self.stack.client("lambda")
        function = lam.get_function_configuration(FunctionName=self.reconciler)
        env = function["Environment"]["Variables"]
        schedule_arn = str(self.stack.pipeline["scrape_reconciler_schedule_arn"])
        schedule = self.stack.client("scheduler").get_schedule(Name=schedule_arn.rsplit("/", 1)[1])
        period = rate_seconds(schedule["ScheduleExpression"])
        assert period is not None, schedule
        return ReconcilerBound(
            pending_after=int(env["RECONCILE_PENDING_AFTER_SECONDS"]),
            running_after=int(env["RECONCILE_RUNNING_AFTER_SECONDS"]),
            period=period,
            timeout=int(function["Timeout"]),
            max_attempts=int(env["MAX_TASK_ATTEMPTS"]),
        )

    def subscribe_to_alarms(self, name: str) -> Callable[[], list[str]]:
        """Subscribe a new queue to the alarm topic; returns a reader of what reached it so far."""
        sqs = self.stack.client("sqs")
        url = sqs.create_queue(QueueName=f"alarm-listener-{name}")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        self.stack.client("sns").subscribe(
            TopicArn=str(self.stack.outputs["alarm_topic_arn"]), Protocol="sqs", Endpoint=arn
        )
        return lambda: [m["Body"] for m in self.stack.queue_messages(url)]

    def reconciler_actions(self) -> dict[str, int]:
        return self.stack.reconciler_actions()

    def scraper_poller(self) -> SqsMappingPoller:
        """The running poller of the scrape queue's mapping (the SES events queue has one of its own)."""
        pollers = [
            p
            for p in self.stack.cloud.pollers("sqs")
            if isinstance(p, SqsMappingPoller) and p.config.queue_arn.endswith(f":{self.scrape_queue_name}")
        ]
        assert len(pollers) == 1, pollers
        return pollers[0]

    def sqs_poller_stats(self) -> dict[str, int]:
        """Counters of the scrape queue's running SQS mapping poller (started from the current config)."""
        return self.scraper_poller().stats.as_dict()

    def stream_poller_stats(self) -> dict[str, int]:
        pollers = self.stack.cloud.pollers("stream")
        assert len(pollers) == 1
        return pollers[0].stats.as_dict()

    def wait_for_scraper_poller(self, timeout: float = 30.0) -> SqsMappingConfig:
        """Wait until the scrape mapping's poller runs what the Lambda API now reports; returns it."""
        applied = SqsMappingConfig.from_mapping(self.scraper_mapping())
        self.wait_until(
            lambda: any(poller.config == applied for poller in self.stack.cloud.pollers("sqs")),
            timeout=timeout,
            what=f"an SQS poller running {applied}",
        )
        return applied

    def wait_terminal(
        self,
        job_id: str,
        total: int,
        *,
        timeout: float = 120.0,
        idle_skip: float = 300.0,
        settle: float = 1.0,
    ) -> dict[str, int]:
        """Wait until every task of the job is terminal (the loop ``make local`` uses too)."""
        try:
            progress = self.stack.wait_terminal(job_id, timeout=timeout, idle_skip=idle_skip, settle=settle)
        except FollowTimeoutError as exc:
            counts = dict(exc.progress.counts)
            raise AssertionError(
                f"job {job_id} not terminal within {timeout}s: {counts}; {self.diagnosis()}"
            ) from exc
        assert progress.terminal == total, (progress.counts, total)
        return dict(progress.counts)

    def diagnosis(self) -> str:
        """What the pollers did and the last delivery errors, for a failure message."""
        summary = self.stack.cloud.summary()
        errors = [e for e in self.stack.journal.entries() if "error" in e["kind"] or "stopped" in e["kind"]]
        return f"sources={summary['sources']} functions={summary['functions']} journal={errors[-5:]}"

    def jump(self, seconds: float, timeout: float = 60.0) -> None:
        """Move the virtual clock ``seconds`` ahead at a moment no invocation runs (a jump inside one
        would time it out at once: ``FunctionRuntime.advance_clock_if_idle``)."""
        self.wait_until(
            lambda: self.stack.runtime.advance_clock_if_idle(seconds),
            timeout=timeout,
            what=f"a moment with no invocation running, to move the clock {seconds} s",
        )

    def wait_until(
        self,
        condition: Callable[[], bool],
        timeout: float = 60.0,
        what: str = "condition",
        describe: Callable[[], object] | None = None,
        interval: float = 0.1,
    ) -> None:
        """Wait until ``condition()`` holds, checking every ``interval`` real seconds; AssertionError
        with ``describe()`` and the pollers' state after ``timeout``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return
            time.sleep(interval)
        state = f": {describe()}" if describe is not None else ""
        state += f"; {self.diagnosis()}"
        raise AssertionError(f"{what} not met within {timeout}s{state}")

    def task_rows(self, job_id: str, kind: Kind = Kind.SCRAPE) -> dict[str, dict[str, Any]]:
        return {row["task_id"]: row for row in self.stack.tasks(job_id, kind)}

    def record(self, scenario: str, **figures: Any) -> None:
        """Keep a scenario's figures; written to $OUTREACH_E2E_FIGURES when the package ends."""
        self.figures.append({"scenario": scenario, **figures})


@dataclass(frozen=True)
class ReconcilerBound:
    """Thresholds and schedule of the applied scrape reconciler; ``b`` is the documented bound."""

    pending_after: int
    running_after: int
    period: int
    timeout: int
    max_attempts: int

    @property
    def b(self) -> int:
        """No open task stays unchanged longer than this (virtual seconds)."""
        return max(self.pending_after, self.running_after) + self.period + self.timeout


def epoch(iso: str) -> float:
    """Seconds since the epoch of a task row's fixed-width UTC timestamp."""
    return datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC).timestamp()


@contextlib.contextmanager
def _bounded(seconds: int, what: str) -> Iterator[None]:
    """Raise TimeoutError in the main thread if the block runs past ``seconds`` (SIGALRM, as
    pytest-timeout's signal method; free here, since scenarios' timers run only in their call)."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"{what} took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="package")
def e2e(tmp_path_factory: pytest.TempPathFactory) -> Iterator[E2E]:
    logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)
    with contextlib.ExitStack() as resources:
        with _bounded(STACK_START_BUDGET_SECONDS, "the e2e stack's start"):
            package_dir = full_packages(tmp_path_factory)
            stack = resources.enter_context(
                local_pipeline(
                    sites=FARM_SITES,
                    port=None,
                    scale=CLOCK_SCALE,
                    package_dir=package_dir,
                    farm_options={"hostile_copies": HOSTILE_COPIES},
                    reply_domain=LOCAL_REPLY_DOMAIN,
                    first_contact_gap_seconds=LOCAL_FIRST_CONTACT_GAP_SECONDS,
                )
            )
        harness = E2E(stack, SitePool(list(stack.farm.sites)))
        yield harness
    target = os.environ.get(FIGURES_ENV)
    if target and harness.figures:
        with Path(target).open("a", encoding="utf-8") as handle:
            for entry in harness.figures:
                handle.write(json.dumps(entry, sort_keys=True) + "\n")


@pytest.fixture
def faults() -> Iterator[fault_injection.Faults]:
    with fault_injection.inject() as active:
        yield active


def virtual_elapsed(e2e: E2E, started: float) -> float:
    return round(e2e.stack.clock.now() - started, 1)


def terminal_rows(rows: dict[str, dict[str, Any]]) -> int:
    return sum(1 for row in rows.values() if row["status"] in TERMINAL)
