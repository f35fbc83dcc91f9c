"""The ``email`` check: SES may send from the root's identity, outside the sandbox, at the rate it plans."""

from __future__ import annotations

from botocore.exceptions import ClientError

from outreach_dev.planned_root import RootPlan
from outreach_operator.preflight.target import Preflight, Result, Status

EMAIL_IDENTITY_SETTING = "email_sender_identity"
# The emails per second the root sizes the email stage for (modules/email's max_send_rate).
EMAIL_RATE_SETTING = "email_max_send_rate"
# SES identity resources and the attribute naming the identity.
SES_IDENTITY_RESOURCES = {
    "aws_sesv2_email_identity": "email_identity",
    "aws_ses_domain_identity": "domain",
    "aws_ses_email_identity": "email",
}


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
