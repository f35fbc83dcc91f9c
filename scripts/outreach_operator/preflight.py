"""`make preflight ENV=dev|prod|local`: read-only checks of the target account before a plan.

    python -m outreach_operator.preflight --env dev [--json] [--region R] [--endpoint-url URL]

Each check prints one line: PASS, SKIP (and why) or FAIL (and, below it, what to do):

- ``terraform``    the Terraform binary and the locked aws provider fit the root's and the modules'
                   ``required_version`` and ``required_providers`` (and the mirror holds the provider);
- ``backend``      ``backend.hcl`` exists and is filled in, for roots that use the S3 backend;
- ``root``         the root plans (on a scratch embedded AWS, see ``planned_root``), which gives its
                   region, the accounts it may deploy to and the reservations it will make;
- ``credentials``  sts:GetCallerIdentity answers, its account is one the root allows, and the session's
                   region is the root's;
- ``concurrency``  lambda:GetAccountSettings leaves at least 100 unreserved executions once the root's
                   reservations are made, counting those its functions already hold;
- ``email``        when the root has an ``email_sender_identity``: SES has it verified for sending,
                   the account may send outside the sandbox, and the rate the root sizes the email
                   stage for (its ``email_max_send_rate`` output) is at most the account's SES
                   sending rate (GetAccount ``SendQuota.MaxSendRate``,
                   https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_GetAccount.html).

Nothing is changed anywhere. Exit 0 when no check failed, 1 when one did, 2 on a usage error.
``--env local`` checks the embedded AWS at ``--endpoint-url`` (default http://127.0.0.1:4566) with the
local root's fake credentials.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import boto3
import hcl2
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, NoRegionError
from lark.exceptions import LarkError

from embedded_aws.server import DEFAULT_PORT
from outreach_dev import terraform_cli
from outreach_dev.planned_root import RootPlan, RootPlanError, read_root_plan
from outreach_dev.version_constraints import ConstraintError, satisfies

# AWS keeps this many executions unreserved in every account and region
# (https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html).
MINIMUM_UNRESERVED = 100
# Service Quotas code of Lambda's "Concurrent executions".
CONCURRENCY_QUOTA_CODE = "L-B99A9384"
AWS_PROVIDER = "registry.terraform.io/hashicorp/aws"
EMAIL_IDENTITY_SETTING = "email_sender_identity"
# The emails per second the root sizes the email stage for (modules/email's max_send_rate).
EMAIL_RATE_SETTING = "email_max_send_rate"
# SES identity resources and the attribute naming the identity.
SES_IDENTITY_RESOURCES = {
    "aws_sesv2_email_identity": "email_identity",
    "aws_ses_domain_identity": "domain",
    "aws_ses_email_identity": "email",
}
# The local root's provider credentials (the embedded AWS takes any).
LOCAL_CREDENTIALS = ("test", "test")
_HCL_OPTIONS = hcl2.SerializationOptions(strip_string_quotes=True, with_comments=False)


class Status(StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    SKIP = "SKIP"


@dataclass(frozen=True)
class Result:
    check: str
    status: Status
    detail: str
    fix: str | None = None

    def lines(self) -> list[str]:
        shown = [f"{self.status.value}  {self.check:<12} {self.detail}"]
        if self.fix:
            shown.append(f"      {'':<12} what to do: {self.fix}")
        return shown


@dataclass
class Preflight:
    """What the checks look at: one environment root and the account it would deploy to."""

    env: str
    root: Path
    endpoint_url: str | None = None
    region: str | None = None
    plan: RootPlan | None = None
    plan_error: str | None = None
    credentials_ok: bool = False
    clients: dict[str, Any] = field(default_factory=dict)

    @property
    def local(self) -> bool:
        return self.env == "local"

    def session_region(self) -> str | None:
        """The region the operator's tools use: --region, else what boto3 finds (env, profile)."""
        if self.region:
            return self.region
        if self.local and self.plan is not None:
            return self.plan.region
        return boto3.Session().region_name

    def client(self, service: str) -> Any:
        """A client in the root's region (the target), built once per service."""
        if service not in self.clients:
            region = (self.plan.region if self.plan else None) or self.session_region()
            key, secret = LOCAL_CREDENTIALS if self.local else (None, None)
            session = boto3.Session(region_name=region, aws_access_key_id=key, aws_secret_access_key=secret)
            make_client: Callable[..., Any] = session.client
            self.clients[service] = make_client(service, endpoint_url=self.endpoint_url)
        return self.clients[service]


