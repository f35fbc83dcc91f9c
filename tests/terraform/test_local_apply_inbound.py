"""terraform/environments/local applies with replies on, and a message SES receives reaches the inbound queue.

The local root's pipe-mode apply of ``local_applies`` has ``inbound_reply_domain`` set (its
default, as prod's, is none): the receipt rule set, rule, bucket, topic, subscription, queue and
mapping of modules/email-inbound are read back through the AWS APIs. Then a message is delivered to
the active rule set as SES would (``embedded_aws.ses_receiving.receive_email``: the S3 action writes
the message if the bucket policy lets SES put it for this rule, then publishes the notification to the
topic), and the inbound queue holds SNS's envelope around SES's notification naming the object
(https://docs.aws.amazon.com/ses/latest/dg/receiving-email-action-s3.html,
https://docs.aws.amazon.com/ses/latest/dg/receiving-email-notifications-contents.html).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from embedded_aws.ses_receiving import receive_email
from tests.terraform.local_applies import PIPE_ENV, REGION, REPLY_DOMAIN, UNMATCHED
from tests.terraform.local_applies import Applied as LocalApplied

# The applies of the local root (a couple of minutes on a quiet machine); leave room for a loaded one.
pytestmark = pytest.mark.timeout(600)

PREFIX = f"outreach-{PIPE_ENV}"


@dataclass(frozen=True)
class Applied:
    """The apply with replies on (pipe mode's) of ``local_applies``."""

    local: LocalApplied

    @property
    def endpoint(self) -> str:
        return self.local.endpoint

    @property
    def outputs(self) -> dict[str, Any]:
        return self.local.pipe_mode

    @property
    def pipeline(self) -> dict[str, Any]:
        value: dict[str, Any] = self.outputs["pipeline"]
        return value

    def client(self, service: str) -> Any:
        return self.local.client(service)


@pytest.fixture
def applied(local_applied: LocalApplied) -> Applied:
    return Applied(local_applied)


def _queue_arn(applied: Applied, url: str) -> str:
    attributes = applied.client("sqs").get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
    return str(attributes["Attributes"]["QueueArn"])


def test_the_active_rule_set_saves_the_reply_domains_mail_under_inbound_and_announces_it(
    applied: Applied,
) -> None:
    active = applied.client("ses").describe_active_receipt_rule_set()
    [rule] = active["Rules"]
    [action] = rule["Actions"]

    assert active["Metadata"]["Name"] == f"{PREFIX}-inbound"
    assert rule["Name"] == f"{PREFIX}-replies" and rule["Enabled"] is True
    assert rule["Recipients"] == [REPLY_DOMAIN]
    assert rule["TlsPolicy"] == "Require" and rule["ScanEnabled"] is True
    assert action["S3Action"]["BucketName"] == applied.outputs["inbound_bucket"]
    assert action["S3Action"]["ObjectKeyPrefix"] == "inbound/"
    assert action["S3Action"]["TopicArn"] == applied.pipeline["inbound_topic_arn"]


def test_the_bucket_is_private_expires_mail_and_lets_ses_put_for_this_rule_only(applied: Applied) -> None:
    s3, bucket = applied.client("s3"), applied.outputs["inbound_bucket"]
    block = s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"]
    [encryption] = s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"]
    [lifecycle] = s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    statements = {s["Sid"]: s for s in json.loads(s3.get_bucket_policy(Bucket=bucket)["Policy"])["Statement"]}

    assert all(block.values()) and len(block) == 4
    assert encryption["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"
    assert lifecycle["Expiration"] == {"Days": 30}
    assert bucket == f"{PREFIX}-inbound-123456789012-{REGION}"
    ses = statements["SesPutsReceivedMessages"]
    assert ses["Principal"] == {"Service": "ses.amazonaws.com"} and ses["Action"] == "s3:PutObject"
    assert ses["Resource"] == f"arn:aws:s3:::{bucket}/inbound/*"
    assert ses["Condition"] == {
        "StringEquals": {
            "aws:SourceAccount": "123456789012",
            "aws:SourceArn": (
                f"arn:aws:ses:{REGION}:123456789012:receipt-rule-set/{PREFIX}-inbound:receipt-rule/{PREFIX}-replies"
            ),
        }
    }
    assert statements["DenyInsecureTransport"]["Effect"] == "Deny"


def test_the_queue_is_subscribed_to_the_encrypted_topic_and_consumed_with_partial_failures(
    applied: Applied,
) -> None:
    sns, sqs, lam = applied.client("sns"), applied.client("sqs"), applied.client("lambda")
    topic = applied.pipeline["inbound_topic_arn"]
    queue_url = applied.outputs["inbound_queue_url"]
    queue_arn = _queue_arn(applied, queue_url)
    [subscription] = sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"]
    subscription_attributes = sns.get_subscription_attributes(SubscriptionArn=subscription["SubscriptionArn"])
    queue = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["All"])["Attributes"]
    [statement] = json.loads(queue["Policy"])["Statement"]
    [mapping] = lam.list_event_source_mappings(EventSourceArn=queue_arn)["EventSourceMappings"]

    assert sns.get_topic_attributes(TopicArn=topic)["Attributes"]["KmsMasterKeyId"].startswith("arn:aws:kms:")
    assert (subscription["Protocol"], subscription["Endpoint"]) == ("sqs", queue_arn)
    assert subscription_attributes["Attributes"].get("RawMessageDelivery", "false") == "false"
    assert statement["Principal"] == {"Service": "sns.amazonaws.com"}
    assert statement["Condition"] == {"ArnEquals": {"aws:SourceArn": topic}}
    assert json.loads(queue["RedrivePolicy"])["deadLetterTargetArn"] == _queue_arn(
        applied, applied.outputs["inbound_dlq_url"]
    )
    assert queue["SqsManagedSseEnabled"] == "true" and queue["VisibilityTimeout"] == "360"
    assert mapping["FunctionArn"].endswith(f":function:{PREFIX}-inbound-processor")
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_the_processor_runs_with_the_applied_reply_settings(applied: Applied) -> None:
    function = applied.client("lambda").get_function_configuration(FunctionName=f"{PREFIX}-inbound-processor")
    environment = function["Environment"]["Variables"]

    assert function["Handler"] == "outreach.inbound_processor.lambda_handler"
    assert environment["INBOUND_BUCKET"] == applied.outputs["inbound_bucket"]
    assert environment["INBOUND_BUCKET_REGION"] == REGION
    assert environment["REPLY_DOMAIN"] == REPLY_DOMAIN
    assert environment["FORWARD_FROM"] == f"forwarder@{REPLY_DOMAIN}"
    assert environment["UNMATCHED_FORWARD_TO"] == UNMATCHED
    assert environment["UNSUBSCRIBE_KEY_ID"] == applied.outputs["unsubscribe_key_arn"]
    assert environment["EMAIL_WORKER_ARN"] == applied.outputs["email_worker_arn"]


def test_a_message_to_a_reply_address_lands_in_the_bucket_and_its_notification_in_the_inbound_queue(
    applied: Applied,
) -> None:
    raw = (
        "From: Pat Prospect <prospect@client.example>\r\n"
        f"To: reply+abc.def@{REPLY_DOMAIN}\r\n"
        "Subject: Re: our offer\r\n"
        "Message-ID: <reply-1@client.example>\r\n"
        "\r\n"
        "Yes, tell me more.\r\n"
    ).encode()

    received = receive_email(applied.endpoint, REGION, raw, recipients=[f"reply+abc.def@{REPLY_DOMAIN}"])

    assert received.accepted, received.reason
    [(bucket, key)] = received.s3_objects
    assert bucket == applied.outputs["inbound_bucket"] and key == f"inbound/{received.message_id}"
    assert applied.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read() == raw
    messages = applied.client("sqs").receive_message(
        QueueUrl=applied.outputs["inbound_queue_url"], MaxNumberOfMessages=10, WaitTimeSeconds=2
    )["Messages"]
    [envelope] = [json.loads(m["Body"]) for m in messages]
    notification = json.loads(envelope["Message"])
    assert (
        envelope["Type"] == "Notification" and envelope["TopicArn"] == applied.pipeline["inbound_topic_arn"]
    )
    assert notification["notificationType"] == "Received"
    action = notification["receipt"]["action"]
    assert {k: action.get(k) for k in ("type", "topicArn", "bucketName", "objectKey")} == {
        "type": "S3",
        "topicArn": applied.pipeline["inbound_topic_arn"],
        "bucketName": bucket,
        "objectKey": key,
    }
