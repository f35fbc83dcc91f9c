"""Each preflight check passes on a ready account and fails, with what to do, on the one thing it checks.

The account is moto in-process, taught GetAccountSettings and SES's GetAccount as the embedded AWS is
(embedded_aws.lambda_account_settings, embedded_aws.ses_account); the root's settings are given as its plan
would give them (tests/outreach_operator/test_preflight_local.py reads them from a real plan).
"""

from __future__ import annotations

import io
import shutil
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from embedded_aws.lambda_account_settings import report_account_settings, set_concurrency_limit
from embedded_aws.ses_account import (
    report_ses_account,
    set_identity_verification,
    set_ses_account,
)
from outreach_dev import terraform_cli
from outreach_dev.planned_root import PlannedResource, RootPlan
from outreach_operator import preflight
from outreach_operator.preflight import Preflight, Status
from tests.support.aws import REGION

SCRAPER = "outreach-dev-scraper"
MOTO_ACCOUNT = "123456789012"
SENDER = "mail.example.com"


def root_plan(
    *,
    scraper_reserved: int = 140,
    allowed: tuple[str, ...] = (),
    values: Mapping[str, Any] | None = None,
    resources: tuple[PlannedResource, ...] = (),
) -> RootPlan:
    return RootPlan(
        env="dev",
        region=REGION,
        allowed_account_ids=allowed,
        reservations={SCRAPER: scraper_reserved, "outreach-dev-dispatcher": None},
        values=dict(values or {}),
        resources=resources,
    )


@pytest.fixture
def account(aws_env: None) -> Iterator[None]:
    report_account_settings()
    report_ses_account()
    with mock_aws():
        yield
    set_concurrency_limit(REGION, None)
    set_ses_account(REGION)


def checked(plan: RootPlan, *, region: str | None = REGION) -> Preflight:
    """A context whose credentials check has run (and passed, unless the test wants otherwise)."""
    ctx = Preflight(env="dev", root=terraform_cli.environment_dir("dev"), region=region, plan=plan)
    preflight.check_credentials(ctx)
    return ctx


