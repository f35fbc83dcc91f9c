"""`make preflight ENV=local` against the embedded AWS: the local root's real plan, a real moto server.

The root's settings are read once (``planned_root.read_root_plan``: a plan of the local root on a
scratch emulator); the checks then run through the command's ``main`` against a moto server on
loopback, as ``make preflight ENV=local --endpoint-url ...`` runs them.
"""

from __future__ import annotations

import io
import json
import urllib.request
import zipfile
from collections.abc import Iterator

import pytest

from embedded_aws.base import client
from embedded_aws.lambda_account_settings import set_concurrency_limit
from embedded_aws.server import embedded_aws
from outreach_dev.planned_root import RootPlan, read_root_plan
from outreach_operator import preflight


@pytest.fixture(scope="module")
def local_plan() -> RootPlan:
    return read_root_plan("local")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with embedded_aws() as endpoint:
        yield endpoint


@pytest.fixture
def endpoint(server: str, local_plan: RootPlan) -> Iterator[str]:
    """A clean emulator for one test, at the account limit AWS gives by default."""
    yield server
    assert local_plan.region is not None
    set_concurrency_limit(local_plan.region, None)
    request = urllib.request.Request(f"{server}/moto-api/reset", method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200


def hold_reservation(endpoint: str, region: str, function: str, reserved: int) -> None:
    """What `make local` leaves: the root's function, holding its reservation."""
    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as archive:
        archive.writestr("app.py", "def handler(event, context):\n    return None\n")
    role = client("iam", endpoint, region).create_role(RoleName="held", AssumeRolePolicyDocument="{}")
    lam = client("lambda", endpoint, region)
    lam.create_function(
        FunctionName=function,
        Runtime="python3.12",
        Role=role["Role"]["Arn"],
        Handler="app.handler",
        Code={"ZipFile": code.getvalue()},
    )
    lam.put_function_concurrency(FunctionName=function, ReservedConcurrentExecutions=reserved)


def run(endpoint: str, plan: RootPlan, *extra: str) -> int:
    return preflight.main(["--env", "local", "--endpoint-url", endpoint, *extra], read_root=lambda env: plan)


def test_the_local_roots_plan_gives_its_region_and_its_reservations(local_plan: RootPlan) -> None:
    assert local_plan.region == "eu-central-1"
    assert local_plan.reservations == {
        "outreach-local-scraper": 140,
        "outreach-local-dispatcher": None,
        "outreach-local-scrape-reconciler": None,
        # ceil(max_send_rate), modules/email's default of 14 emails per second.
        "outreach-local-email-worker": 14,
        "outreach-local-email-reconciler": None,
        # modules/email-feedback: the SES event consumer and the one-click unsubscribe endpoint.
        "outreach-local-ses-event-consumer": 5,
        "outreach-local-unsubscribe": 10,
        # modules/email: the sending guard, one pause at a time.
        "outreach-local-sending-guard": 1,
    }


def test_preflight_local_passes_on_the_embedded_aws_with_the_stack_up(
    endpoint: str, local_plan: RootPlan, capsys: pytest.CaptureFixture[str]
) -> None:
    assert local_plan.region is not None
    hold_reservation(endpoint, local_plan.region, "outreach-local-scraper", 140)

    code = run(endpoint, local_plan, "--json")

    report = json.loads(capsys.readouterr().out)
    statuses = {c["check"]: c["status"] for c in report["checks"]}
    assert code == 0, report
    assert report["passed"] is True
    assert statuses == {
        "terraform": "PASS",
        "backend": "SKIP",
        "root": "PASS",
        "credentials": "PASS",
        "concurrency": "PASS",
        "email": "SKIP",
        "receiving": "SKIP",
    }
    concurrency = next(c for c in report["checks"] if c["check"] == "concurrency")
    assert concurrency["detail"].startswith(
        "limit 1000, unreserved 860; local reserves 170 (its functions hold 140 now), leaving 830"
    )


def test_preflight_local_fails_with_the_concurrency_line_when_the_account_limit_is_too_small(
    endpoint: str, local_plan: RootPlan, capsys: pytest.CaptureFixture[str]
) -> None:
    assert local_plan.region is not None
    set_concurrency_limit(local_plan.region, 200)

    code = run(endpoint, local_plan)

    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    failed = [line for line in lines if line.startswith("FAIL")]
    assert failed == [
        "FAIL  concurrency  limit 200, unreserved 200; local reserves 170, leaving 30: "
        "AWS refuses a reservation that leaves fewer than 100 unreserved"
    ]
    fix = lines[lines.index(failed[0]) + 1].strip()
    assert fix.startswith("what to do: raise Lambda concurrent executions in eu-central-1 to at least 270")
    assert lines[-1] == "preflight local: a check failed"