Check = Callable[[Preflight], Result]


# --- terraform ---------------------------------------------------------------------------------------


def _hcl(path: Path) -> dict[str, Any]:
    with path.open() as handle:
        loaded: dict[str, Any] = hcl2.load(handle, serialization_options=_HCL_OPTIONS)
    return loaded


def _constraints(root: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(required_version, aws provider version) constraints of the root and every module, each with
    the file it comes from."""
    core: list[tuple[str, str]] = []
    provider: list[tuple[str, str]] = []
    for versions in [root / "versions.tf", *sorted(terraform_cli.MODULES_DIR.glob("*/versions.tf"))]:
        where = terraform_cli.relative(versions)
        for block in _hcl(versions).get("terraform", []):
            if "required_version" in block:
                core.append((str(block["required_version"]), where))
            for providers in block.get("required_providers", []):
                aws = providers.get("aws")
                if isinstance(aws, dict) and "version" in aws:
                    provider.append((str(aws["version"]), where))
    return core, provider


def _terraform_version() -> dict[str, Any]:
    binary = shutil.which("terraform")
    if binary is None:
        raise FileNotFoundError("terraform is not on PATH")
    completed = subprocess.run(
        [binary, "version", "-json"], capture_output=True, text=True, check=True, timeout=120
    )
    answer: dict[str, Any] = json.loads(completed.stdout)
    return answer


def _locked_provider(root: Path) -> str | None:
    lock = root / ".terraform.lock.hcl"
    if not lock.is_file():
        return None
    for block in _hcl(lock).get("provider", []):
        if AWS_PROVIDER in block:
            return str(block[AWS_PROVIDER]["version"])
    return None


def _mirror_holds(mirror: Path, version: str, platform: str) -> bool:
    """Whether a filesystem mirror has the provider, unpacked or packed
    (https://developer.hashicorp.com/terraform/cli/config/config-file#filesystem_mirror)."""
    base = mirror / AWS_PROVIDER
    return (base / version / platform).is_dir() or (
        base / f"terraform-provider-aws_{version}_{platform}.zip"
    ).is_file()


def check_terraform(ctx: Preflight) -> Result:
    name = "terraform"
    try:
        installed = _terraform_version()
        core, provider = _constraints(ctx.root)
    except (OSError, subprocess.SubprocessError, json.JSONDecodeError) as exc:
        return Result(name, Status.FAIL, f"cannot run terraform: {exc}", "install Terraform 1.10 or newer")
    version, platform = str(installed["terraform_version"]), str(installed.get("platform", ""))
    locked = _locked_provider(ctx.root)
    try:
        core_misses = [f"{c} ({where})" for c, where in core if not satisfies(version, c)]
        provider_misses = (
            [f"{c} ({where})" for c, where in provider if not satisfies(locked, c)] if locked else []
        )
    except ConstraintError as exc:
        return Result(name, Status.FAIL, str(exc), "fix the constraint in the file it names")
    if core_misses:
        return Result(
            name,
            Status.FAIL,
            f"Terraform {version} does not satisfy {', '.join(core_misses)}",
            "install a Terraform release that does (the project is tested with 1.11)",
        )
    lock_file = terraform_cli.relative(ctx.root / ".terraform.lock.hcl")
    if locked is None:
        return Result(
            name,
            Status.FAIL,
            f"{lock_file} does not lock {AWS_PROVIDER}",
            "restore the committed lock file (git checkout -- it)",
        )
    if provider_misses:
        return Result(
            name,
            Status.FAIL,
            f"the locked aws provider {locked} does not satisfy {', '.join(provider_misses)}",
            f"run `terraform init -upgrade` in {terraform_cli.relative(ctx.root)} and commit the lock file",
        )
    mirror = terraform_cli.plugin_dir()
    if mirror and not _mirror_holds(Path(mirror), locked, platform):
        return Result(
            name,
            Status.FAIL,
            f"the provider mirror {mirror} has no hashicorp/aws {locked} for {platform}",
            "add it to the mirror (terraform providers mirror) or unset TF_PLUGIN_DIR to use the registry",
        )
    source = f"mirror {mirror}" if mirror else "the registry"
    return Result(
        name, Status.PASS, f"Terraform {version}, hashicorp/aws {locked} (locked, from {source}) fit"
    )


# --- backend -----------------------------------------------------------------------------------------


def check_backend(ctx: Preflight) -> Result:
    name = "backend"
    example = ctx.root / f"{terraform_cli.BACKEND_FILE}.example"
    backend = ctx.root / terraform_cli.BACKEND_FILE
    if not example.is_file():
        return Result(name, Status.SKIP, f"{ctx.env} keeps local state (its root has no backend block)")
    shown = terraform_cli.relative(backend)
    if not backend.is_file():
        return Result(
            name,
            Status.FAIL,
            f"{shown} is missing",
            f"cp {terraform_cli.relative(example)} {shown} and fill in the state bucket",
        )
    try:
        settings = _hcl(backend)
    except LarkError as exc:  # python-hcl2's parser (lark) refuses text that is not HCL
        return Result(name, Status.FAIL, f"{shown} is not valid HCL: {exc}", "fix its syntax")
    unset = [key for key in ("bucket", "key", "region") if not str(settings.get(key) or "").strip()]
    placeholders = [key for key, value in settings.items() if isinstance(value, str) and "<" in value]
    if unset or placeholders:
        return Result(
            name,
            Status.FAIL,
            f"{shown} leaves {', '.join(unset + placeholders)} unset or a placeholder",
            "fill in the state bucket, key and region of this account",
        )
    return Result(
        name,
        Status.PASS,
        f"{shown}: s3://{settings['bucket']}/{settings['key']} ({settings['region']})",
    )


# --- root --------------------------------------------------------------------------------------------


def check_root(ctx: Preflight) -> Result:
    name = "root"
    if ctx.plan is None:
        return Result(
            name,
            Status.FAIL,
            f"the root does not plan: {ctx.plan_error}",
            "fix its settings (terraform.tfvars, *.auto.tfvars) until it plans",
        )
    reserved = ", ".join(f"{fn} {r}" for fn, r in sorted(ctx.plan.reservations.items()) if r is not None)
    return Result(
        name,
        Status.PASS,
        f"plans in {ctx.plan.region}: {len(ctx.plan.reservations)} functions, "
        f"{ctx.plan.reserved_total} reserved ({reserved or 'none'})",
    )


# --- credentials -------------------------------------------------------------------------------------


def _unreachable_fix(ctx: Preflight) -> str:
    if ctx.local:
        return (
            f"run this while an embedded AWS serves {ctx.endpoint_url} (make local serves LOCAL_AWS_PORT "
            "while it runs), or pass --endpoint-url"
        )
    return "set AWS_PROFILE (after aws sso login) or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"


def check_credentials(ctx: Preflight) -> Result:
    name = "credentials"
    if ctx.plan is None:
        return Result(name, Status.SKIP, "needs the root's settings (see root)")
    try:
        identity = ctx.client("sts").get_caller_identity()
    except (NoCredentialsError, NoRegionError) as exc:
        return Result(name, Status.FAIL, f"no usable AWS credentials: {exc}", _unreachable_fix(ctx))
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "error")
        return Result(name, Status.FAIL, f"AWS refused the credentials ({code})", "refresh them")
    except BotoCoreError as exc:
        return Result(name, Status.FAIL, f"AWS could not be reached: {exc}", _unreachable_fix(ctx))
    account, arn = str(identity["Account"]), str(identity["Arn"])
    allowed = ctx.plan.allowed_account_ids
    if allowed and account not in allowed:
        return Result(
            name,
            Status.FAIL,
            f"the credentials are for account {account} ({arn}); {ctx.env} deploys to {', '.join(allowed)}",
            f"use credentials of {', '.join(allowed)} (another AWS_PROFILE)",
        )
    session_region = ctx.session_region()
    if session_region != ctx.plan.region:
        return Result(
            name,
            Status.FAIL,
            f"the session's region is {session_region}; {ctx.env} deploys to {ctx.plan.region}",
            f"export AWS_REGION={ctx.plan.region} (the aws and outreach commands use it)",
        )
    ctx.credentials_ok = True
    pinned = "pinned by allowed_account_ids" if allowed else "any account: allowed_account_ids is unset"
    return Result(name, Status.PASS, f"account {account} ({pinned}), region {session_region}, as {arn}")


# --- concurrency -------------------------------------------------------------------------------------


def _held(lam: Any, function: str) -> int:
    """The reservation a function holds now; 0 when it has none or does not exist yet."""
    try:
        answer = lam.get_function_concurrency(FunctionName=function)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
            return 0
        raise
    return int(answer.get("ReservedConcurrentExecutions") or 0)


def check_concurrency(ctx: Preflight) -> Result:
    name = "concurrency"
    if ctx.plan is None or not ctx.credentials_ok:
        return Result(name, Status.SKIP, "needs the root's settings and working credentials")
    lam = ctx.client("lambda")
    try:
        limit = lam.get_account_settings()["AccountLimit"]
        # A function that gives its reservation up (or changes it) frees what it holds now.
        held = sum(_held(lam, fn) for fn in ctx.plan.reservations)
    except (ClientError, BotoCoreError) as exc:
        return Result(
            name,
            Status.FAIL,
            f"cannot read the account's Lambda settings: {exc}",
            "allow lambda:GetAccountSettings and lambda:GetFunctionConcurrency to these credentials",
        )
    total, unreserved = int(limit["ConcurrentExecutions"]), int(limit["UnreservedConcurrentExecutions"])
    planned = ctx.plan.reserved_total
    left = unreserved + held - planned
    figures = (
        f"limit {total}, unreserved {unreserved}; {ctx.env} reserves {planned}"
        f"{f' (its functions hold {held} now)' if held else ''}, leaving {left}"
    )
    if left < MINIMUM_UNRESERVED:
        needed = total + MINIMUM_UNRESERVED - left
        return Result(
            name,
            Status.FAIL,
            f"{figures}: AWS refuses a reservation that leaves fewer than {MINIMUM_UNRESERVED} unreserved",
            f"raise Lambda concurrent executions in {ctx.plan.region} to at least {needed}: "
            f"aws service-quotas request-service-quota-increase --service-code lambda "
            f"--quota-code {CONCURRENCY_QUOTA_CODE} --desired-value {needed} --region {ctx.plan.region} "
            "(or lower scraper_concurrency in the root's terraform.tfvars)",
        )
    return Result(name, Status.PASS, f"{figures} (at least {MINIMUM_UNRESERVED} must stay unreserved)")


# --- email -------------------------------------------------------------------------------------------


def _planned_identities(plan: RootPlan) -> set[str]:
    return {
        str(resource.values.get(attribute))
        for kind, attribute in SES_IDENTITY_RESOURCES.items()
        for resource in plan.of_type(kind)
    }


def check_email(ctx: Preflight) -> Result:
    name = "email"
    if ctx.plan is None:
        return Result(name, Status.SKIP, "needs the root's settings (see root)")
    if EMAIL_IDENTITY_SETTING not in ctx.plan.values:
        return Result(name, Status.SKIP, f"the root has no {EMAIL_IDENTITY_SETTING}: it sends no email")
    identity = ctx.plan.values[EMAIL_IDENTITY_SETTING]
    if not identity:
        return Result(name, Status.SKIP, f"{EMAIL_IDENTITY_SETTING} is not set: no email is sent")
    if not ctx.credentials_ok:
        return Result(name, Status.SKIP, "needs working credentials")
    region = ctx.plan.region
    ses = ctx.client("sesv2")
    try:
        found = ses.get_email_identity(EmailIdentity=identity)
        account = ses.get_account()
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") != "NotFoundException":
            return Result(
                name, Status.FAIL, f"cannot read SES: {exc}", "allow ses:GetEmailIdentity and ses:GetAccount"
            )
        if identity in _planned_identities(ctx.plan):
            return Result(
                name,
                Status.SKIP,
                f"{identity} does not exist yet: the root creates it; verify it after apply, "
                "then run this again",
            )
        return Result(
            name,
            Status.FAIL,
            f"{identity} is not an SES identity in {region}",
            f"aws sesv2 create-email-identity --email-identity {identity} --region {region}, then verify it "
            "(a domain: publish its DKIM records; an address: open the verification mail)",
        )
    if not found.get("VerifiedForSendingStatus"):
        return Result(
            name,
            Status.FAIL,
            f"{identity} is not verified for sending (verification {found.get('VerificationStatus')})",
            "publish the identity's DKIM records (a domain) or open the verification mail (an address); "
            f"aws sesv2 get-email-identity --email-identity {identity} --region {region} shows them",
        )
    if not account.get("SendingEnabled"):
        return Result(
            name,
            Status.FAIL,
            f"SES sending is disabled for the account in {region} ({account.get('EnforcementStatus')})",
            "see the SES console's account dashboard for why; re-enable with "
            f"aws sesv2 put-account-sending-attributes --sending-enabled --region {region}",
        )
    if not account.get("ProductionAccessEnabled"):
        return Result(
            name,
            Status.FAIL,
            f"the account is in the SES sandbox in {region}: it may only send to verified addresses",
            "request production access (SES console, Account dashboard, Request production access)",
        )
    send_quota = account.get("SendQuota", {})
    rate, planned_rate = send_quota.get("MaxSendRate"), ctx.plan.values.get(EMAIL_RATE_SETTING)
    if isinstance(planned_rate, int | float) and isinstance(rate, int | float) and planned_rate > rate:
        return Result(
            name,
            Status.FAIL,
            f"the root's {EMAIL_RATE_SETTING} is {planned_rate:g}/s; the account's SES sending rate in "
            f"{region} is {rate:g}/s (GetAccount MaxSendRate): SES throttles the sends above it",
            f"set {EMAIL_RATE_SETTING} = {rate:g} (or less) in the root's terraform.tfvars, or request a "
            "higher sending quota (SES console, Account dashboard, Request a sending quota increase)",
        )
    quota = send_quota.get("Max24HourSend")
    per_day = f" ({quota:.0f} per 24 h)" if isinstance(quota, int | float) else ""
    if not isinstance(planned_rate, int | float):
        sized = f"; {EMAIL_RATE_SETTING} not configured"
    elif not isinstance(rate, int | float):
        sized = f"; {EMAIL_RATE_SETTING} {planned_rate:g}/s not compared (GetAccount gave no MaxSendRate)"
    else:
        sized = f"; {EMAIL_RATE_SETTING} {planned_rate:g}/s within SES's {rate:g}/s"
    return Result(
        name, Status.PASS, f"{identity} verified; sending enabled with production access{per_day}{sized}"
    )


CHECKS: tuple[Check, ...] = (
    check_terraform,
    check_backend,
    check_root,
    check_credentials,
    check_concurrency,
    check_email,
)

RootReader = Callable[[str], RootPlan]


def run_checks(ctx: Preflight, read_root: RootReader = read_root_plan) -> list[Result]:
    try:
        ctx.plan = read_root(ctx.env)
    except (RootPlanError, terraform_cli.TerraformError, OSError) as exc:
        ctx.plan_error = str(exc)
    return [check(ctx) for check in CHECKS]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="preflight", description="Read-only checks of the target account before a plan."
    )
    parser.add_argument("--env", required=True, choices=[d.name for d in terraform_cli.environments()])
    parser.add_argument("--region", help="the session's region (default: what boto3 finds)")
    parser.add_argument("--endpoint-url", help="AWS endpoint (--env local: the embedded AWS)")
    parser.add_argument("--json", dest="as_json", action="store_true", help="print JSON")
    return parser


def main(argv: Sequence[str] | None = None, read_root: RootReader = read_root_plan) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage error (or the help)
        return 0 if exc.code in (0, None) else 2
    endpoint = args.endpoint_url or (f"http://127.0.0.1:{DEFAULT_PORT}" if args.env == "local" else None)
    ctx = Preflight(
        env=args.env, root=terraform_cli.environment_dir(args.env), endpoint_url=endpoint, region=args.region
    )
    results = run_checks(ctx, read_root)
    failed = any(r.status is Status.FAIL for r in results)
    if args.as_json:
        report = {"env": args.env, "passed": not failed, "checks": [asdict(r) for r in results]}
        print(json.dumps(report, indent=2))
    else:
        for result in results:
            print("\n".join(result.lines()))
        print(f"preflight {args.env}: {'a check failed' if failed else 'every check passed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
