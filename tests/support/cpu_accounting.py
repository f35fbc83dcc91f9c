"""Each test's CPU time, and the run's CPU summed by test folder and by worker group (``--cpu-summary``).

``make test`` shares 2 cores between its lanes and workers, and its time followed its CPU (docs/ci.md):
this says where the CPU goes. A test's CPU is counted from the moment its setup starts to the end of its
teardown, in the process that runs it: the process's own CPU (every thread of it: the embedded AWS
server, pollers and function runtimes living there) plus that of every child process it waited for
in that time (Terraform, checkov, the functions' interpreters). A costly shared fixture is counted
on the test that built it.

Each process that runs tests (every xdist worker, or the one process of a serial run) writes one JSON
line per test to a directory the run creates; at the end the process that reports (the controller
under xdist) prints the sums and removes the directory.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import TextIO

import pytest

OPTION = "--cpu-summary"
NAME = "cpu-accounting"
# Where the run's per-test lines go: set by the run's first process, inherited by its workers.
DIRECTORY_ENV = "OUTREACH_TEST_CPU_DIR"
# Rows of each table printed.
ROWS = 12


@dataclass(frozen=True)
class Spent:
    """One test's wall and CPU seconds."""

    nodeid: str
    # The xdist group it was scheduled in (tests/support/worker_groups.py), "-" for none.
    group: str
    wall: float
    own: float
    children: float

    @property
    def cpu(self) -> float:
        return self.own + self.children

    @property
    def folder(self) -> str:
        """The test's top two path parts: ``tests/e2e``, ``tests/test_worker_groups.py``."""
        return "/".join(self.nodeid.split("::", 1)[0].split("/")[:2])


def _cpu_now() -> tuple[float, float]:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time(), children.ru_utime + children.ru_stime


class CpuAccounting:
    """The plugin: one per process; ``reports`` in the process that prints the summary."""

    def __init__(self, directory: Path, *, reports: bool) -> None:
        self.directory = directory
        self.reports = reports
        self._out: TextIO | None = None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        """Around a test's setup, call and teardown, in the process that runs it (an xdist
        controller only relays other processes' reports: it runs no protocol)."""
        wall, (own, children) = time.monotonic(), _cpu_now()
        mark = item.get_closest_marker("xdist_group")
        group = str(mark.args[0]) if mark is not None and mark.args else "-"
        try:
            return (yield)
        finally:
            own_now, children_now = _cpu_now()
            self._write(
                {
                    "nodeid": item.nodeid,
                    "group": group,
                    "wall": time.monotonic() - wall,
                    "own": own_now - own,
                    "children": children_now - children,
                }
            )

    def _write(self, line: dict[str, object]) -> None:
        if self._out is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._out = (self.directory / f"{os.getpid()}.jsonl").open("a", encoding="utf-8")
        self._out.write(json.dumps(line) + "\n")
        self._out.flush()

    def pytest_unconfigure(self) -> None:
        if self._out is not None:
            self._out.close()
        if self.reports:
            shutil.rmtree(self.directory, ignore_errors=True)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.reports:
            return
        spent = list(read(self.directory))
        terminalreporter.write_sep("=", "CPU by test folder and by worker group")
        for line in summary(spent):
            terminalreporter.write_line(line)


def read(directory: Path) -> Iterator[Spent]:
    """Every test line the run's processes wrote."""
    for path in sorted(directory.glob("*.jsonl")):
        for text in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(text)
            yield Spent(row["nodeid"], row["group"], row["wall"], row["own"], row["children"])


def summary(spent: Iterable[Spent], rows: int = ROWS) -> list[str]:
    """The totals, then the folders and the groups with the most CPU, ``rows`` of each."""
    tests = list(spent)
    total = sum(s.cpu for s in tests)
    lines = [
        f"{len(tests)} tests: {total:.1f} s CPU ({sum(s.own for s in tests):.1f} s in the test processes, "
        f"{sum(s.children for s in tests):.1f} s in the processes they waited for)"
    ]
    for title, key in (("folder", attrgetter("folder")), ("group", attrgetter("group"))):
        cpu: dict[str, float] = defaultdict(float)
        wall: dict[str, float] = defaultdict(float)
        count: dict[str, int] = defaultdict(int)
        for s in tests:
            cpu[key(s)] += s.cpu
            wall[key(s)] += s.wall
            count[key(s)] += 1
        lines.append(f"{'CPU s':>8} {'wall s':>8} {'tests':>6}  {title}")
        ranked = sorted(cpu, key=lambda n: (-cpu[n], n))[:rows]
        lines.extend(f"{cpu[n]:8.1f} {wall[n]:8.1f} {count[n]:6d}  {n}" for n in ranked)
    return lines


def add_option(parser: pytest.Parser) -> None:
    parser.addoption(
        OPTION,
        action="store_true",
        default=False,
        help="print the run's CPU time by test folder and by worker group (tests/support/cpu_accounting.py)",
    )


def configure(config: pytest.Config) -> None:
    """Register the plugin when the run asks for the summary (the workers inherit the option)."""
    if not config.getoption(OPTION.lstrip("-").replace("-", "_")):
        return
    inherited = os.environ.get(DIRECTORY_ENV)
    worker = hasattr(config, "workerinput")
    if worker and inherited:
        directory, reports = Path(inherited), False
    else:
        # The run's first process: a fresh directory its xdist workers, started later, inherit.
        directory, reports = Path(tempfile.mkdtemp(prefix="outreach-test-cpu-")), True
        os.environ[DIRECTORY_ENV] = str(directory)
    config.pluginmanager.register(CpuAccounting(directory, reports=reports), NAME)