def existing_function(name: str, reserved: int) -> None:
    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as archive:
        archive.writestr("app.py", "def handler(event, context):\n    return None\n")
    role = boto3.client("iam").create_role(RoleName="fn", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    lam = boto3.client("lambda", region_name=REGION)
    lam.create_function(
        FunctionName=name,
        Runtime="python3.12",
        Role=role,
        Handler="app.handler",
        Code={"ZipFile": code.getvalue()},
    )
    lam.put_function_concurrency(FunctionName=name, ReservedConcurrentExecutions=reserved)


# --- concurrency ---


def test_concurrency_passes_when_100_stay_unreserved_after_the_roots_reservations(account: None) -> None:
    result = preflight.check_concurrency(checked(root_plan(scraper_reserved=140)))

    assert result.status is Status.PASS, result
    assert "limit 1000, unreserved 1000; dev reserves 140, leaving 860" in result.detail


def test_concurrency_fails_with_the_quota_to_request_when_fewer_than_100_would_stay_unreserved(
    account: None,
) -> None:
    set_concurrency_limit(REGION, 200)

    result = preflight.check_concurrency(checked(root_plan(scraper_reserved=140)))

    assert result.status is Status.FAIL
    assert "limit 200, unreserved 200; dev reserves 140, leaving 60" in result.detail
    assert "fewer than 100 unreserved" in result.detail
    assert result.fix is not None
    assert "--quota-code L-B99A9384 --desired-value 240" in result.fix


def test_concurrency_counts_the_reservations_the_roots_functions_already_hold(account: None) -> None:
    set_concurrency_limit(REGION, 240)
    existing_function(SCRAPER, 140)  # unreserved is now 100: the re-apply keeps it there

    result = preflight.check_concurrency(checked(root_plan(scraper_reserved=140)))

    assert result.status is Status.PASS, result
    assert "(its functions hold 140 now), leaving 100" in result.detail


def test_concurrency_counts_only_the_growth_of_a_reservation_already_held(account: None) -> None:
    set_concurrency_limit(REGION, 240)
    existing_function(SCRAPER, 140)

    result = preflight.check_concurrency(checked(root_plan(scraper_reserved=141)))

    assert result.status is Status.FAIL
    assert "leaving 99" in result.detail


def test_concurrency_counts_a_reservation_the_root_gives_up_as_freed(account: None) -> None:
    set_concurrency_limit(REGION, 240)
    existing_function("outreach-dev-dispatcher", 100)  # the plan leaves the dispatcher unreserved

    result = preflight.check_concurrency(checked(root_plan(scraper_reserved=140)))

    assert result.status is Status.PASS, result
    assert "unreserved 140; dev reserves 140 (its functions hold 100 now), leaving 100" in result.detail


# --- credentials ---


def test_credentials_pass_for_the_allowed_account_in_the_roots_region(account: None) -> None:
    ctx = Preflight(env="dev", root=Path("."), region=REGION, plan=root_plan(allowed=(MOTO_ACCOUNT,)))

    result = preflight.check_credentials(ctx)

    assert result.status is Status.PASS, result
    assert f"account {MOTO_ACCOUNT} (pinned by allowed_account_ids), region {REGION}" in result.detail
    assert ctx.credentials_ok


def test_credentials_fail_for_an_account_the_root_does_not_allow(account: None) -> None:
    ctx = Preflight(env="dev", root=Path("."), region=REGION, plan=root_plan(allowed=("111122223333",)))

    result = preflight.check_credentials(ctx)

    assert result.status is Status.FAIL
    assert f"account {MOTO_ACCOUNT}" in result.detail and "dev deploys to 111122223333" in result.detail
    assert not ctx.credentials_ok


def test_credentials_fail_when_the_sessions_region_is_not_the_roots(account: None) -> None:
    ctx = Preflight(env="dev", root=Path("."), region="us-west-2", plan=root_plan())

    result = preflight.check_credentials(ctx)

    assert result.status is Status.FAIL
    assert f"the session's region is us-west-2; dev deploys to {REGION}" in result.detail
    assert result.fix == f"export AWS_REGION={REGION} (the aws and outreach commands use it)"


def test_credentials_fail_when_none_can_be_found(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    ctx = Preflight(env="dev", root=Path("."), region=REGION, plan=root_plan())

    result = preflight.check_credentials(ctx)

    assert result.status is Status.FAIL
    assert "no usable AWS credentials" in result.detail
    assert result.fix is not None and "AWS_PROFILE" in result.fix


def test_checks_that_need_the_root_are_skipped_when_it_does_not_plan() -> None:
    ctx = Preflight(env="dev", root=Path("."), plan_error="Invalid value for variable: prod needs someone")

    results = [check(ctx) for check in (preflight.check_root, preflight.check_credentials)]
    later = [check(ctx) for check in (preflight.check_concurrency, preflight.check_email)]

    assert results[0].status is Status.FAIL
    assert results[0].detail == "the root does not plan: Invalid value for variable: prod needs someone"
    assert [r.status for r in [results[1], *later]] == [Status.SKIP] * 3


# --- backend ---


def backend_root(tmp_path: Path, backend: str | None) -> Preflight:
    root = tmp_path / "env"
    root.mkdir()
    shutil.copy(terraform_cli.environment_dir("dev") / "backend.hcl.example", root / "backend.hcl.example")
    if backend is not None:
        (root / "backend.hcl").write_text(backend)
    return Preflight(env="dev", root=root)


def test_backend_fails_when_backend_hcl_is_missing(tmp_path: Path) -> None:
    result = preflight.check_backend(backend_root(tmp_path, None))

    assert result.status is Status.FAIL
    assert result.detail.endswith("env/backend.hcl is missing")
    assert result.fix is not None and result.fix.startswith("cp ")


def test_backend_fails_while_the_example_placeholder_is_left_in(tmp_path: Path) -> None:
    example = (terraform_cli.environment_dir("dev") / "backend.hcl.example").read_text()

    result = preflight.check_backend(backend_root(tmp_path, example))

    assert result.status is Status.FAIL
    assert "leaves bucket unset or a placeholder" in result.detail


def test_backend_passes_when_bucket_key_and_region_are_filled_in(tmp_path: Path) -> None:
    filled = 'bucket = "acme-tf-state"\nkey = "outreach/dev.tfstate"\nregion = "eu-central-1"\n'

    result = preflight.check_backend(backend_root(tmp_path, filled))

    assert result.status is Status.PASS, result
    assert result.detail.endswith(": s3://acme-tf-state/outreach/dev.tfstate (eu-central-1)")


def test_backend_is_skipped_for_a_root_with_local_state() -> None:
    result = preflight.check_backend(Preflight(env="local", root=terraform_cli.environment_dir("local")))

    assert result.status is Status.SKIP


def test_backend_fails_when_backend_hcl_is_not_hcl(tmp_path: Path) -> None:
    result = preflight.check_backend(backend_root(tmp_path, "bucket = \n"))

    assert result.status is Status.FAIL
    assert "is not valid HCL" in result.detail


# --- terraform ---


def versions_root(tmp_path: Path, required_version: str, locked: str) -> Preflight:
    root = tmp_path / "env"
    root.mkdir()
    dev = terraform_cli.environment_dir("dev")
    versions = (dev / "versions.tf").read_text().replace('">= 1.10.0"', f'"{required_version}"')
    (root / "versions.tf").write_text(versions)
    lock = (
        (dev / ".terraform.lock.hcl").read_text().replace('version     = "5.100.0"', f'version = "{locked}"')
    )
    (root / ".terraform.lock.hcl").write_text(lock)
    return Preflight(env="dev", root=root)


def test_terraform_passes_for_the_committed_roots_versions_and_lock() -> None:
    result = preflight.check_terraform(Preflight(env="dev", root=terraform_cli.environment_dir("dev")))

    assert result.status is Status.PASS, result
    assert "hashicorp/aws 5.100.0 (locked" in result.detail


def test_terraform_fails_when_the_binary_is_older_than_required_version(tmp_path: Path) -> None:
    result = preflight.check_terraform(versions_root(tmp_path, ">= 99.0.0", "5.100.0"))

    assert result.status is Status.FAIL
    assert "does not satisfy >= 99.0.0" in result.detail


def test_terraform_fails_when_the_locked_provider_is_outside_required_providers(tmp_path: Path) -> None:
    result = preflight.check_terraform(versions_root(tmp_path, ">= 1.10.0", "5.99.0"))

    assert result.status is Status.FAIL
    assert "the locked aws provider 5.99.0 does not satisfy ~> 5.100" in result.detail


# --- email ---


def email_plan(identity: str | None = SENDER, **kwargs: Any) -> RootPlan:
    return root_plan(values={preflight.EMAIL_IDENTITY_SETTING: identity}, **kwargs)


def verified_sender() -> None:
    boto3.client("sesv2", region_name=REGION).create_email_identity(EmailIdentity=SENDER)


def test_email_is_skipped_for_a_root_without_a_sender_identity(account: None) -> None:
    assert preflight.check_email(checked(root_plan())).status is Status.SKIP
    assert preflight.check_email(checked(email_plan(None))).status is Status.SKIP


def test_email_passes_for_a_verified_identity_of_an_account_out_of_the_sandbox(account: None) -> None:
    verified_sender()

    result = preflight.check_email(checked(email_plan()))

    assert result.status is Status.PASS, result
    assert result.detail.startswith(f"{SENDER} verified; sending enabled with production access")


def test_email_fails_for_an_identity_ses_does_not_have(account: None) -> None:
    result = preflight.check_email(checked(email_plan()))

    assert result.status is Status.FAIL
    assert result.detail == f"{SENDER} is not an SES identity in {REGION}"


def test_email_is_skipped_for_an_identity_the_root_itself_creates(account: None) -> None:
    planned = PlannedResource(
        "module.email.aws_sesv2_email_identity.sender", "aws_sesv2_email_identity", {"email_identity": SENDER}
    )

    result = preflight.check_email(checked(email_plan(resources=(planned,))))

    assert result.status is Status.SKIP
    assert "the root creates it" in result.detail


def test_email_fails_for_an_identity_not_verified_for_sending(account: None) -> None:
    verified_sender()
    set_identity_verification(SENDER, "PENDING", REGION)

    result = preflight.check_email(checked(email_plan()))

    assert result.status is Status.FAIL
    assert result.detail == f"{SENDER} is not verified for sending (verification PENDING)"


def test_email_fails_while_the_account_is_in_the_ses_sandbox(account: None) -> None:
    verified_sender()
    set_ses_account(REGION, production_access=False)

    result = preflight.check_email(checked(email_plan()))

    assert result.status is Status.FAIL
    assert "in the SES sandbox" in result.detail
    assert result.fix is not None and "production access" in result.fix


def test_email_fails_when_sending_is_disabled(account: None) -> None:
    verified_sender()
    boto3.client("sesv2", region_name=REGION).put_account_sending_attributes(SendingEnabled=False)

    result = preflight.check_email(checked(email_plan()))

    assert result.status is Status.FAIL
    assert "sending is disabled" in result.detail


def rate_plan(max_send_rate: float | None) -> RootPlan:
    values = {preflight.EMAIL_IDENTITY_SETTING: SENDER, "email_max_send_rate": max_send_rate}
    return root_plan(values=values)


def test_email_fails_when_the_roots_max_send_rate_is_above_the_accounts_ses_sending_rate(
    account: None,
) -> None:
    verified_sender()
    set_ses_account(REGION, max_send_rate=10.0)

    result = preflight.check_email(checked(rate_plan(14)))

    assert result.status is Status.FAIL
    assert result.detail == (
        f"the root's email_max_send_rate is 14/s; the account's SES sending rate in {REGION} is 10/s "
        "(GetAccount MaxSendRate): SES throttles the sends above it"
    )
    assert result.fix is not None and result.fix.startswith("set email_max_send_rate = 10 (or less)")


def test_email_passes_when_the_roots_max_send_rate_is_within_the_accounts(account: None) -> None:
    verified_sender()
    set_ses_account(REGION, max_send_rate=14.0)

    result = preflight.check_email(checked(rate_plan(14)))

    assert result.status is Status.PASS, result
    assert result.detail.endswith("; email_max_send_rate 14/s within SES's 14/s")


def test_email_says_a_max_send_rate_the_root_does_not_plan_is_not_configured(account: None) -> None:
    verified_sender()

    for plan in (email_plan(), rate_plan(None)):
        result = preflight.check_email(checked(plan))

        assert result.status is Status.PASS, result
        assert result.detail.endswith("; email_max_send_rate not configured")


# --- command line ---


def test_an_unknown_environment_is_a_usage_error() -> None:
    assert preflight.main(["--env", "staging"]) == 2
