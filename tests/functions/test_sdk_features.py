"""The handlers' SDK needs are checked when a function starts: a runtime whose boto3 lacks a request
member the code sends fails its cold start, naming the member, instead of failing claimed sends."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from outreach import sdk_features
from outreach.errors import ConfigurationError

FUNCTIONS = Path(__file__).resolve().parents[2] / "functions"


def test_the_sdk_the_tests_run_with_has_every_feature_the_handlers_send() -> None:
    sdk_features.require(sdk_features.SES_SEND_EMAIL_HEADERS, sdk_features.SCHEDULER_ACTION_AFTER_COMPLETION)


def test_a_missing_request_member_is_refused_naming_it_and_the_sdk_version() -> None:
    absent = sdk_features.Feature("sesv2", "SendEmail", ("Content", "Simple", "Tracking"), "a test", "9.9.9")
    with pytest.raises(
        ConfigurationError, match=r"sesv2 SendEmail Content\.Simple\.Tracking \(a test, boto3 >= 9\.9\.9\)"
    ):
        sdk_features.require(sdk_features.SES_SEND_EMAIL_HEADERS, absent)


@pytest.mark.parametrize("module", ["outreach.email_worker", "outreach.reconcilers.email"])
def test_an_email_function_on_a_runtime_without_the_feature_fails_at_cold_start(module: str) -> None:
    # A fresh interpreter, as a cold start is: the runtime's botocore is made to lack every member.
    program = f"import outreach.sdk_features as f\nf.missing = lambda feature: True\nimport {module}\n"
    done = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        env={
            "PYTHONPATH": str(FUNCTIONS),
            "POWERTOOLS_TRACE_DISABLED": "1",
            "AWS_DEFAULT_REGION": "eu-central-1",
        },
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert "ConfigurationError: the runtime's AWS SDK" in done.stderr
