"""Email campaign fixtures: planned emails, and the SES identity and configuration set on moto."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import boto3

from embedded_aws.ses_v2 import support_ses_v2
from outreach.email_task import EmailMessage, PlannedEmail
from tests.support.aws import REGION

BERLIN = ZoneInfo("Europe/Berlin")
SENDER_DOMAIN = "example.com"
CONFIGURATION_SET = "outreach-test-email"
# The first step's send time; step n goes out 3 * (n - 1) days later.
FIRST_SEND = datetime(2027, 3, 2, 9, 30, tzinfo=BERLIN)


def planned(
    recipient: str,
    step: int = 1,
    *,
    campaign: str = "spring",
    subject: str | None = None,
    unsubscribe: str = "mailto:unsubscribe@example.com",
) -> PlannedEmail:
    return PlannedEmail(
        campaign_id=campaign,
        step=step,
        send_at=FIRST_SEND + timedelta(days=3 * (step - 1)),
        timezone="Europe/Berlin",
        message=EmailMessage(
            sender=f"sales@{SENDER_DOMAIN}",
            to=recipient,
            subject=subject or f"Hello {recipient}",
            text="Hi",
            html="<p>Hi</p>",
            reply_to=f"replies@{SENDER_DOMAIN}",
            unsubscribe=unsubscribe,
        ),
    )


def create_ses_resources() -> None:
    """The verified sender domain and the configuration set the worker sends with (inside mock_aws)."""
    support_ses_v2()
    ses = boto3.client("sesv2", region_name=REGION)
    ses.create_email_identity(EmailIdentity=SENDER_DOMAIN)
    ses.create_configuration_set(ConfigurationSetName=CONFIGURATION_SET)
