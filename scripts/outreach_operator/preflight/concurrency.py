"""The ``concurrency`` check: the root's reservations leave the account at least 100 unreserved executions."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from outreach_operator.preflight.target import Preflight, Result, Status

# AWS keeps this many executions unreserved in every account and region
# (https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html).
MINIMUM_UNRESERVED = 100
# Service Quotas code of Lambda's "Concurrent executions".
CONCURRENCY_QUOTA_CODE = "L-B99A9384"


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
