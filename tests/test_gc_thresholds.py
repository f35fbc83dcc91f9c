"""The processes that run tests collect young objects every 10,000 net allocations, not CPython's 700
(tests/support/gc_thresholds.py)."""

from __future__ import annotations

import gc

from tests.support import gc_thresholds


def test_a_test_process_collects_its_youngest_generation_every_10000_net_allocations() -> None:
    assert gc.get_threshold() == gc_thresholds.THRESHOLDS == (10_000, 10, 10)
