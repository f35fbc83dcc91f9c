"""Methods of a moto class made to hold a lock: the one way the emulator serialises moto's state.

moto's backends keep their state in plain dicts and lists that its threaded server reads and writes
from many request threads at once. Where AWS documents an operation as atomic, or documents no error
for concurrent calls, the emulator wraps the methods involved so each runs under one lock
(``dynamodb_transactions``, ``dynamodb_read_isolation``, ``scheduler_thread_safety``).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable
from typing import Any

_HELD = "__outreach_holds_lock__"


def _holding(lock: threading.RLock, method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        with lock:
            return method(self, *args, **kwargs)

    setattr(wrapper, _HELD, lock)
    return wrapper


def hold_lock(cls: type, names: Iterable[str], lock: threading.RLock) -> None:
    """Make each of ``cls``'s methods ``names`` run under ``lock`` (idempotent: a method already
    holding it is left as it is)."""
    for name in names:
        method = getattr(cls, name)
        if getattr(method, _HELD, None) is not lock:
            setattr(cls, name, _holding(lock, method))
