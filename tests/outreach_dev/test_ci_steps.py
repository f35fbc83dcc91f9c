"""`make test` runs its steps in lanes side by side: every step runs, a failure fails the whole run
and stays visible, and no step's output interleaves with another's."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from outreach_dev import ci_steps

# A step that prints its name on three lines, then passes unless its name starts with "bad".
STEP = (
    "import sys; name = sys.argv[1]; [print(name, i, flush=True) for i in range(3)]; "
    "sys.exit(name.startswith('bad'))"
)


@pytest.fixture
def fake_steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(ci_steps, "COMMAND", (sys.executable, "-c", STEP))
    monkeypatch.setattr(ci_steps, "LOG_DIR", tmp_path / "logs")
    monkeypatch.setattr(ci_steps, "REPO", tmp_path)
    monkeypatch.setattr(ci_steps, "LANES", (("first", "bad-second", "third"), ("other",)))
    return tmp_path / "logs"


def test_a_failing_step_fails_the_run_and_every_other_step_still_runs(
    fake_steps: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # WHEN the lanes run and the second step of the first lane fails
    code = ci_steps.main([])
    out = capsys.readouterr().out
    # THEN the run fails, the steps after the failure and in the other lane ran, and the table names it
    assert code == 1
    assert {p.name for p in fake_steps.iterdir()} == {"first.log", "bad-second.log", "third.log", "other.log"}
    assert "===== make bad-second: FAILED (exit 1)" in out
    assert re.search(r"bad-second\s+FAILED", out)
    assert "FAILED: bad-second" in out


def test_each_steps_output_is_printed_whole_between_its_own_header_and_footer(
    fake_steps: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ci_steps.main([]) == 1
    lines = capsys.readouterr().out.splitlines()
    for step in ("first", "bad-second", "third", "other"):
        start = next(i for i, line in enumerate(lines) if line.startswith(f"===== make {step}:"))
        assert lines[start + 1 : start + 4] == [f"{step} {i}" for i in range(3)]
        assert lines[start + 4].startswith(f"===== end of make {step} ")


def test_the_steps_of_make_test_are_the_lanes_steps_each_once() -> None:
    makefile = (Path(ci_steps.__file__).resolve().parents[2] / "Makefile").read_text(encoding="utf-8")
    listed = re.search(r"^test:.*## Everything CI runs: ([a-z -]+), side by side", makefile, re.M)
    assert listed is not None
    assert sorted(listed[1].split()) == sorted(ci_steps.STEPS)
    assert len(set(ci_steps.STEPS)) == len(ci_steps.STEPS)


# A step that waits 0.6 s in a child process, or (named "burn...") spends 0.6 s of CPU in one (counted
# by the CPU clock, so a loaded machine makes it longer, never smaller).
TIMED_STEP = (
    "import subprocess, sys; name = sys.argv[1]; "
    "work = 'import time\\nwhile time.process_time() < 0.6: pass' "
    "if name.startswith('burn') else 'import time; time.sleep(0.6)'; "
    "subprocess.run([sys.executable, '-c', work], check=True)"
)


def test_a_steps_cpu_time_counts_its_descendants_work_and_not_their_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN two lanes side by side: one step spends 0.6 s of CPU in a grandchild, the other sleeps
    monkeypatch.setattr(ci_steps, "COMMAND", (sys.executable, "-c", TIMED_STEP))
    monkeypatch.setattr(ci_steps, "LOG_DIR", tmp_path / "logs")
    monkeypatch.setattr(ci_steps, "REPO", tmp_path)
    monkeypatch.setattr(ci_steps, "LANES", (("burn",), ("sleep",)))
    # WHEN the lanes run
    assert ci_steps.main([]) == 0
    out = capsys.readouterr().out
    # THEN each step's CPU is its own subtree's: the busy one at least its 0.6 s, the waiting one
    # only its interpreters' start-ups (well under the busy one's)
    cpu = {m[1]: float(m[2]) for m in re.finditer(r"===== make (\w+): ok in \d+ s \((\d+) s CPU\)", out)}
    assert set(cpu) == {"burn", "sleep"}, out
    outcomes = {o.step: o for o in (ci_steps.run_step(s, tmp_path / "logs") for s in ("burn", "sleep"))}
    assert outcomes["burn"].cpu_seconds >= 0.5
    assert outcomes["sleep"].cpu_seconds < outcomes["burn"].cpu_seconds - 0.3
    assert re.search(r"CPU floor\s+\d+ s  \(the steps' CPU over \d+ cores\)", out)


def test_the_cpu_floor_is_the_steps_cpu_over_the_cores() -> None:
    outcomes = [
        ci_steps.Outcome("a", 0, 10.0, Path("a.log"), 300.0),
        ci_steps.Outcome("b", 0, 20.0, Path("b.log"), 500.0),
    ]
    table = ci_steps.summary(outcomes, 450.0, cores=2)
    assert re.search(r"wall\s+450 s\s+800 s CPU  every step passed", table), table
    assert re.search(r"CPU floor\s+400 s", table), table


def test_make_test_builds_both_virtual_environments_before_the_lanes_start(tmp_path: Path) -> None:
    # make -n prints what make test would run on a fresh clone (venvs named where none exists), and
    # still runs the recursive make that builds them, printing its commands in order.
    venv, checkov_venv = tmp_path / "venv", tmp_path / "venv-checkov"
    printed = subprocess.run(
        ["make", "-n", "--no-print-directory", "test", f"VENV={venv}", f"CHECKOV_VENV={checkov_venv}"],
        cwd=ci_steps.REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.splitlines()
    lanes = next(i for i, line in enumerate(printed) if "-m outreach_dev.ci_steps" in line)
    before = "\n".join(printed[:lanes])
    assert f"-m venv {venv}" in before
    assert f"-m venv {checkov_venv}" in before
    assert "-j2" in before
