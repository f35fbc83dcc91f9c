"""What the inbound processor's tests share: the receiving side on moto, campaigns with reply tokens,
messages delivered as SES delivers them, and the forwards SES was asked to send.

The ``inbound`` fixture adds to ``feedback`` (tables, HMAC key, schedule group, SES, the clock at the
first send): the inbound bucket in a receiving region other than the pipeline's, the reply domain's
SES identity (forwards go out from it), and the processor's settings. ``deliver`` plays SES's S3
action: the raw message stored under ``inbound/<SES message id>`` and the SNS envelope of its
``Received`` notification, the SQS record's body, as the subscription (raw delivery off) queues it
(https://docs.aws.amazon.com/ses/latest/dg/receiving-email-notifications-contents.html,
https://docs.aws.amazon.com/sns/latest/dg/sns-message-and-json-formats.html).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from email import message_from_bytes
from email.message import Message
from typing import Any, Final

import boto3
import pytest

from outreach import email_schedules, inbound_processor, reply_token, task_store
from outreach.email_task import PlannedEmail, email_task_id
from outreach.sequence_rules import SequenceRules
from outreach_dev import function_env, function_manifest
from tests.functions.feedback_support import ACCOUNT, Feedback, sqs_batch
from tests.support.aws import REGION
from tests.support.email import FIRST_SEND, planned
from tests.support.lambda_context import FakeContext

RECEIVING_REGION: Final = "eu-west-1"
BUCKET = "outreach-test-inbound"
REPLY_DOMAIN = "reply.example.com"
FORWARD_FROM = f"forwarder@{REPLY_DOMAIN}"
UNMATCHED_FORWARD_TO = "inbox@example.com"
OWNER = "owner@example.com"
TOPIC_ARN = f"arn:aws:sns:{RECEIVING_REGION}:{ACCOUNT}:outreach-test-inbound"
RULES = SequenceRules(owner=OWNER)
# modules/email-inbound's defaults, as function_env reads them once the pipeline declares the function.
_DEFAULT_SETTINGS = {
    "UNSUBSCRIBE_LOCAL_PART": "unsubscribe",
    "AWAY_DEFAULT_DAYS": "7",
    "INBOUND_MAX_MESSAGE_BYTES": "10485760",
}


def processor_settings() -> dict[str, str]:
    """The processor's settings as Terraform sets them with the modules' defaults."""
    found = dict(_DEFAULT_SETTINGS)
    if "inbound_processor" in function_manifest.FUNCTIONS:
        found.update(function_env.settings("inbound_processor"))
    return found


@dataclass(frozen=True)
class Inbound:
    """What the ``inbound`` fixture made: ``feedback``'s, the schedule target, and the test clock
    (``clock[0]``, seconds since the epoch: moving it moves the processor's time)."""

    feedback: Feedback
    target: email_schedules.ScheduleTarget
    clock: list[float]


@pytest.fixture
def inbound(feedback: Feedback, ses: list[float], monkeypatch: pytest.MonkeyPatch) -> Iterator[Inbound]:
    boto3.client("s3", region_name=RECEIVING_REGION).create_bucket(
        Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": RECEIVING_REGION}
    )
    boto3.client("sesv2", region_name=REGION).create_email_identity(EmailIdentity=REPLY_DOMAIN)
    settings = {
        **processor_settings(),
        "INBOUND_BUCKET": BUCKET,
        "INBOUND_BUCKET_REGION": RECEIVING_REGION,
        "REPLY_DOMAIN": REPLY_DOMAIN,
        "FORWARD_FROM": FORWARD_FROM,
        "UNMATCHED_FORWARD_TO": UNMATCHED_FORWARD_TO,
        "EMAIL_WORKER_ARN": feedback.target.worker_arn,
        "EMAIL_SCHEDULER_ROLE_ARN": feedback.target.role_arn,
        "EMAIL_DLQ_ARN": feedback.target.dlq_arn,
    }
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    yield Inbound(feedback=feedback, target=feedback.target, clock=ses)


# ---- campaigns -----------------------------------------------------------------------------------


def campaign(
    inbound: Inbound,
    recipients: Sequence[str],
    *,
    steps: int = 3,
    name: str = "spring",
    rules: SequenceRules | None = RULES,
    tokens: bool = True,
) -> dict[str, list[PlannedEmail]]:
    """Each recipient's emails of a ``steps``-step campaign, stored Pending with their schedules; with
    ``tokens`` each email's Reply-To is its reply address."""
    emails: dict[str, list[PlannedEmail]] = {}
    for address in recipients:
        chain = []
        for step in range(1, steps + 1):
            email = planned(address, step, campaign=name)
            if tokens:
                reply_to = reply_token.reply_address(
                    email_task_id(name, address, step), REPLY_DOMAIN, key_id=inbound.feedback.key_id
                )
                email = replace(email, message=replace(email.message, reply_to=reply_to))
            chain.append(replace(email, rules=rules))
        emails[address] = chain
    every = [email for chain in emails.values() for email in chain]
    task_store.create_email_tasks(every)
    for email in every:
        email_schedules.ensure_schedule(email, inbound.target)
    return emails


# ---- what SES delivers ---------------------------------------------------------------------------


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def notification(
    message_id: str,
    recipients: Sequence[str],
    *,
    at: datetime,
    virus: str = "PASS",
    bucket: str = BUCKET,
    key: str | None = None,
) -> dict[str, Any]:
    """SES's ``Received`` notification of an S3 action (the documented fields)."""
    return {
        "notificationType": "Received",
        "mail": {
            "timestamp": _stamp(at),
            "source": "sender@example.net",
            "messageId": message_id,
            "destination": list(recipients),
            "headersTruncated": False,
        },
        "receipt": {
            "timestamp": _stamp(at),
            "processingTimeMillis": 420,
            "recipients": list(recipients),
            "spamVerdict": {"status": "PASS"},
            "virusVerdict": {"status": virus},
            "spfVerdict": {"status": "PASS"},
            "dkimVerdict": {"status": "PASS"},
            "dmarcVerdict": {"status": "PASS"},
            "action": {
                "type": "S3",
                "topicArn": TOPIC_ARN,
                "bucketName": bucket,
                "objectKey": key if key is not None else f"inbound/{message_id}",
            },
        },
    }


def envelope(received: dict[str, Any]) -> str:
    """The SNS envelope of a notification, as the SQS subscription (raw delivery off) queues it."""
    return json.dumps(
        {
            "Type": "Notification",
            "MessageId": str(uuid.uuid4()),
            "TopicArn": TOPIC_ARN,
            "Subject": "Amazon SES Email Receipt Notification",
            "Message": json.dumps(received),
            "Timestamp": "2027-03-02T09:30:00.000Z",
            "SignatureVersion": "1",
            "Signature": "EXAMPLE",
            "SigningCertURL": f"https://sns.{RECEIVING_REGION}.amazonaws.com/SimpleNotificationService.pem",
            "UnsubscribeURL": f"https://sns.{RECEIVING_REGION}.amazonaws.com/?Action=Unsubscribe",
        }
    )


def deliver(
    raw: bytes,
    recipients: Sequence[str],
    *,
    at: datetime | None = None,
    message_id: str | None = None,
    virus: str = "PASS",
) -> str:
    """SES's S3 action for ``raw`` delivered to ``recipients``: the object stored, and the SQS body."""
    ses_id = message_id or uuid.uuid4().hex + uuid.uuid4().hex[:8]
    boto3.client("s3", region_name=RECEIVING_REGION).put_object(
        Bucket=BUCKET, Key=f"inbound/{ses_id}", Body=raw
    )
    moment = at or FIRST_SEND + timedelta(hours=1)
    return envelope(notification(ses_id, recipients, at=moment, virus=virus))


def process(*bodies: str) -> list[int]:
    """One invocation with a batch of ``bodies``; the positions in it of the batch item failures."""
    event = sqs_batch(*bodies)
    context = FakeContext(aws_request_id=str(uuid.uuid4()), timeout_seconds=60.0)
    response = dict(inbound_processor.lambda_handler(event, context))
    ids = [record["messageId"] for record in event["Records"]]
    return [ids.index(failure["itemIdentifier"]) for failure in response["batchItemFailures"]]


# ---- what SES sent -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Forward:
    """One raw message the processor had SES send: its envelope and its bytes as SES got them."""

    message_id: str
    sender: str
    destinations: tuple[str, ...]
    raw: bytes

    @property
    def message(self) -> Message:
        return message_from_bytes(self.raw)


def forwards() -> list[Forward]:
    """Every raw message SES (moto, in the pipeline's region) was given, in order; its destinations each
    once (moto adds the message's own To, Cc and Bcc to the request's)."""
    from moto.core.models import DEFAULT_ACCOUNT_ID
    from moto.ses.models import ses_backends

    sent = ses_backends[DEFAULT_ACCOUNT_ID][REGION].sent_messages
    return [
        Forward(m.id, str(m.source), tuple(dict.fromkeys(m.destinations)), str(m.raw_data).encode("utf-8"))
        for m in sent
        if hasattr(m, "raw_data")
    ]


def body_of(raw: bytes) -> bytes:
    """Everything after the first empty line."""
    for separator in (b"\r\n\r\n", b"\n\n"):
        if separator in raw:
            return raw.split(separator, 1)[1]
    return b""


def message_id_header(ses_message_id: str) -> str:
    """The Message-ID a recipient saw on an email the pipeline's region sent."""
    return f"<{ses_message_id}@{REGION}.amazonses.com>"
