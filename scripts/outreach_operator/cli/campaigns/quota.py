"""A campaign's plan held against the account's SES sending quota (sesv2 GetAccount).

A plan above the sending rate or the 24-hour quota is refused with the numbers (exit 2). A GetAccount
that is refused or cannot be reached leaves a dry run's quota "not checked" and stops a real schedule
before it writes anything (exit 1).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from outreach import clock
from outreach_operator.campaigns.campaign_file import Campaign
from outreach_operator.campaigns.planning import CampaignPlan
from outreach_operator.campaigns.ses_quota import (
    account_client,
    busiest_24_hours,
    quota_problems,
    read_send_quota,
)
from outreach_operator.cli.output import BadInput, Failed


def check_quota(chosen: Campaign, plan: CampaignPlan, *, dry_run: bool) -> dict[str, Any]:
    """The plan held against the account's SES quota: ``BadInput`` above it; what was read, for the
    report. GetAccount refused or unreachable: "not checked" in a dry run, ``Failed`` otherwise."""
    try:
        quota = read_send_quota(account_client())
    except (ClientError, BotoCoreError) as exc:
        if not dry_run:
            raise Failed(
                f"cannot read the account's SES sending quota (sesv2 GetAccount): {exc}; nothing written "
                "(allow ses:GetAccount to these credentials, or check the endpoint and region)"
            ) from exc
        return {"checked": False, "reason": f"quota not checked: sesv2 GetAccount failed: {exc}"}
    now = datetime.fromtimestamp(clock.now(), UTC)
    send_times = [email.send_at for email in plan.emails]
    problems = quota_problems(send_times, chosen.max_per_minute, quota, now)
    if problems:
        raise BadInput(
            "the plan is above the account's SES sending quota; nothing written:\n" + "\n".join(problems)
        )
    busiest = busiest_24_hours(send_times, now, round(quota.sent_last_24_hours))
    return {
        "checked": True,
        **quota.as_dict(),
        "busiest_24_hours": {
            "emails": busiest.planned,
            "sent_before": busiest.sent_before,
            "end": busiest.end,
        },
    }
