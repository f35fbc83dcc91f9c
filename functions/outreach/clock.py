"""Wall-clock time for the task store and handlers, in one place so the embedded AWS can scale it."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

_now: Callable[[], float] = time.time


def now() -> float:
    """Seconds since the epoch."""
    return _now()


def set_time_source(source: Callable[[], float] | None) -> None:
    """Replace the time source (the embedded AWS's virtual clock); ``None`` restores the wall clock."""
    global _now
    _now = source if source is not None else time.time


def iso(ts: float | None = None) -> str:
    """A fixed-width UTC timestamp that sorts lexicographically (used as an index sort key)."""
    moment = datetime.fromtimestamp(now() if ts is None else ts, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
