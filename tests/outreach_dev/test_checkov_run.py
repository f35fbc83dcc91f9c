"""The `make checkov` runner's verdict: failed checks, reasonless skips, missing modules fail it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from outreach_dev.checkov_run import RootResult, report, scan, uncovered_modules
from tests.policies import checkov_report
from tests.policies.conftest import FIXTURES


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


def _registry_root(tmp_path: Path, *, initialised: bool) -> Path:
    """The cause-7 fixture root next to the registry-shaped modules, optionally after `terraform init`."""
    for folder in ("i16_cause_7_registry_module_sources", "registry_shaped_modules"):
        shutil.copytree(FIXTURES / folder, tmp_path / folder)
    root = tmp_path / "i16_cause_7_registry_module_sources"
    if initialised:
        downloaded = root / ".terraform" / "modules" / "intake_queue"
        shutil.copytree(tmp_path / "registry_shaped_modules" / "sqs", downloaded)
        listing = {
            "Modules": [
                {"Key": "", "Source": "", "Dir": "."},
                {
                    "Key": "intake_queue",
                    "Source": "registry.terraform.io/terraform-aws-modules/sqs/aws",
                    "Version": "4.2.0",
                    "Dir": ".terraform/modules/intake_queue",
                },
            ]
        }
        (root / ".terraform" / "modules" / "modules.json").write_text(json.dumps(listing))
    return root


def _custom_verdicts(result: RootResult) -> set[tuple[str, str, str]]:
    return {
        (record["check_id"], record["resource"], record["check_result"]["result"])
        for record in result.passed_records + result.failed
        if record["check_id"].startswith("CKV_OUT_")
    }


def test_a_module_call_whose_source_is_not_on_disk_fails_the_run_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a root calling a registry module before `terraform init` (cause 7)
    checkov_report.require_checkov()
    root = _registry_root(tmp_path, initialised=False)
    # WHEN the runner scans it
    result = scan(root)
    # THEN the call is named as unavailable, the mapping reading its output fails closed, and the
    # run does not pass
    assert [(call.key, call.source) for call in result.unavailable_modules] == [
        ("intake_queue", "terraform-aws-modules/sqs/aws")
    ]
    mapping = 'module.intake_worker.aws_lambda_event_source_mapping.this["intake"]'
    assert _custom_verdicts(result) == {
        ("CKV_OUT_001", mapping, "FAILED"),
        ("CKV_OUT_002", mapping, "FAILED"),
        ("CKV_OUT_008", mapping, "FAILED"),
    }
    assert report([result], []) == 1
    assert "MODULE SOURCE NOT AVAILABLE module.intake_queue" in capsys.readouterr().out


def test_modules_downloaded_by_terraform_init_are_scanned_with_their_root(tmp_path: Path) -> None:
    # GIVEN the same root after `terraform init` placed the module in .terraform/modules
    checkov_report.require_checkov()
    root = _registry_root(tmp_path, initialised=True)
    # WHEN the runner scans it
    result = scan(root)
    # THEN nothing is unavailable and the rules judge the registry module's queue and its consumer
    assert result.unavailable_modules == []
    queue = "module.intake_queue.aws_sqs_queue"
    assert _custom_verdicts(result) == {
        ("CKV_OUT_002", 'module.intake_worker.aws_lambda_event_source_mapping.this["intake"]', "PASSED"),
        ("CKV_OUT_003", f"{queue}.this[0]", "PASSED"),
        ("CKV_OUT_004", f"{queue}.this[0]", "PASSED"),
        ("CKV_OUT_007", f"{queue}.dlq[0]", "FAILED"),
    }
    # AND the root itself is left as it was (the scan works on a copy)
    assert 'source                        = "terraform-aws-modules/sqs/aws"' in (root / "main.tf").read_text()
