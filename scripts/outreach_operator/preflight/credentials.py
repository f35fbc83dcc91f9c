"""The ``credentials`` check: the session's account is one the root allows, and its region is the root's."""

from __future__ import annotations

from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, NoRegionError

from outreach_operator.preflight.target import Preflight, Result, Status


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
