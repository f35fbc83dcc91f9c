"""The embedded AWS's control loop: discovers the applied configuration and runs its deliveries.

Every few seconds it lists event source mappings, pipes, rules and schedules on the emulator, reads
each into its typed shape (``applied_config``) and starts, restarts (the shape changed; stream
checkpoints carried over) or stops the matching pollers, so what runs is always what Terraform
applied. The function URLs it finds are served on loopback ports (``function_urls``).
Event-pattern rules' Lambda invocations go to Lambda's event queue (``event_rule_invoker``).
CloudWatch's part runs beside them (``alarm_runner``): SES reputation datapoints, then every metric
alarm evaluated and its state changes acted on.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from embedded_aws.alarm_runner import MetricAlarmRunner
from embedded_aws.applied_config import (
    AppliedConfig,
    PipeConfig,
    SqsMappingConfig,
    StreamMappingConfig,
    mapping_config,
)
from embedded_aws.async_invoke import AsyncInvoker
from embedded_aws.base import Journal, SourceStats, client
from embedded_aws.clock import VirtualClock
from embedded_aws.event_rule_invoker import EventRuleInvoker
from embedded_aws.function_urls import FunctionUrlHost
from embedded_aws.pipes import PipePoller
from embedded_aws.runtime import FunctionRuntime
from embedded_aws.schedules import ScheduleRunner
from embedded_aws.ses_reputation_metrics import ReputationSettings
from embedded_aws.sqs_poller import SqsMappingPoller
from embedded_aws.stream_poller import StreamMappingPoller

Poller = SqsMappingPoller | StreamMappingPoller | PipePoller


@dataclass
class _Running:
    config: AppliedConfig
    poller: Poller
    kind: str


class LocalCloud:
    """Runs every applied mapping, pipe, rule and schedule against the emulator."""

    def __init__(
        self,
        endpoint: str,
        clock: VirtualClock,
        runtime: FunctionRuntime,
        *,
        region: str = "us-east-1",
        journal: Journal | None = None,
        refresh_real_seconds: float = 2.0,
        async_workers: int = 4,
        reputation: ReputationSettings | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.clock = clock
        self.runtime = runtime
        self.region = region
        self.journal = journal or Journal()
        self.invoker = AsyncInvoker(runtime, clock, endpoint, journal=self.journal, workers=async_workers)
        self.schedules = ScheduleRunner(self.invoker, clock, endpoint, journal=self.journal, region=region)
        self.event_rules = EventRuleInvoker(
            self.invoker, clock, endpoint, journal=self.journal, region=region
        )
        self.alarms = MetricAlarmRunner(clock, region=region, journal=self.journal, reputation=reputation)
        self.function_urls = FunctionUrlHost(runtime, clock, endpoint, region=region, journal=self.journal)
        self._lambda = client("lambda", endpoint, region)
        self._pipes = client("pipes", endpoint, region)
        self._running: dict[str, _Running] = {}
        self._retired: dict[str, SourceStats] = {}
        self._refresh = refresh_real_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="local-cloud", daemon=True)
        self._lock = threading.Lock()

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> LocalCloud:
        self.refresh()
        self.invoker.start()
        self.schedules.start()
        self.event_rules.start()
        self.alarms.start()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)
        self.alarms.stop()
        self.event_rules.stop()
        self.schedules.stop()
        self.invoker.stop()
        self.function_urls.stop()
        with self._lock:
            running = list(self._running.values())
        for entry in running:
            entry.poller.stop()

    def __enter__(self) -> LocalCloud:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _loop(self) -> None:
        while not self._stop.wait(self._refresh):
            try:
                self.refresh()
            except Exception as exc:  # the emulator is shutting down or refused a call: try next round
                self.journal.record("cloud.refresh_error", error=repr(exc))

    # -- discovery -------------------------------------------------------------------------------
    def _mappings(self) -> list[dict[str, Any]]:
        pages = self._lambda.get_paginator("list_event_source_mappings").paginate()
        return [mapping for page in pages for mapping in page.get("EventSourceMappings", [])]

    def _pipes_described(self) -> list[dict[str, Any]]:
        described = []
        for summary in self._pipes.list_pipes().get("Pipes", []):
            pipe = self._pipes.describe_pipe(Name=summary["Name"])
            pipe.pop("ResponseMetadata", None)
            described.append(pipe)
        return described

    def _applied(self) -> dict[str, AppliedConfig]:
        """The enabled mappings on queues and streams and the running pipes on streams, by id."""
        applied: dict[str, AppliedConfig] = {}
        for mapping in self._mappings():
            if mapping.get("State", "Enabled") not in ("Enabled", "Creating", "Updating"):
                continue
            config = mapping_config(mapping)
            if config is not None:
                applied[config.uuid] = config
        for pipe in self._pipes_described():
            if pipe.get("DesiredState", "RUNNING") == "RUNNING" and ":dynamodb:" in pipe.get("Source", ""):
                applied[pipe["Arn"]] = PipeConfig.from_pipe(pipe)
        return applied

    def refresh(self) -> None:
        wanted = self._applied()
        with self._lock:
            for key in list(self._running):
                entry = self._running[key]
                if wanted.get(key) != entry.config:
                    entry.poller.stop()
                    self._retired[key] = entry.poller.stats
                    del self._running[key]
                    self.journal.record("cloud.stopped", source=key, source_kind=entry.kind)
                    if key in wanted:
                        old = entry.poller
                        checkpoints = old.checkpoints() if not isinstance(old, SqsMappingPoller) else {}
                        self._start(key, wanted[key], checkpoints=checkpoints)
            for key, config in wanted.items():
                if key not in self._running:
                    self._start(key, config, checkpoints={})
        self.function_urls.refresh()

    def _start(self, key: str, config: AppliedConfig, *, checkpoints: dict[str, str]) -> None:
        poller: Poller
        if isinstance(config, SqsMappingConfig):
            kind = "sqs"
            poller = SqsMappingPoller(config, self.runtime, self.clock, self.endpoint, journal=self.journal)
        elif isinstance(config, StreamMappingConfig):
            kind = "stream"
            poller = StreamMappingPoller(
                config, self.runtime, self.clock, self.endpoint, journal=self.journal, checkpoints=checkpoints
            )
        else:
            kind = "pipe"
            poller = PipePoller(
                config, self.clock, self.endpoint, journal=self.journal, checkpoints=checkpoints
            )
        poller.start()
        self._running[key] = _Running(config, poller, kind)
        self.journal.record("cloud.started", source=key, source_kind=kind)

    # -- reporting -------------------------------------------------------------------------------
    def pollers(self, kind: str | None = None) -> list[Poller]:
        with self._lock:
            return [e.poller for e in self._running.values() if kind is None or e.kind == kind]

    def summary(self) -> dict[str, Any]:
        with self._lock:
            sources = {key: {"kind": e.kind, **e.poller.stats.as_dict()} for key, e in self._running.items()}
        return {
            "sources": sources,
            "async": self.invoker.stats.as_dict(),
            "schedules": {k: v.as_dict() for k, v in self.schedules.stats.items()},
            "event_rules": {k: v.as_dict() for k, v in self.event_rules.stats.items()},
            "functions": {name: vars(s).copy() for name, s in self.runtime.stats.items()},
        }
