"""``outreach scraper pause|resume|status``: the kill switch sets reserved concurrency 0 and restores it."""

from __future__ import annotations

import io
import zipfile

import boto3
import pytest

from outreach_operator.cli.scraper import PAUSED_FROM_TAG
from tests.outreach_operator.cli.conftest import Run, as_json
from tests.support.aws import REGION, Resources

FUNCTION = "outreach-test-scraper"


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("app.py", "def handler(event, context):\n    return None\n")
    return buffer.getvalue()


@pytest.fixture
def lam(resources: Resources) -> object:
    """The scraper function with the applied reservation of 140."""
    iam = boto3.client("iam", region_name=REGION)
    role = iam.create_role(RoleName="scraper", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    client = boto3.client("lambda", region_name=REGION)
    client.create_function(
        FunctionName=FUNCTION,
        Runtime="python3.12",
        Role=role,
        Handler="app.handler",
        Code={"ZipFile": _zip()},
    )
    client.put_function_concurrency(FunctionName=FUNCTION, ReservedConcurrentExecutions=140)
    return client


def _reserved() -> int | None:
    value = boto3.client("lambda", region_name=REGION).get_function_concurrency(FunctionName=FUNCTION)
    reserved = value.get("ReservedConcurrentExecutions")
    return None if reserved is None else int(reserved)


def test_pause_sets_reserved_concurrency_zero_and_resume_restores_the_reservation_it_had(
    run: Run, lam: object
) -> None:
    # WHEN the operator pauses the scraper
    paused = as_json(run("--json", "scraper", "pause", "--function", FUNCTION))
    # THEN its reserved concurrency is 0, and the one it had is remembered
    assert paused == {"function": FUNCTION, "before": 140, "after": 0, "dry_run": False}
    assert _reserved() == 0
    status = as_json(run("--json", "scraper", "status", "--function", FUNCTION))
    assert (status["paused"], status["paused_from"]) == (True, "140")
    # AND pausing again is refused as bad input
    assert run("scraper", "pause", "--function", FUNCTION).exit_code == 2
    # WHEN it is resumed
    resumed = as_json(run("--json", "scraper", "resume", "--function", FUNCTION))
    # THEN the reservation is 140 again and the remembered value is gone
    assert resumed["after"] == 140
    assert _reserved() == 140
    status = as_json(run("--json", "scraper", "status", "--function", FUNCTION))
    assert (status["paused"], status["paused_from"]) == (False, None)
    assert PAUSED_FROM_TAG not in status


def test_a_dry_run_pause_or_resume_changes_nothing(run: Run, lam: object) -> None:
    report = as_json(run("--json", "scraper", "pause", "--function", FUNCTION, "--dry-run"))
    assert (report["after"], report["dry_run"]) == (0, True)
    assert _reserved() == 140
    as_json(run("--json", "scraper", "pause", "--function", FUNCTION))
    report = as_json(run("--json", "scraper", "resume", "--function", FUNCTION, "--dry-run"))
    assert (report["after"], report["dry_run"]) == (140, True)
    assert _reserved() == 0


def test_resume_of_a_scraper_that_is_not_paused_is_refused(run: Run, lam: object) -> None:
    result = run("scraper", "resume", "--function", FUNCTION)
    assert result.exit_code == 2
    assert _reserved() == 140
