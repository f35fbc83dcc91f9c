"""`make test` runs its steps in lanes side by side: every step runs, a failure fails the whole run
and stays visible, and no step's output interleaves with another's."""

from __future__ import annotations

import re
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
