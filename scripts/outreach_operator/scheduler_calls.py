"""Many EventBridge Scheduler calls at once: a bounded pool of threads under a client-side rate, a
throttled call tried again.

Scheduler limits each API's requests per second per account and Region, and refuses the calls over
it with ``ThrottlingException`` for the rest of the second
(https://docs.aws.amazon.com/scheduler/latest/UserGuide/scheduler-quotas.html). The rate each run
takes is the caller's: the commands take it from the account's quota (``scheduler_quota``) unless
``--scheduler-rate`` sets another.

A call refused as throttled, after the SDK's own retries (``clients``: standard mode, 5 attempts), is
tried again after a pause that doubles from ``FIRST_PAUSE_SECONDS``, ``THROTTLED_ATTEMPTS`` times in
all; any other error, and a call throttled every time, is raised to the caller with what was done.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from functools import partial
from typing import TypeVar

from botocore.exceptions import ClientError

from outreach.ses_send_errors import error_code

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_THREADS = 16
THROTTLED_ATTEMPTS = 6
FIRST_PAUSE_SECONDS = 0.5
_THROTTLED = frozenset({"ThrottlingException", "TooManyRequestsException"})


class RateLimiter:
    """At most ``per_second`` calls started in any second, spread evenly (one every 1/rate seconds),
    shared by every thread that calls ``wait``."""

    def __init__(self, per_second: float) -> None:
        if per_second <= 0:
            raise ValueError(f"a rate must be above 0, not {per_second}")
        self._gap = 1.0 / per_second
        self._next = time.monotonic()
        self._lock = threading.Lock()

    def wait(self) -> None:
        """Return when the next call may start."""
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self._gap
        if start > now:
            time.sleep(start - now)


def throttled(error: ClientError) -> bool:
    """Whether Scheduler refused the call for its request rate."""
    return error_code(error) in _THROTTLED


def call_with_retries(call: Callable[[], R], limiter: RateLimiter) -> R:
    """``call()`` under ``limiter``; a throttled call tried again after a doubling pause."""
    pause = FIRST_PAUSE_SECONDS
    for attempt in range(1, THROTTLED_ATTEMPTS + 1):
        limiter.wait()
        try:
            return call()
        except ClientError as exc:
            if not throttled(exc) or attempt == THROTTLED_ATTEMPTS:
                raise
        time.sleep(pause)
        pause *= 2
    raise AssertionError("unreachable: the last attempt returns or raises")


def run_all(
    items: Iterable[T],
    call: Callable[[T], R],
    *,
    rate: float,
    threads: int = DEFAULT_THREADS,
) -> Iterator[tuple[T, R]]:
    """``call(item)`` for every item, ``threads`` at a time and at most ``rate`` a second; each item
    with its result as it comes (in no set order). After the first error no call starts; the calls
    running end, their results are yielded, and then the error is raised."""
    limiter = RateLimiter(rate)
    source = iter(items)
    error: BaseException | None = None
    with ThreadPoolExecutor(max_workers=threads) as pool:
        running: dict[Future[R], T] = {}

        def submit() -> None:
            for item in source:
                running[pool.submit(call_with_retries, partial(call, item), limiter)] = item
                return

        for _ in range(threads * 2):
            submit()
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                item = running.pop(future)
                failure = future.exception()
                if failure is not None:
                    error = error or failure
                    continue
                yield item, future.result()
                if error is None:
                    submit()
    if error is not None:
        raise error
