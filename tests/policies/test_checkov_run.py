"""The `make checkov` runner's verdict: failures, unexplained skips and unscanned modules fail it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from outreach_tools.checkov_run import RootResult, report, uncovered_modules
from tests.policies import checkov_report


def record(check_id: str, suppress_comment: str = "") -> dict[str, Any]:
    return {
        "check_id": check_id,
        "resource": "module.pipeline.aws_s3_bucket.this",
        "file_path": "/../../../modules/private-bucket/main.tf",
        "file_line_range": [5, 12],
        "check_result": {"result": "SKIPPED", "suppress_comment": suppress_comment},
        "check_name": "a check",
        "details": [],
    }


def test_clean_root_with_reasoned_skips_passes(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a root whose only skip carries a reason
    result = RootResult(
        root=Path("dev"), seconds=1.0, passed=10, skipped=[record("CKV_AWS_18", "no log bucket")]
    )
    # WHEN the runner judges it / THEN it passes
    assert report([result], []) == 0
    assert "10 passed, 0 failed, 1 skipped" in capsys.readouterr().out


@pytest.mark.parametrize("comment", ["", "No comment provided"])
def test_skip_without_reason_fails(comment: str, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a `#checkov:skip=ID` without a reason (checkov reports "No comment provided")
    result = RootResult(root=Path("dev"), seconds=1.0, skipped=[record("CKV_AWS_18", comment)])
    # WHEN the runner judges it / THEN it fails naming the check
    assert report([result], []) == 1
    assert "SKIPPED WITHOUT REASON CKV_AWS_18" in capsys.readouterr().out


def test_failed_check_and_parsing_error_fail(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a failed check with details, and a file checkov could not parse
    failed = record("CKV_OUT_001") | {"details": ["maximum_retry_attempts is not set"]}
    result = RootResult(root=Path("dev"), seconds=1.0, failed=[failed], parsing_errors=["/broken.tf"])
    # WHEN the runner judges it / THEN it fails and prints both with the details
    assert report([result], []) == 1
    output = capsys.readouterr().out
    assert "FAILED CKV_OUT_001" in output
    assert "- maximum_retry_attempts is not set" in output
    assert "PARSING ERROR /broken.tf" in output


def test_module_no_root_calls_is_reported_unscanned(tmp_path: Path) -> None:
    # GIVEN modules a (called by the root, and calling c) and b (called by nobody)
    for name in ("a", "b", "c"):
        (tmp_path / "modules" / name).mkdir(parents=True)
        (tmp_path / "modules" / name / "main.tf").write_text('resource "aws_sqs_queue" "q" {}\n')
    (tmp_path / "modules" / "a" / "calls.tf").write_text('module "c" {\n  source = "../c"\n}\n')
    root = tmp_path / "terraform" / "environments" / "dev"
    root.mkdir(parents=True)
    (root / "main.tf").write_text('module "a" {\n  source = "../../../modules/a"\n}\n')
    # WHEN coverage is computed / THEN only b is unscanned
    assert uncovered_modules([root], tmp_path / "modules") == [(tmp_path / "modules" / "b").resolve()]


def test_missing_checkov_venv_fails_the_policy_tests_with_the_make_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN no .venv-checkov
    monkeypatch.setattr(checkov_report, "CHECKOV", tmp_path / "absent" / "checkov")
    # WHEN a policy test asks for checkov / THEN it fails (not skips) and names `make checkov-venv`
    with pytest.raises(pytest.fail.Exception, match="make checkov-venv"):
        checkov_report.require_checkov()
