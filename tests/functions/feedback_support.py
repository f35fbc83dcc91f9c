"""What the tests of the SES-events consumer and the unsubscribe endpoint share.

The ``feedback`` fixture: the SES-events queue, the unsubscribe KMS HMAC key, the email schedule group
and the settings of both functions, beside the ``resources`` (tasks table, contact ledger) and ``ses``
(SES, the clock at the first send) fixtures. Builders: a campaign's email tasks with their schedules,
SES events in the EventBridge envelope with the documented record (``ses_event``), SQS batches of them
as the event source mapping delivers them (``sqs_batch``), and function URL requests in payload format
2.0 (``url_request``).
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws

from outreach import clients, email_schedules, ses_tags, task_store
from outreach.email_task import PlannedEmail, utc_iso
from outreach.task_model import EmailFields, Kind, Status, Task
from outreach_dev import function_env
from tests.support.aws import REGION, Resources
from tests.support.email import CONFIGURATION_SET, FIRST_SEND, planned
from tests.support.events import load_event

SES_EVENTS_QUEUE = "outreach-test-ses-events"
SCHEDULE_GROUP = "outreach-test-email"
# The consumer's settings as Terraform sets them (modules/email-feedback's defaults).
CONSUMER_SETTINGS = function_env.settings("ses_event_consumer")
SOFT_BOUNCE_LIMIT = int(CONSUMER_SETTINGS["SOFT_BOUNCE_LIMIT"])
ACCOUNT = "123456789012"
SENDER = "sales@example.com"


@dataclass(frozen=True)
class Feedback:
    """What the ``feedback`` fixture made: the queue, the key, and the schedule target of the emails."""

    queue_url: str
    key_id: str
    target: email_schedules.ScheduleTarget


def create_hmac_key() -> str:
    """A KMS key as modules/email-feedback declares the unsubscribe key: HMAC_256, GENERATE_VERIFY_MAC."""
    created = boto3.client("kms", region_name=REGION).create_key(
        KeySpec="HMAC_256", KeyUsage="GENERATE_VERIFY_MAC"
    )
    return str(created["KeyMetadata"]["KeyId"])


@pytest.fixture
def hmac_key(aws_env: None) -> Iterator[str]:
    """An unsubscribe key on moto, and nothing else (for the token's own tests)."""
    with mock_aws():
        clients.reset()
        yield create_hmac_key()
        clients.reset()


@pytest.fixture
def feedback(resources: Resources, ses: list[float], monkeypatch: pytest.MonkeyPatch) -> Iterator[Feedback]:
    sqs = boto3.client("sqs", region_name=REGION)
    queue_url = sqs.create_queue(QueueName=SES_EVENTS_QUEUE)["QueueUrl"]
    key_id = create_hmac_key()
    boto3.client("scheduler", region_name=REGION).create_schedule_group(Name=SCHEDULE_GROUP)
    monkeypatch.setenv("EMAIL_SCHEDULE_GROUP", SCHEDULE_GROUP)
    for name, value in CONSUMER_SETTINGS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("UNSUBSCRIBE_KEY_ID", key_id)
    monkeypatch.setenv("CONTACT_EVENTS_QUEUE_URL", queue_url)
    yield Feedback(
        queue_url=queue_url,
        key_id=key_id,
        target=email_schedules.ScheduleTarget(
            group=SCHEDULE_GROUP,
            worker_arn=f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:outreach-test-email-worker",
            role_arn=f"arn:aws:iam::{ACCOUNT}:role/outreach-test-email-scheduler",
            dlq_arn=f"arn:aws:sqs:{REGION}:{ACCOUNT}:outreach-test-email-dlq",
        ),
    )


# ---- email tasks ---------------------------------------------------------------------------------


def stored(task_id: str) -> Task:
    task = task_store.get_task(task_id)
    assert task is not None
    return task


def campaign(
    feedback: Feedback, recipients: Sequence[str], *, steps: int = 3, name: str = "spring"
) -> dict[str, list[PlannedEmail]]:
    """Each recipient's emails of a ``steps``-step campaign, stored Pending with their schedules."""
    emails = {
        address: [planned(address, step, campaign=name) for step in range(1, steps + 1)]
        for address in recipients
    }
    every = [email for chain in emails.values() for email in chain]
    task_store.create_email_tasks(every)
    for email in every:
        email_schedules.ensure_schedule(email, feedback.target)
    return emails


def unstored_task(email: PlannedEmail) -> Task:
    """The task ``email`` becomes once sent, built without a table (for tests that only read events)."""
    return Task(
        task_id=email.task_id,
        kind=Kind.EMAIL.value,
        job_id=email.campaign_id,
        status=Status.FINISHED,
        attempts=1,
        created_at=utc_iso(email.send_at),
        updated_at=utc_iso(email.send_at),
        email=EmailFields(
            step=email.step,
            recipient=email.message.to,
            send_at=utc_iso(email.send_at),
            timezone=email.timezone,
            schedule_name=email.schedule_name,
            message=email.message.to_item(),
            ses_message_id=message_id_of(email.task_id),
        ),
    )


def message_id_of(task_id: str) -> str:
    """The SES message id a test gives the send of a task (SES's shape: hex, dashes, ``-000000``)."""
    digest = hashlib.sha256(task_id.encode()).hexdigest()
    return f"0107{digest[:12]}-{digest[12:20]}-{digest[20:24]}-{digest[24:28]}-{digest[28:40]}-000000"


def mark_sent(email: PlannedEmail) -> Task:
    """The task as the worker leaves it after SES accepted it: ``Finished`` with its message id."""
    claimed = task_store.claim_email(stored(email.task_id), owner="worker", lease_seconds=300)
    task_store.finish_email(claimed, ses_message_id=message_id_of(email.task_id))
    return stored(email.task_id)


def schedule_exists(feedback: Feedback, email: PlannedEmail) -> bool:
    return email_schedules.schedule_exists(email.schedule_name, feedback.target)


# ---- SES events ----------------------------------------------------------------------------------

# detail-type -> (detail.eventType, the name of the type's object), as SES publishes them:
# https://docs.aws.amazon.com/ses/latest/dg/monitoring-eventbridge.html and
# https://docs.aws.amazon.com/ses/latest/dg/event-publishing-retrieving-firehose-examples.html
SES_TYPES = {
    "Email Sent": ("Send", "send"),
    "Email Delivered": ("Delivery", "delivery"),
    "Email Bounced": ("Bounce", "bounce"),
    "Email Complaint Received": ("Complaint", "complaint"),
    "Email Rejected": ("Reject", "reject"),
    "Email Delivery Delayed": ("DeliveryDelay", "deliveryDelay"),
    "Email Rendering Failed": ("Rendering Failure", "failure"),
}


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _type_object(detail_type: str, recipient: str, at: datetime, bounce_type: str) -> dict[str, Any]:
    stamp = _stamp(at)
    if detail_type == "Email Sent":
        return {}
    if detail_type == "Email Delivered":
        return {
            "timestamp": stamp,
            "processingTimeMillis": 546,
            "recipients": [recipient],
            "smtpResponse": "250 2.6.0 Message received",
            "reportingMTA": "a8-70.smtp-out.amazonses.com",
        }
    if detail_type == "Email Bounced":
        return {
            "bounceType": bounce_type,
            "bounceSubType": "General" if bounce_type == "Permanent" else "MailboxFull",
            "bouncedRecipients": [
                {
                    "emailAddress": recipient,
                    "action": "failed",
                    "status": "5.1.1",
                    "diagnosticCode": "smtp; 550 5.1.1 user unknown",
                }
            ],
            "timestamp": stamp,
            "feedbackId": "0100015a2a8d6d8f-f6b8a6b6-9b4e-4d49-8c58-2f5b8b9e1a5e-000000",
            "reportingMTA": "dsn; mta.example.com",
        }
    if detail_type == "Email Complaint Received":
        return {
            "complainedRecipients": [{"emailAddress": recipient}],
            "timestamp": stamp,
            "feedbackId": "0100015a2a8d6d8f-a9f4c2f1-2a7e-4b1e-9f0d-5e7c1b2d3f4a-000000",
            "userAgent": "Mozilla/5.0",
            "complaintFeedbackType": "abuse",
            "arrivalDate": stamp,
        }
    if detail_type == "Email Rejected":
        return {"reason": "Bad content"}
    if detail_type == "Email Delivery Delayed":
        return {
            "timestamp": stamp,
            "delayType": "MailboxFull",
            "expirationTime": _stamp(at + timedelta(hours=12)),
            "delayedRecipients": [
                {
                    "emailAddress": recipient,
                    "status": "4.2.2",
                    "diagnosticCode": "smtp; 452 4.2.2 mailbox full",
                }
            ],
        }
    return {"errorMessage": "Attribute 'name' is not present in the rendering data.", "templateName": "t"}


def ses_event(
    detail_type: str,
    task: Task,
    *,
    bounce_type: str = "Permanent",
    event_id: str | None = None,
    message_id: str | None = None,
    at: datetime | None = None,
) -> dict[str, Any]:
    """The EventBridge event SES publishes for ``task``'s message: the envelope, and ``detail`` with the
    message's tags as ``{name: [value]}`` (the outreach tags and ``ses:configuration-set``)."""
    assert task.email is not None
    moment = at or FIRST_SEND + timedelta(minutes=1)
    event_type, object_name = SES_TYPES[detail_type]
    tags = {tag["Name"]: [tag["Value"]] for tag in ses_tags.email_tags(task)}
    tags["ses:configuration-set"] = [CONFIGURATION_SET]
    tags["ses:from-domain"] = ["example.com"]
    recipient = task.email.recipient
    mail = {
        "timestamp": _stamp(moment - timedelta(seconds=30)),
        "source": SENDER,
        "sourceArn": f"arn:aws:ses:{REGION}:{ACCOUNT}:identity/example.com",
        "sendingAccountId": ACCOUNT,
        "messageId": message_id or message_id_of(task.task_id),
        "destination": [recipient],
        "headersTruncated": False,
        "tags": tags,
    }
    return {
        "version": "0",
        "id": event_id or str(uuid.uuid4()),
        "detail-type": detail_type,
        "source": "aws.ses",
        "account": ACCOUNT,
        "time": moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": REGION,
        "resources": [f"arn:aws:ses:{REGION}:{ACCOUNT}:configuration-set/{CONFIGURATION_SET}"],
        "detail": {
            "eventType": event_type,
            "mail": mail,
            object_name: _type_object(detail_type, recipient, moment, bounce_type),
        },
    }


def body(event: dict[str, Any]) -> str:
    return json.dumps(event)


def sqs_batch(*bodies: str) -> dict[str, Any]:
    """An SQS event of one record per body, as the event source mapping delivers a batch."""
    template = load_event("sqs_scrape_message.json")["Records"][0]
    records = []
    for text in bodies:
        record = copy.deepcopy(template)
        record["messageId"] = str(uuid.uuid4())
        record["body"] = text
        record["eventSourceARN"] = f"arn:aws:sqs:{REGION}:{ACCOUNT}:{SES_EVENTS_QUEUE}"
        records.append(record)
    return {"Records": records}


def queued_bodies(queue_url: str) -> list[str]:
    """Every message body on the queue now (received and deleted)."""
    sqs = boto3.client("sqs", region_name=REGION)
    found: list[str] = []
    while True:
        messages = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages", [])
        if not messages:
            return found
        for message in messages:
            found.append(message["Body"])
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])


