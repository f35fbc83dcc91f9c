"""``make checkov``: checkov's built-in checks plus ``policies/`` over every environment root.

Each root is scanned on its own, offline, so module variables render with that environment's
values (a module scanned alone would leave them unresolved, and the CKV_OUT_* rules fail closed on
unresolved values). The run fails when any check fails, when checkov cannot parse a file, when a
check is skipped without a written reason, when a module under ``modules/`` is not reached from
any root, or when a module call's source is not available (a registry module before ``terraform
init``): checkov would leave that module's resources out without a word. Modules that ``terraform
init`` downloaded into a root's ``.terraform/modules`` are scanned with the root. checkov itself
lives in ``.venv-checkov`` (``make checkov-venv``).

Run: ``python -m outreach_dev.checkov_run [ROOT ...]`` (default: ``terraform/environments/*``);
any Terraform root works, also one outside this repository.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from outreach_dev.checkov_module_sources import ModuleCall, prepared_root

REPO_ROOT = Path(__file__).resolve().parents[2]
CHECKOV = REPO_ROOT / ".venv-checkov" / "bin" / "checkov"
POLICIES = REPO_ROOT / "policies"
MODULES = REPO_ROOT / "modules"
ENVIRONMENTS = REPO_ROOT / "terraform" / "environments"

_MODULE_SOURCE = re.compile(r'^\s*source\s*=\s*"(\.{1,2}/[^"]*)"', re.MULTILINE)
# checkov writes this when a skip comment carries no text after the check id.
_NO_REASON = {"", "no comment provided"}


@dataclass
class RootResult:
    root: Path
    seconds: float
    passed: int = 0
    passed_records: list[dict[str, Any]] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    parsing_errors: list[str] = field(default_factory=list)
    unavailable_modules: list[ModuleCall] = field(default_factory=list)
    error: str = ""


def local_module_dirs(root: Path) -> set[Path]:
    """Module directories reached from ``root`` through local ``source = "./..."`` paths."""
    reached: set[Path] = set()
    pending = [root.resolve()]
    while pending:
        directory = pending.pop()
        for tf_file in sorted(directory.glob("*.tf")):
            for source in _MODULE_SOURCE.findall(tf_file.read_text(encoding="utf-8")):
                target = (directory / source).resolve()
                if target.is_dir() and target not in reached:
                    reached.add(target)
                    pending.append(target)
    return reached


def uncovered_modules(roots: Iterable[Path], modules_dir: Path = MODULES) -> list[Path]:
    """Module folders with Terraform files that no environment root calls."""
    if not modules_dir.is_dir():
        return []
    reached: set[Path] = set()
    for root in roots:
        reached |= local_module_dirs(root)
    modules = {path.parent.resolve() for path in modules_dir.rglob("*.tf") if ".terraform" not in path.parts}
    return sorted(modules - reached)


def scan(root: Path, checkov: Path = CHECKOV) -> RootResult:
    started = time.monotonic()
    with prepared_root(root) as prepared:
        completed = _run_checkov(checkov, prepared.directory)
    result = RootResult(
        root=root, seconds=time.monotonic() - started, unavailable_modules=prepared.unavailable
    )
    return _read_report(completed, result)


def _run_checkov(checkov: Path, directory: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            str(checkov),
            "--directory",
            str(directory),
            "--framework",
            "terraform",
            "--external-checks-dir",
            str(POLICIES),
            "--skip-download",
            "--output",
            "json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )


def _read_report(completed: subprocess.CompletedProcess[str], result: RootResult) -> RootResult:
    if completed.returncode not in (0, 1):
        result.error = f"checkov exited {completed.returncode}: {completed.stderr.strip()[-2000:]}"
        return result
    try:
        document = json.loads(completed.stdout) if completed.stdout.strip() else []
    except ValueError:
        result.error = f"checkov printed no JSON report: {completed.stdout[:500]}{completed.stderr[-1000:]}"
        return result
    for report in document if isinstance(document, list) else [document]:
        if not isinstance(report, dict) or "results" not in report:
            continue
        results = report["results"]
        result.passed += len(results.get("passed_checks", []))
        result.passed_records.extend(results.get("passed_checks", []))
        result.failed.extend(results.get("failed_checks", []))
        result.skipped.extend(results.get("skipped_checks", []))
        result.parsing_errors.extend(results.get("parsing_errors", []))
    if "Failed to run check" in completed.stderr or "Cannot load external check" in completed.stderr:
        result.error = "a check crashed or did not load:\n" + completed.stderr.strip()[-4000:]
    return result


def _where(record: dict[str, Any]) -> str:
    lines = record.get("file_line_range") or ["?", "?"]
    location = f"{record.get('file_path', '?')}:{lines[0]}-{lines[1]}"
    caller = record.get("caller_file_path")
    return f"{location} (called from {caller})" if caller else location


def skip_reason(record: dict[str, Any]) -> str:
    check_result = record.get("check_result") or {}
    return str(check_result.get("suppress_comment") or "").strip()


def report(results: Sequence[RootResult], uncovered: Sequence[Path]) -> int:
    status = 0
    for result in results:
        unexplained = [r for r in result.skipped if skip_reason(r).lower() in _NO_REASON]
        print(
            f"checkov {result.root}: {result.passed} passed, {len(result.failed)} failed, "
            f"{len(result.skipped)} skipped, {len(result.parsing_errors)} parsing errors "
            f"({result.seconds:.1f} s)"
        )
        if result.error:
            status = 1
            print(f"  ERROR {result.error}")
        for record in result.failed:
            status = 1
            print(f"  FAILED {record['check_id']} {record['resource']} at {_where(record)}")
            print(f"         {record.get('check_name', '')}")
            for detail in record.get("details") or []:
                print(f"         - {detail}")
        for path in result.parsing_errors:
            status = 1
            print(f"  PARSING ERROR {path}")
        for record in unexplained:
            status = 1
            print(f"  SKIPPED WITHOUT REASON {record['check_id']} {record['resource']} at {_where(record)}")
        for call in result.unavailable_modules:
            status = 1
            print(
                f'  MODULE SOURCE NOT AVAILABLE module.{call.key} (source "{call.source}", {call.file}): '
                "its resources are not scanned; run `terraform init` in the root first"
            )
    for module in uncovered:
        status = 1
        print(f"  NOT SCANNED {module}: no environment root calls this module, so checkov never renders it")
    return status


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m outreach_dev.checkov_run",
        description="checkov built-in checks and policies/ over every environment root.",
    )
    parser.add_argument("roots", nargs="*", type=Path)
    parser.add_argument("--list-skips", action="store_true", help="print every skipped check and its reason")
    arguments = parser.parse_args(argv)
    roots: list[Path] = arguments.roots or sorted(p for p in ENVIRONMENTS.glob("*") if p.is_dir())
    if not roots:
        print(f"checkov: no Terraform roots found under {ENVIRONMENTS}", file=sys.stderr)
        return 1
    if not CHECKOV.exists():
        print(f"checkov: {CHECKOV} is missing; run `make checkov-venv`", file=sys.stderr)
        return 1
    results = [scan(root) for root in roots]
    status = report(results, uncovered_modules(roots) if not arguments.roots else [])
    if arguments.list_skips:
        for result in results:
            for record in result.skipped:
                where = f"{record['resource']} ({result.root.name})"
                print(f"  skip {record['check_id']} {where}: {skip_reason(record)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
