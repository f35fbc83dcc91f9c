"""Running the checks in order and reporting them: the ``preflight`` command line and its exit status."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict

from embedded_aws.server import DEFAULT_PORT
from outreach_dev import terraform_cli
from outreach_dev.planned_root import RootPlan, RootPlanError, read_root_plan
from outreach_operator.preflight.backend import check_backend
from outreach_operator.preflight.concurrency import check_concurrency
from outreach_operator.preflight.credentials import check_credentials
from outreach_operator.preflight.email_receiving import check_receiving
from outreach_operator.preflight.email_sending import check_email
from outreach_operator.preflight.root import check_root
from outreach_operator.preflight.target import Check, Preflight, Result, Status
from outreach_operator.preflight.terraform import check_terraform

CHECKS: tuple[Check, ...] = (
    check_terraform,
    check_backend,
    check_root,
    check_credentials,
    check_concurrency,
    check_email,
    check_receiving,
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
