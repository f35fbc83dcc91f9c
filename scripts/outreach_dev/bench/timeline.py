"""A run's shape over virtual time: busy scraper slots and queue depth per job, with retries marked.

While open, :func:`recorded_timeline` counts the scraper invocations running per job (the job of the
message's group, ``MessageGroupId``, which every scrape message carries: one of its job's tenants,
``<job>#<n>``, or the job itself; ``outreach.scrape_tenants``) and, every ``interval``
virtual seconds, samples those counts beside each job's messages waiting in the scrape queue (visible,
not in flight: the queue depth SQS reports as ``ApproximateNumberOfMessages``, split by group). A
delivery whose receive count is above one is a retry, marked at its start; every invocation's length
is kept under its job (``invocation_seconds``: t per job, to compare a job's t beside another with
its t alone). Times are virtual seconds
from the moment the recording began. The queue is read from the embedded AWS's own models (in this
process), as SQS offers no depth per group.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from embedded_aws.pipeline import LocalPipeline
from embedded_aws.runtime import InvocationResult

UNKNOWN_JOB = "?"


@dataclass
class Timeline:
    """Samples of busy slots and queued messages per job, and the retries' starts, in virtual seconds."""

    interval: float
    times: list[float] = field(default_factory=list)
    busy: dict[str, list[int]] = field(default_factory=dict)
    queued: dict[str, list[int]] = field(default_factory=dict)
    retries: dict[str, list[float]] = field(default_factory=dict)
    invocation_seconds: dict[str, list[float]] = field(default_factory=dict)

    def add(self, at: float, busy: dict[str, int], queued: dict[str, int]) -> None:
        """One sample; a job first seen now has zeros before it."""
        for series, values in ((self.busy, busy), (self.queued, queued)):
            for job in values:
                series.setdefault(job, [0] * len(self.times))
            for job, points in series.items():
                points.append(values.get(job, 0))
        self.times.append(at)

    def busy_while_queued(self, job: str) -> list[int]:
        """The job's busy slots at every sample at which some of its messages waited in the queue."""
        busy = self.busy.get(job, [])
        return [slots for slots, waiting in zip(busy, self.queued.get(job, []), strict=True) if waiting > 0]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Timeline:
        return cls(
            interval=float(data["interval"]),
            times=list(data["times"]),
            busy={k: list(v) for k, v in data["busy"].items()},
            queued={k: list(v) for k, v in data["queued"].items()},
            retries={k: list(v) for k, v in data["retries"].items()},
            # results recorded before invocation lengths were kept have none
            invocation_seconds={k: list(v) for k, v in data.get("invocation_seconds", {}).items()},
        )

    def mean_invocation_seconds(self, job: str) -> float | None:
        """The job's mean scraper invocation in virtual seconds; None when none was recorded."""
        lengths = self.invocation_seconds.get(job, [])
        return sum(lengths) / len(lengths) if lengths else None


def job_of_group(group: Any) -> str | None:
    """The job a message group belongs to: the text before its ``#`` (a job id has none)."""
    if not group:
        return None
    return str(group).split("#", 1)[0] or None


def job_of(event: Any) -> tuple[str, int]:
    """The job (message group) of a scraper event's first record, and that record's receive count."""
    records = event.get("Records", []) if isinstance(event, dict) else []
    if not records:
        return UNKNOWN_JOB, 1
    attributes = records[0].get("attributes", {})
    job = job_of_group(attributes.get("MessageGroupId"))
    if not job:
        with contextlib.suppress(ValueError, TypeError, AttributeError, IndexError):
            job = str(json.loads(records[0]["body"])["task_id"]).split("#")[1]
    return str(job or UNKNOWN_JOB), int(attributes.get("ApproximateReceiveCount", 1))


def _queued_by_job(stack: LocalPipeline) -> dict[str, int]:
    """Messages of each group waiting in the scrape queue (visible and not delayed) now."""
    from moto.sqs.models import sqs_backends

    from embedded_aws.sqs_queue_scans import _now_millis

    account, name = str(stack.pipeline["scrape_queue_url"]).rsplit("/", 2)[-2:]
    queue = sqs_backends[account][stack.region].queues[name]
    now = _now_millis()
    counts: dict[str, int] = {}
    for message in list(queue._messages):
        if now > message.visible_at and not now < message.delayed_until:
            job = job_of_group(message.group_id) or UNKNOWN_JOB
            counts[job] = counts.get(job, 0) + 1
    return counts


@contextlib.contextmanager
def recorded_timeline(stack: LocalPipeline, function: str, *, interval: float = 5.0) -> Iterator[Timeline]:
    """While open, ``function``'s invocations and the scrape queue, sampled every ``interval``."""
    timeline = Timeline(interval=interval)
    running: dict[str, int] = {}
    lock = threading.Lock()
    start = stack.clock.now()
    stop = threading.Event()
    already_wrapped = "invoke" in vars(stack.runtime)
    invoke = stack.runtime.invoke

    def counted(name: str, event: Any) -> InvocationResult:
        if name.rsplit(":", 1)[-1] != function:
            return invoke(name, event)
        job, receive = job_of(event)
        began = stack.clock.now()
        with lock:
            running[job] = running.get(job, 0) + 1
            if receive > 1:
                timeline.retries.setdefault(job, []).append(stack.clock.now() - start)
        try:
            return invoke(name, event)
        finally:
            ended = stack.clock.now()
            with lock:
                running[job] -= 1
                timeline.invocation_seconds.setdefault(job, []).append(ended - began)

    def sample() -> None:
        while True:
            queued = _queued_by_job(stack)
            with lock:
                timeline.add(stack.clock.now() - start, dict(running), queued)
            if not stack.clock.sleep(interval, stop=stop):
                return

    stack.runtime.invoke = counted  # type: ignore[method-assign,assignment]
    sampler = threading.Thread(target=sample, name="bench-timeline", daemon=True)
    sampler.start()
    try:
        yield timeline
    finally:
        stop.set()
        sampler.join(timeout=30)
        if already_wrapped:
            stack.runtime.invoke = invoke  # type: ignore[method-assign]
        else:
            del stack.runtime.invoke
