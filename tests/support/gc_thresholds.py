"""The test processes' garbage-collector thresholds: young objects collected less often.

CPython collects its youngest generation each time allocations outnumber deallocations by the first
threshold (700 by default), and each older generation after 10 collections of the one below it
(https://docs.python.org/3/library/gc.html#gc.set_threshold). The tests allocate in large heaps
(moto's backends, botocore's service models, the embedded AWS) and at the defaults much of their CPU
is collection. Measured on the 2-core machine, `tests/functions` (1,281 tests, one process): 158 s of
CPU at the defaults, 115 s at 10,000 (peak memory 405 → 493 MiB); 102 s at 100,000, but 1,148 MiB.

Only the processes that run tests change. The functions' own interpreters (the embedded AWS's
runtimes, the cold-start and peak-memory measurements) start fresh with CPython's defaults, as in
Lambda.
"""

from __future__ import annotations

import gc

THRESHOLDS = (10_000, 10, 10)


def configure() -> None:
    gc.set_threshold(*THRESHOLDS)
