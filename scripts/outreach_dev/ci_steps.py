"""``make test``: every CI step, in lanes that run side by side, each step's output kept whole.

    python -m outreach_dev.ci_steps              # every step of make test (LANES)
    python -m outreach_dev.ci_steps lint pytest  # some of them, in their lanes

Each step is its own make target (``make lint``, ``make pytest``...), run as a child ``make``. The
steps of one lane run one after another; the lanes run at once. ``pytest`` has a lane to itself: it
is the longest step and runs on several workers (``PYTEST_WORKERS``), so the other steps finish
beside it. ``checkov`` follows ``terraform-check`` in their lane, so that checkov never scans a root
while ``terraform init`` writes its ``.terraform/``, as in a serial run.

A step's output goes to ``build/ci/<step>.log`` and is printed whole when the step ends, under a
header naming the step, its result and its time, so that lanes never interleave lines. Every step
runs even when another fails; the command fails (exit 1) when any step does, and the closing table
names each step's result, wall time and CPU time.

A step's CPU time is what the kernel reports for its ``make`` and every descendant it waited for
(``wait4``'s resource usage: user + system). The lanes share the machine's cores, so the sum of the
steps' CPU over the core count is the least wall time ``make test`` can take on that machine; the
table prints that floor next to the wall time.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LOG_DIR = REPO / "build" / "ci"
# The steps of make test, in lanes: a lane's steps run in order, lanes side by side.
LANES: tuple[tuple[str, ...], ...] = (
    ("pytest",),
    ("terraform-check", "checkov"),
    ("lint", "lint-policies", "except-lint", "bench-smoke"),
)
STEPS = tuple(step for lane in LANES for step in lane)
# How a step runs: this command with the step's name appended.
COMMAND: tuple[str, ...] = ("make", "--no-print-directory")


@dataclass(frozen=True)
class Outcome:
    step: str
    code: int
    seconds: float
    log: Path
    # User + system CPU of the step and the descendants it waited for.
    cpu_seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.code == 0


_print_lock = threading.Lock()


def run_step(step: str, log_dir: Path = LOG_DIR) -> Outcome:
    """Run ``make <step>`` with its output in ``log_dir/<step>.log``; print that log when it ends."""
    log = log_dir / f"{step}.log"
    started = time.monotonic()
    with log.open("w", encoding="utf-8") as handle:
        child = subprocess.Popen(
            [*COMMAND, step], cwd=REPO, stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        # wait4, not Popen.wait: only it returns this child's own resource usage (the lanes' threads
        # each wait for their own child, so the process-wide RUSAGE_CHILDREN cannot tell them apart).
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = code = os.waitstatus_to_exitcode(status)
    outcome = Outcome(step, code, time.monotonic() - started, log, usage.ru_utime + usage.ru_stime)
    verdict = "ok" if outcome.passed else f"FAILED (exit {code})"
    with _print_lock:
        timing = f"{outcome.seconds:.0f} s ({outcome.cpu_seconds:.0f} s CPU)"
        print(f"===== make {step}: {verdict} in {timing} =====", flush=True)
        sys.stdout.write(log.read_text(encoding="utf-8", errors="replace"))
        print(f"===== end of make {step} ({verdict}; log {log.relative_to(REPO)}) =====", flush=True)
    return outcome


def run_lane(lane: Sequence[str], log_dir: Path = LOG_DIR) -> list[Outcome]:
    return [run_step(step, log_dir) for step in lane]


def lanes_of(steps: Sequence[str]) -> list[list[str]]:
    """The lanes restricted to ``steps`` (order within a lane kept, empty lanes dropped)."""
    known = [step for lane in LANES for step in lane]
    unknown = sorted(set(steps) - set(known))
    if unknown:
        raise SystemExit(f"unknown steps {unknown}; known: {known}")
    chosen = [[step for step in lane if step in steps] for lane in LANES]
    return [lane for lane in chosen if lane]


def summary(outcomes: Sequence[Outcome], seconds: float, cores: int | None = None) -> str:
    """The closing table: each step's result, wall and CPU time, then the run's wall time against the
    least wall time its CPU allows on ``cores`` cores."""
    cores = cores or os.cpu_count() or 1
    lines = [
        f"  {o.step:<16} {'ok' if o.passed else 'FAILED':<7} {o.seconds:7.0f} s  {o.cpu_seconds:7.0f} s CPU"
        for o in outcomes
    ]
    cpu = sum(o.cpu_seconds for o in outcomes)
    failed = [o.step for o in outcomes if not o.passed]
    verdict = f"FAILED: {', '.join(failed)}" if failed else "every step passed"
    return "\n".join(
        [
            "make test steps:",
            *lines,
            f"  {'wall':<16} {'':<7} {seconds:7.0f} s  {cpu:7.0f} s CPU  {verdict}",
            f"  {'CPU floor':<16} {'':<7} {cpu / cores:7.0f} s  (the steps' CPU over {cores} cores)",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m outreach_dev.ci_steps", description=__doc__)
    parser.add_argument("steps", nargs="*", help=f"steps to run (default: all of {list(STEPS)})")
    arguments = parser.parse_args(argv)
    lanes = lanes_of(arguments.steps or [step for lane in LANES for step in lane])
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=len(lanes)) as pool:
        outcomes = [o for lane in pool.map(lambda lane: run_lane(lane, LOG_DIR), lanes) for o in lane]
    print(summary(outcomes, time.monotonic() - started), flush=True)
    return 0 if all(o.passed for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
