"""A child's peak memory is its own: the bench's memory does not count against the command it runs."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

from outreach_dev.bench.peak_memory import own_peak_rss_kib

ROOT = Path(__file__).resolve().parents[3]
# What the parent holds before it starts the child: far more than a bare interpreter's peak.
PARENT_MIB = 300
_CHILD = """
import resource
from outreach_dev.bench.peak_memory import own_peak_rss_kib
print(own_peak_rss_kib(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def test_a_child_started_by_a_large_parent_reports_its_own_peak_not_the_parents() -> None:
    # GIVEN a parent whose resident memory is PARENT_MIB above a bare interpreter's
    held = bytearray(PARENT_MIB * 1024 * 1024)
    held[::4096] = b"\x01" * len(held[::4096])
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >= PARENT_MIB * 1024
    # WHEN it runs a bare child that reports its peak
    done = subprocess.run(
        [sys.executable, "-c", _CHILD],
        env={"PYTHONPATH": str(ROOT / "scripts")},
        capture_output=True,
        text=True,
        check=True,
    )
    own_kib, rusage_kib = (int(word) for word in done.stdout.split())
    # THEN the child's own peak is an interpreter's, while its ru_maxrss carries the parent's peak
    # (what the large-job row used to report)
    assert own_kib < 100 * 1024, own_kib
    assert rusage_kib >= PARENT_MIB * 1024, rusage_kib
    del held


def test_the_own_peak_is_at_least_what_this_process_holds_now() -> None:
    held = bytearray(64 * 1024 * 1024)
    held[::4096] = b"\x01" * len(held[::4096])
    assert own_peak_rss_kib() >= 64 * 1024
    del held
