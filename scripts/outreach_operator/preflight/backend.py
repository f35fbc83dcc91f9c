"""The ``backend`` check: a root that uses the S3 backend has its ``backend.hcl`` filled in."""

from __future__ import annotations

from lark.exceptions import LarkError

from outreach_dev import terraform_cli
from outreach_dev.terraform_hcl import load_file as read_hcl
from outreach_operator.preflight.target import Preflight, Result, Status


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
        settings = read_hcl(backend)
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
