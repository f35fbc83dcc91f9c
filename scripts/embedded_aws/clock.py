"""A virtual clock shared by the embedded AWS, its pollers and the function workers.

Virtual time runs ``scale`` times faster than the wall clock from a common origin, plus an offset that
tests (or the driver) can advance in jumps. The offset lives in an 8-byte file mapped into memory, so
worker processes see a jump the moment the parent makes it; the origin and scale travel to them in
one environment variable (``OUTREACH_LOCAL_CLOCK``) read by the worker bootstrap.

Inside the embedded AWS process the clock replaces moto's ``utcnow`` so visibility timeouts, message
timestamps, receive-count timestamps and stream record times all follow virtual time.
"""

from __future__ import annotations

import json
import mmap
import os
import struct
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

CLOCK_ENV = "OUTREACH_LOCAL_CLOCK"
_OFFSET = struct.Struct("<d")


class VirtualClock:
    """virtual = origin_virtual + (wall - origin_wall) * scale + offset."""

    def __init__(
        self,
        scale: float = 1.0,
        *,
        origin_wall: float | None = None,
        origin_virtual: float | None = None,
        offset_path: str | None = None,
    ) -> None:
        if scale <= 0:
            raise ValueError("clock scale must be positive")
        self.scale = float(scale)
        self.origin_wall = time.time() if origin_wall is None else origin_wall
        self.origin_virtual = self.origin_wall if origin_virtual is None else origin_virtual
        self._owner = offset_path is None
        if offset_path is None:
            fd, offset_path = tempfile.mkstemp(prefix="outreach-clock-", suffix=".bin")
            os.write(fd, _OFFSET.pack(0.0))
            os.close(fd)
        self.offset_path = offset_path
        self._file = Path(offset_path).open("r+b")  # noqa: SIM115 - kept open for the mapping's lifetime
        self._map = mmap.mmap(self._file.fileno(), _OFFSET.size)
        self._lock = threading.Lock()

    # -- reading -------------------------------------------------------------------------------
    def offset(self) -> float:
        return float(_OFFSET.unpack_from(self._map, 0)[0])

    def now(self) -> float:
        """Virtual seconds since the epoch."""
        return self.origin_virtual + (time.time() - self.origin_wall) * self.scale + self.offset()

    def utcnow_naive(self) -> datetime:
        return datetime.fromtimestamp(self.now(), tz=UTC).replace(tzinfo=None)

    def real_seconds(self, virtual_seconds: float) -> float:
        """How long a virtual duration lasts on the wall clock (ignoring future jumps)."""
        return max(virtual_seconds, 0.0) / self.scale

    # -- moving ------------------------------------------------------------------------------------
    def advance(self, seconds: float) -> None:
        """Jump forward; every process sharing the clock sees the jump immediately."""
        if seconds < 0:
            raise ValueError("the clock never goes back")
        with self._lock:
            _OFFSET.pack_into(self._map, 0, self.offset() + seconds)
            self._map.flush()

    def sleep(self, virtual_seconds: float, *, stop: threading.Event | None = None) -> bool:
        """Wait until ``virtual_seconds`` have passed (jumps count). Returns False if ``stop`` was set."""
        deadline = self.now() + virtual_seconds
        while True:
            remaining = deadline - self.now()
            if remaining <= 0:
                return True
            pause = min(self.real_seconds(remaining), 0.05)
            if stop is not None:
                if stop.wait(pause):
                    return False
            else:
                time.sleep(pause)

    # -- sharing -----------------------------------------------------------------------------------
    def to_env(self) -> str:
        return json.dumps(
            {
                "scale": self.scale,
                "origin_wall": self.origin_wall,
                "origin_virtual": self.origin_virtual,
                "offset_path": self.offset_path,
            }
        )

    @classmethod
    def from_env(cls, raw: str) -> VirtualClock:
        spec: dict[str, Any] = json.loads(raw)
        return cls(
            float(spec["scale"]),
            origin_wall=float(spec["origin_wall"]),
            origin_virtual=float(spec["origin_virtual"]),
            offset_path=str(spec["offset_path"]),
        )

    def close(self) -> None:
        self._map.close()
        self._file.close()
        if self._owner:
            Path(self.offset_path).unlink(missing_ok=True)


# --- moto -------------------------------------------------------------------------------------------
_active: VirtualClock | None = None
_original_utcnow: Callable[[], datetime] | None = None

# Backends whose models read the time; imported before patching so every copy of ``utcnow`` is found.
_MOTO_MODULES = (
    "moto.core.utils",
    "moto.sqs.models",
    "moto.dynamodb.models",
    "moto.dynamodb.models.table",
    "moto.dynamodb.models.dynamo_type",
    "moto.dynamodbstreams.models",
    "moto.awslambda.models",
    "moto.events.models",
    "moto.scheduler.models",
    "moto.pipes.models",
    "moto.s3.models",
    "moto.sns.models",
    "moto.cloudwatch.models",
)


def _virtual_utcnow() -> datetime:
    clock = _active
    if clock is None:
        assert _original_utcnow is not None
        return _original_utcnow()
    return clock.utcnow_naive()


def install_in_moto(clock: VirtualClock | None) -> None:
    """Make moto read ``clock`` (``None`` restores the wall clock). Call before serving requests.

    moto derives every time it keeps (``unix_time``, ``unix_time_millis``, timestamps in models) from
    ``moto.core.utils.utcnow``; modules that imported the name get the replacement too.
    """
    global _active, _original_utcnow
    import importlib

    for name in _MOTO_MODULES:
        importlib.import_module(name)
    utils = sys.modules["moto.core.utils"]
    if _original_utcnow is None:
        _original_utcnow = getattr(utils, "utcnow")  # noqa: B009 - moto is untyped here
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("moto") or module is None:
            continue
        if getattr(module, "utcnow", None) is _original_utcnow:
            setattr(module, "utcnow", _virtual_utcnow)  # noqa: B010
    _active = clock


def active_clock() -> VirtualClock | None:
    return _active
