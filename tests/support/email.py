"""Email campaign fixtures: planned emails, and the SES identity and configuration set on moto."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import boto3
import pytest

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


SCHEDULE_GROUP = "outreach-test-email"
# The schedule target the email worker and the reconciler find in their environment, as in Lambda.
SCHEDULE_TARGET_ENV = {
    "EMAIL_SCHEDULE_GROUP": SCHEDULE_GROUP,
    "EMAIL_WORKER_ARN": f"arn:aws:lambda:{REGION}:123456789012:function:outreach-test-email-worker",
    "EMAIL_SCHEDULER_ROLE_ARN": "arn:aws:iam::123456789012:role/outreach-test-email-scheduler",
    "EMAIL_DLQ_ARN": f"arn:aws:sqs:{REGION}:123456789012:outreach-test-email-dlq",
}


def create_schedule_group(monkeypatch: pytest.MonkeyPatch) -> None:
    """The email schedule group (inside mock_aws), and its target in the environment."""
    boto3.client("scheduler", region_name=REGION).create_schedule_group(Name=SCHEDULE_GROUP)
    for name, value in SCHEDULE_TARGET_ENV.items():
        monkeypatch.setenv(name, value)


def create_ses_resources() -> None:
    """The verified sender domain and the configuration set the worker sends with (inside mock_aws)."""
    support_ses_v2()
    ses = boto3.client("sesv2", region_name=REGION)
    ses.create_email_identity(EmailIdentity=SENDER_DOMAIN)
    ses.create_configuration_set(ConfigurationSetName=CONFIGURATION_SET)
