"""``--cpu-summary`` counts each test's CPU where it runs, children included, and sums it by folder
and by worker group (tests/support/cpu_accounting.py)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.support import cpu_accounting
from tests.support.cpu_accounting import Spent

pytest_plugins = ("pytester",)

CONFTEST = """
from tests.support import cpu_accounting

def pytest_addoption(parser):
    cpu_accounting.add_option(parser)

def pytest_configure(config):
    cpu_accounting.configure(config)
"""
# One test spends 0.6 s of CPU in a child process (counted by the CPU clock, so load makes it longer,
# never smaller); the other waits 0.6 s in one.
CHILD = (
    "import subprocess, sys\n\ndef run(code):\n    subprocess.run([sys.executable, '-c', code], check=True)\n"
)
BURN = CHILD + "\ndef test_burn():\n    run('import time\\nwhile time.process_time() < 0.6: pass')\n"
WAIT = CHILD + "\ndef test_wait():\n    run('import time; time.sleep(0.6)')\n"


def folder_cpu(output: str) -> dict[str, float]:
    return {m[2]: float(m[1]) for m in re.finditer(r"^\s+([\d.]+)\s+[\d.]+\s+\d+\s+(\S+\.py)$", output, re.M)}


# Child pytest runs, one with two xdist workers: seconds on a quiet machine, more beside others.
@pytest.mark.timeout(600)
@pytest.mark.parametrize("workers", [["-n", "2"], ["-p", "no:xdist"]], ids=["xdist", "serial"])
def test_each_tests_cpu_is_counted_once_where_it_runs_with_the_processes_it_waited_for(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: list[str]
) -> None:
    # GIVEN a test that burns CPU in a child process and one that waits in one
    repo = Path(__file__).resolve().parents[1]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(str(repo / p) for p in ("", "functions", "scripts")))
    monkeypatch.delenv(cpu_accounting.DIRECTORY_ENV, raising=False)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_burn=BURN, test_wait=WAIT)
    # WHEN they run with the summary asked for
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *workers, "--cpu-summary")
    # THEN each is counted once (never again by an xdist controller relaying it), the burning one
    # with at least the CPU its child spent, the waiting one with little more than interpreter starts
    result.assert_outcomes(passed=2)
    output = "\n".join(result.outlines)
    assert "2 tests:" in output, output
    cpu = folder_cpu(output)
    assert cpu["test_burn.py"] >= 0.6, output
    assert cpu["test_wait.py"] < cpu["test_burn.py"] - 0.3, output


def test_without_the_option_nothing_is_counted(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(cpu_accounting.DIRECTORY_ENV, raising=False)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_wait=WAIT)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist")
    result.assert_outcomes(passed=1)
    assert "CPU by test folder" not in "\n".join(result.outlines)
    assert cpu_accounting.DIRECTORY_ENV not in os.environ


def test_the_summary_sums_cpu_and_wall_by_folder_and_by_group_most_cpu_first() -> None:
    spent = [
        Spent("tests/e2e/test_a.py::test_one", "tests/e2e", 10.0, 3.0, 4.0),
        Spent("tests/e2e/test_b.py::test_two", "tests/e2e", 5.0, 1.0, 0.0),
        Spent("tests/functions/test_c.py::test_three[a@b]", "-", 2.0, 9.0, 0.5),
    ]
    lines = cpu_accounting.summary(spent)
    assert (
        lines[0]
        == "3 tests: 17.5 s CPU (13.0 s in the test processes, 4.5 s in the processes they waited for)"
    )
    folders = lines[1 : lines.index(next(line for line in lines if line.endswith("group")))]
    assert [line.split() for line in folders[1:]] == [
        ["9.5", "2.0", "1", "tests/functions"],
        ["8.0", "15.0", "2", "tests/e2e"],
    ]
    groups = lines[len(folders) + 2 :]
    assert [line.split() for line in groups] == [["9.5", "2.0", "1", "-"], ["8.0", "15.0", "2", "tests/e2e"]]
