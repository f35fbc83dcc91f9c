"""Run checkov from its own virtual environment and read its JSON report.

checkov pins dependencies that clash with the project's (an old boto3), so it lives in
``.venv-checkov`` (``make checkov-venv``) and the tests call it as a subprocess.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
CHECKOV = REPO_ROOT / ".venv-checkov" / "bin" / "checkov"
POLICIES = REPO_ROOT / "policies"
CUSTOM_CHECK_IDS = tuple(f"CKV_OUT_{number:03d}" for number in range(1, 10))


@dataclass
class Outcomes:
    passed: set[str] = field(default_factory=set)
    failed: set[str] = field(default_factory=set)
    details: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Record:
    state: str  # "passed" or "failed"
    check_id: str
    resource: str
    file_path: str  # file of the resource block, relative to the scanned directory


@dataclass
class CheckovReport:
    """Results keyed by check id and root folder (first path part under the scanned directory)."""

    results: dict[tuple[str, str], Outcomes]
    records: list[Record]
    summary: dict[str, Any]
    stderr: str
    seconds: float

    def of(self, check_id: str, root: str) -> Outcomes:
        return self.results.get((check_id, root), Outcomes())


def require_checkov() -> Path:
    if not CHECKOV.exists():
        pytest.fail(
            f"{CHECKOV} is missing: run `make checkov-venv` (checkov lives in its own virtual environment)"
        )
    return CHECKOV


def run_checkov(directory: Path, checks: Iterable[str] | None = CUSTOM_CHECK_IDS) -> CheckovReport:
    """One offline checkov run over ``directory`` with the project's policies loaded.

    ``checks=None`` runs every check, built-in ones included.
    """
    checkov = require_checkov()
    started = time.monotonic()
    selection = [] if checks is None else ["--check", ",".join(checks)]
    completed = subprocess.run(
        [
            str(checkov),
            "--directory",
            str(directory),
            "--framework",
            "terraform",
            "--external-checks-dir",
            str(POLICIES),
            *selection,
            "--skip-download",
            "--output",
            "json",
        ],
        capture_output=True,
        text=True,
        check=False,
        # A hang bound, not a speed target: under make test's lanes and two CPU hogs the mutated
        # modules' scan took 604 s of wall time on 2 cores (it takes about 60 s alone).
        timeout=1800,
    )
    seconds = time.monotonic() - started
    if completed.returncode not in (0, 1):
        pytest.fail(f"checkov exited {completed.returncode}:\n{completed.stderr[-4000:]}")
    document = json.loads(completed.stdout) if completed.stdout.strip() else []
    reports = [item for item in (document if isinstance(document, list) else [document]) if "results" in item]
    results: dict[tuple[str, str], Outcomes] = {}
    records: list[Record] = []
    summary: dict[str, Any] = {}
    for report in reports:
        summary = report.get("summary", {}) or summary
        for state in ("passed", "failed"):
            for record in report.get("results", {}).get(f"{state}_checks", []):
                origin = record.get("caller_file_path") or record["file_path"]
                root = Path(origin.lstrip("/")).parts[0]
                outcomes = results.setdefault((record["check_id"], root), Outcomes())
                getattr(outcomes, state).add(record["resource"])
                outcomes.details[record["resource"]] = list(record.get("details") or [])
                records.append(Record(state, record["check_id"], record["resource"], record["file_path"]))
    return CheckovReport(
        results=results, records=records, summary=summary, stderr=completed.stderr, seconds=seconds
    )
