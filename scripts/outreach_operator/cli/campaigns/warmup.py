"""``campaign schedule``'s warm-up ramp: the sending identity's daily caps the plan is held under.

The ramp comes from the environment's ``email_warmup`` output (``Targets.email_warmup_*``, the form the
worker's settings have, read with the core's parsers; the ``--email-warmup-*`` flags override it), so
the planner and the worker obey one setting whose defaults modules/email declares. Without either the
ramp is unknown: the plan is not held under it and the report says so; the worker still enforces it at
send time. While a ramp applies, the account's 24-hour quota is read (GetAccount) as its ceiling; a dry
run that cannot read it plans under the ramp alone and says so, a real schedule stops before writing
anything (exit 1).
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from outreach.warmup_ramp import WarmupRamp, parse_caps, parse_start
from outreach_operator.campaigns.ses_quota import account_client, read_send_quota
from outreach_operator.campaigns.warmup_pacing import WarmupPacing
from outreach_operator.cli.output import Failed, Session


def ramp_of(s: Session) -> WarmupRamp | None:
    """The ramp the environment's outputs give; ``None`` when they give none (no ``--env``)."""
    start, caps = s.targets.email_warmup_start_date, s.targets.email_warmup_daily_caps
    if start is None or caps is None:
        return None
    try:
        return WarmupRamp(parse_start(start), parse_caps(caps))
    except ValueError as exc:
        raise Failed(
            f"the environment's email_warmup output is not a ramp modules/email allows: {exc}"
        ) from exc


def warmup_pacing(s: Session, *, dry_run: bool) -> tuple[WarmupPacing | None, dict[str, Any]]:
    """The pacing the plan is held under (``None``: no ramp applies or it is unknown) and what the
    report says of it before the plan's days are known."""
    ramp = ramp_of(s)
    if ramp is None:
        return None, {
            "known": False,
            "reason": "neither --env nor --email-warmup-* gave it: the worker enforces the ramp at send time",
        }
    settings: dict[str, Any] = {
        "known": True,
        "start_date": ramp.start.isoformat() if ramp.start else None,
        "last_day": ramp.last_day.isoformat() if ramp.last_day else None,
    }
    if ramp.start is None:
        return None, settings
    try:
        quota = read_send_quota(account_client()).max_24_hour_send
    except (ClientError, BotoCoreError) as exc:
        if not dry_run:
            raise Failed(
                f"cannot read the account's SES 24-hour quota, the ceiling of the warm-up ramp (sesv2 "
                f"GetAccount): {exc}; nothing written"
            ) from exc
        return WarmupPacing(ramp, -1.0), {**settings, "quota": f"not read: {exc}"}
    return WarmupPacing(ramp, quota), {**settings, "max_24_hour_send": quota}
