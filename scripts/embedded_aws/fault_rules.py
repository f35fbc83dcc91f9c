"""The rules of the embedded AWS's fault injection (``faults.inject``): what each one does and how often
it fired."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from embedded_aws.clock import VirtualClock


@dataclass
class SqsOutage:
    """The next ``calls`` SendMessageBatch calls to the queue named ``queue`` fail."""

    queue: str
    calls: int
    code: str = "InternalError"
    fired: int = 0

    def applies(self, queue_name: str) -> bool:
        return self.queue == queue_name and self.fired < self.calls


@dataclass
class RefusedEntry:
    """The first ``times`` SendMessageBatch entries carrying ``marker`` fail; the rest are sent."""

    marker: str
    times: int
    code: str = "InternalError"
    fired: int = 0


@dataclass
class StalledSend:
    """A SendMessageBatch carrying ``marker`` hangs until its caller's timeout has passed.

    The call holds its connection for ``hold_seconds`` of virtual time (more than the caller's
    function timeout), so the runtime sees that invocation's deadline pass and ends it with
    Sandbox.Timedout, then reports every entry failed. The clock is not moved: every other invocation
    in flight keeps its own deadline.
    """

    marker: str
    clock: VirtualClock
    hold_seconds: float
    fired: int = 0


@dataclass
class StalledUpdate:
    """The first UpdateItem of an item whose key carries ``marker`` answers only after ``hold_seconds``
    of virtual time (more than the caller's function timeout), then makes its write."""

    marker: str
    clock: VirtualClock
    hold_seconds: float
    fired: int = 0


@dataclass
class Throttle:
    """The first ``times`` TransactWriteItems updating each of ``task_ids`` are throttled."""

    task_ids: frozenset[str]
    times: int
    per_task: Counter[str] = field(default_factory=Counter)

    @property
    def fired(self) -> int:
        return sum(self.per_task.values())


@dataclass
class RefusedPut:
    """The first ``times`` PutObject calls per key containing one of ``markers`` are refused."""

    markers: frozenset[str]
    times: int = 1
    code: str = "AccessDenied"
    per_key: Counter[str] = field(default_factory=Counter)

    @property
    def fired(self) -> int:
        return sum(self.per_key.values())


@dataclass
class DuplicateAsync:
    """The next ``events`` async events accepted for ``function`` each run ``deliveries`` times at once."""

    function: str
    deliveries: int
    events: int
    fired: int = 0

    def __post_init__(self) -> None:
        if self.deliveries < 2:
            raise ValueError("a duplicated delivery runs the event at least twice")

    def applies(self, function: str) -> bool:
        return self.function == function and self.fired < self.events


@dataclass
class SqsSend:
    queue: str
    body: str
