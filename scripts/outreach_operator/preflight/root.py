"""The ``root`` check: the environment root plans, which gives its region, accounts and reservations."""

from __future__ import annotations

from outreach_operator.preflight.target import Preflight, Result, Status


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