# ---- function URL requests -----------------------------------------------------------------------


def url_request(
    method: str,
    *,
    query: str = "",
    form: str | None = None,
    content_type: str = "application/x-www-form-urlencoded",
    base64_body: bool = False,
    cookies: Sequence[str] = (),
) -> dict[str, Any]:
    """A function URL request in payload format 2.0, as Lambda passes it to the handler.
    https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html#urls-payloads"""
    domain = f"abcdefghijklmnopqrstuvwxyz012345.lambda-url.{REGION}.on.aws"
    headers = {
        "host": domain,
        "user-agent": "Mozilla/5.0",
        "x-forwarded-proto": "https",
        "x-forwarded-for": "203.0.113.7",
        "accept": "text/html",
    }
    if form is not None:
        headers["content-type"] = content_type
    if cookies:
        headers["cookie"] = "; ".join(cookies)
    request: dict[str, Any] = {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": "/",
        "rawQueryString": query,
        "headers": headers,
        "requestContext": {
            "accountId": "anonymous",
            "apiId": domain.split(".")[0],
            "domainName": domain,
            "domainPrefix": domain.split(".")[0],
            "http": {
                "method": method,
                "path": "/",
                "protocol": "HTTP/1.1",
                "sourceIp": "203.0.113.7",
                "userAgent": "Mozilla/5.0",
            },
            "requestId": str(uuid.uuid4()),
            "routeKey": "$default",
            "stage": "$default",
            "time": "02/Mar/2027:08:31:00 +0000",
            "timeEpoch": 1803976260000,
        },
        "isBase64Encoded": base64_body,
    }
    if cookies:
        request["cookies"] = list(cookies)
    if query:
        request["queryStringParameters"] = dict(part.partition("=")[::2] for part in query.split("&"))
    if form is not None:
        request["body"] = base64.b64encode(form.encode()).decode() if base64_body else form
    return request
