"""SES email receiving on the embedded AWS: a message delivered to the active receipt rule set runs the
matching rules' actions in order, as SES documents them.

Pages: https://docs.aws.amazon.com/ses/latest/dg/receiving-email-concepts.html (recipient conditions,
the receiving process, rules and actions in order), receiving-email-action-s3.html (the message in the
bucket under the prefix), receiving-email-action-lambda.html and receiving-email-action-lambda-event.html
(the event, Event and RequestResponse, the disposition), receiving-email-action-stop.html,
receiving-email-action-sns.html and receiving-email-notifications-contents.html (the notification),
receiving-email-permissions.html (SES's bucket and function permissions),
https://docs.aws.amazon.com/ses/latest/APIReference/API_ReceiptRule.html (Enabled, Recipients) and
API_S3Action.html (40 MB).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest

from embedded_aws.async_invoke import AsyncInvoker
from embedded_aws.base import client
from embedded_aws.clock import VirtualClock
from embedded_aws.runtime import FunctionRuntime
from embedded_aws.ses_receiving import MAX_MESSAGE_BYTES, EmailTooLargeError, ReceivedEmail, receive_email
from tests.embedded_aws.conftest import Lab, wait_for

pytestmark = pytest.mark.e2e

REGION = "us-east-1"
ACCOUNT = "123456789012"
RULE_SET = "inbound"
BUCKET = "inbound-mail"

# Records each event it gets, answers the disposition $DISPOSITION.
SES_HANDLER = """
import fcntl, json, os

def handler(event, context):
    with open(os.environ["RECORD_PATH"], "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write(json.dumps(event) + "\\n")
    return {"disposition": os.environ.get("DISPOSITION", "CONTINUE")}
"""


def message(to: str = "reply@in.example.com", body: str = "Yes, tell me more.") -> bytes:
    return (
        "Return-Path: <prospect@client.example>\r\n"
        "From: Pat Prospect <prospect@client.example>\r\n"
        f"To: {to}\r\n"
        "Subject: Re: our offer\r\n"
        "Date: Tue, 1 Dec 2026 10:00:00 +0000\r\n"
        "Message-ID: <reply-1@client.example>\r\n"
        "MIME-Version: 1.0\r\n"
        "Content-Type: text/plain; charset=UTF-8\r\n"
        "\r\n"
        f"{body}\r\n"
    ).encode()


def rule_arn(rule: str) -> str:
    return f"arn:aws:ses:{REGION}:{ACCOUNT}:receipt-rule-set/{RULE_SET}:receipt-rule/{rule}"


def activate(endpoint: str, *rules: dict[str, Any]) -> None:
    """The rule set ``inbound`` with ``rules`` in this order (each enabled unless it says), made active."""
    ses = client("ses", endpoint, REGION)
    ses.create_receipt_rule_set(RuleSetName=RULE_SET)
    after: dict[str, str] = {}
    for rule in rules:
        ses.create_receipt_rule(RuleSetName=RULE_SET, Rule={"Enabled": True, **rule}, **after)
        after = {"After": rule["Name"]}
    ses.set_active_receipt_rule_set(RuleSetName=RULE_SET)


def inbox(lab: Lab) -> None:
    """The bucket, with the policy receiving-email-permissions.html gives SES to write to it."""
    lab.s3.create_bucket(Bucket=BUCKET)
    statement = {
        "Sid": "AllowSESPuts",
        "Effect": "Allow",
        "Principal": {"Service": "ses.amazonaws.com"},
        "Action": "s3:PutObject",
        "Resource": f"arn:aws:s3:::{BUCKET}/*",
        "Condition": {"StringEquals": {"AWS:SourceAccount": ACCOUNT}},
    }
    lab.s3.put_bucket_policy(
        Bucket=BUCKET, Policy=json.dumps({"Version": "2012-10-17", "Statement": [statement]})
    )


def to_s3(prefix: str) -> dict[str, Any]:
    return {"S3Action": {"BucketName": BUCKET, "ObjectKeyPrefix": prefix}}


def ses_function(lab: Lab, name: str, rule: str, disposition: str = "CONTINUE") -> str:
    """A function SES may invoke for ``rule`` (the AddPermission call of receiving-email-permissions.html)."""
    arn = lab.function(name, SES_HANDLER, env={"DISPOSITION": disposition})
    lab.lam.add_permission(
        FunctionName=name,
        StatementId="GiveSESPermissionToInvokeFunction",
        Action="lambda:InvokeFunction",
        Principal="ses.amazonaws.com",
        SourceAccount=ACCOUNT,
        SourceArn=rule_arn(rule),
    )
    return arn


def keys(lab: Lab) -> list[str]:
    return sorted(o["Key"] for o in lab.s3.list_objects_v2(Bucket=BUCKET).get("Contents", []))


def deliver(endpoint: str, raw: bytes, *recipients: str, **kwargs: Any) -> ReceivedEmail:
    return receive_email(endpoint, REGION, raw, recipients=recipients or ("reply@in.example.com",), **kwargs)


@pytest.fixture
def invoker(lab: Lab, runtime: FunctionRuntime, clock: VirtualClock) -> Iterator[AsyncInvoker]:
    started = AsyncInvoker(runtime, clock, lab.endpoint, workers=2)
    started.start()
    yield started
    started.stop()


def test_the_s3_action_writes_the_raw_message_under_the_prefix_and_the_message_id(lab: Lab) -> None:
    """receiving-email-action-s3.html: the raw, unmodified email in the bucket, under the object key
    prefix; notifications-contents: the object key is the message id."""
    inbox(lab)
    activate(lab.endpoint, {"Name": "store", "Recipients": ["in.example.com"], "Actions": [to_s3("mail/")]})
    raw = message()
    received = deliver(lab.endpoint, raw)
    assert received.accepted and received.rules == ["store"]
    assert received.s3_keys == [f"mail/{received.message_id}"]
    assert lab.s3.get_object(Bucket=BUCKET, Key=f"mail/{received.message_id}")["Body"].read() == raw
    assert len(received.message_id) >= 20 and received.message_id.isalnum()
    assert received.message_id == received.message_id.lower()


def test_ses_writes_to_a_bucket_only_when_its_policy_lets_ses_put_objects(lab: Lab) -> None:
    """receiving-email-permissions.html: the bucket policy must give ses.amazonaws.com s3:PutObject."""
    lab.s3.create_bucket(Bucket=BUCKET)
    activate(lab.endpoint, {"Name": "store", "Recipients": ["in.example.com"], "Actions": [to_s3("mail/")]})
    received = deliver(lab.endpoint, message())
    assert [(a.type, a.outcome) for a in received.actions] == [("S3", "failed")]
    assert keys(lab) == []


def test_a_lambda_action_gets_the_ses_event_without_the_body(lab: Lab, invoker: AsyncInvoker) -> None:
    """receiving-email-action-lambda-event.html: Records[0] is an aws:ses record whose ses.mail and
    ses.receipt are the notification's objects, the body left out; mail.messageId is the S3 key's id."""
    inbox(lab)
    function = ses_function(lab, "on-reply", "store-then-process")
    lambda_action = {"LambdaAction": {"FunctionArn": function, "InvocationType": "Event"}}
    rule = {"Name": "store-then-process", "Recipients": ["in.example.com"]}
    activate(lab.endpoint, {**rule, "Actions": [to_s3("mail/"), lambda_action]})
    received = deliver(lab.endpoint, message(body="UNIQUE-BODY-TEXT"), invoker=invoker)
    wait_for(lambda: len(lab.invocations()) == 1)
    event = lab.invocations()[0]
    record = event["Records"][0]
    assert (record["eventSource"], record["eventVersion"]) == ("aws:ses", "1.0")
    mail, receipt = record["ses"]["mail"], record["ses"]["receipt"]
    assert received.s3_keys == [f"mail/{mail['messageId']}"]
    assert receipt["action"] == {"type": "Lambda", "functionArn": function, "invocationType": "Event"}
    assert receipt["recipients"] == ["reply@in.example.com"]
    assert {v: receipt[v]["status"] for v in ("spfVerdict", "dkimVerdict", "dmarcVerdict")} == {
        "spfVerdict": "PASS",
        "dkimVerdict": "PASS",
        "dmarcVerdict": "PASS",
    }
    assert receipt["spamVerdict"] == receipt["virusVerdict"] == {"status": "DISABLED"}  # no ScanEnabled
    assert mail["source"] == "prospect@client.example"
    assert mail["destination"] == ["reply@in.example.com"]
    assert mail["commonHeaders"]["subject"] == "Re: our offer"
    assert mail["commonHeaders"]["from"] == ["Pat Prospect <prospect@client.example>"]
    assert {"name": "Message-ID", "value": "<reply-1@client.example>"} in mail["headers"]
    assert "UNIQUE-BODY-TEXT" not in json.dumps(event)


def test_rules_run_in_order_and_a_stop_action_ends_the_rule_set(lab: Lab) -> None:
    """receiving-email-concepts.html: rules in order, a rule's actions in order;
    receiving-email-action-stop.html: the Stop action ends the rule set."""
    inbox(lab)
    everyone = {"Recipients": ["in.example.com"]}
    activate(
        lab.endpoint,
        {"Name": "first", **everyone, "Actions": [to_s3("1/")]},
        {
            "Name": "second",
            **everyone,
            "Actions": [to_s3("2/"), {"StopAction": {"Scope": "RuleSet"}}, to_s3("2b/")],
        },
        {"Name": "third", **everyone, "Actions": [to_s3("3/")]},
    )
    received = deliver(lab.endpoint, message())
    assert received.rules == ["first", "second"]
    assert [(a.rule, a.type) for a in received.actions] == [
        ("first", "S3"),
        ("second", "S3"),
        ("second", "Stop"),
    ]
    assert keys(lab) == sorted([f"1/{received.message_id}", f"2/{received.message_id}"])
    assert received.stopped_by == "Stop action of rule second"


@pytest.mark.parametrize(
    ("disposition", "prefixes"),
    [("STOP_RULE_SET", []), ("STOP_RULE", ["later/"]), ("CONTINUE", ["later/", "same-rule/"])],
)
def test_a_request_response_function_controls_the_mail_flow_with_its_disposition(
    lab: Lab, runtime: FunctionRuntime, disposition: str, prefixes: list[str]
) -> None:
    """receiving-email-action-lambda.html, "Return values": STOP_RULE ends the rule, STOP_RULE_SET the
    rule set, CONTINUE (or anything else) goes on."""
    inbox(lab)
    function = ses_function(lab, "gate", "gate", disposition)
    gate = {"LambdaAction": {"FunctionArn": function, "InvocationType": "RequestResponse"}}
    activate(
        lab.endpoint,
        {"Name": "gate", "Recipients": ["in.example.com"], "Actions": [gate, to_s3("same-rule/")]},
        {"Name": "later", "Recipients": ["in.example.com"], "Actions": [to_s3("later/")]},
    )
    received = deliver(lab.endpoint, message(), runtime=runtime)
    assert received.actions[0].detail["disposition"] == disposition
    assert keys(lab) == [prefix + received.message_id for prefix in prefixes]
    assert (
        lab.invocations()[0]["Records"][0]["ses"]["receipt"]["action"]["invocationType"] == "RequestResponse"
    )


def test_recipient_conditions_match_an_address_a_domain_or_its_subdomains(lab: Lab) -> None:
    """receiving-email-concepts.html, "Recipient-based control": a condition names an address, a domain
    (its addresses) or, with a leading dot, every subdomain of a domain."""
    inbox(lab)
    activate(
        lab.endpoint,
        {"Name": "address", "Recipients": ["reply@example.com"], "Actions": [to_s3("address/")]},
        {"Name": "domain", "Recipients": ["example.com"], "Actions": [to_s3("domain/")]},
        {"Name": "subdomains", "Recipients": [".example.com"], "Actions": [to_s3("subdomains/")]},
    )
    assert deliver(lab.endpoint, message(), "Reply@Example.com").rules == ["address", "domain"]
    assert deliver(lab.endpoint, message(), "other@example.com").rules == ["domain"]
    assert deliver(lab.endpoint, message(), "reply@eu.mail.example.com").rules == ["subdomains"]
    outside = deliver(lab.endpoint, message(), "reply@notexample.com")
    assert not outside.accepted and outside.rules == [] and "rejects" in str(outside.reason)
    both = deliver(lab.endpoint, message(), "a@example.com", "b@x.example.com", "c@elsewhere.org")
    assert both.rules == ["domain", "subdomains"]


def test_a_rule_without_recipients_applies_to_the_verified_domains_and_a_disabled_rule_never_runs(
    lab: Lab,
) -> None:
    """API_ReceiptRule: no Recipients matches all recipients on all verified domains; Enabled defaults
    to false."""
    inbox(lab)
    client("ses", lab.endpoint, REGION).verify_domain_identity(Domain="example.org")
    activate(
        lab.endpoint,
        {"Name": "off", "Enabled": False, "Actions": [to_s3("off/")]},
        {"Name": "everything", "Actions": [to_s3("all/")]},
    )
    assert deliver(lab.endpoint, message(), "x@example.org").rules == ["everything"]
    assert deliver(lab.endpoint, message(), "x@eu.example.org").rules == ["everything"]
    assert not deliver(lab.endpoint, message(), "x@example.net").accepted
    assert not any(key.startswith("off/") for key in keys(lab))


def test_an_added_header_reaches_later_actions_and_a_tls_rule_bounces_mail_not_over_tls(lab: Lab) -> None:
    """receiving-email-action-add-header.html: the header is added to the received email;
    API_ReceiptRule: with TlsPolicy Require, SES bounces emails that are not received over TLS."""
    inbox(lab)
    header = {"AddHeaderAction": {"HeaderName": "X-Inbound", "HeaderValue": "campaign"}}
    activate(
        lab.endpoint,
        {"Name": "tagged", "Recipients": ["in.example.com"], "Actions": [header, to_s3("tagged/")]},
        {
            "Name": "secure",
            "Recipients": ["in.example.com"],
            "TlsPolicy": "Require",
            "Actions": [to_s3("tls/")],
        },
    )
    raw = message()
    received = deliver(lab.endpoint, raw, tls=False)
    stored = lab.s3.get_object(Bucket=BUCKET, Key=f"tagged/{received.message_id}")["Body"].read()
    assert stored == b"X-Inbound: campaign\r\n" + raw
    assert [(a.rule, a.type, a.outcome) for a in received.actions][-1] == ("secure", "TlsPolicy", "bounced")
    assert keys(lab) == [f"tagged/{received.message_id}"]
    assert deliver(lab.endpoint, raw).rules == ["tagged", "secure"]


def test_without_an_active_rule_set_the_message_is_rejected(lab: Lab) -> None:
    """API_SetActiveReceiptRuleSet: with no active rule set, email receiving is disabled."""
    inbox(lab)
    activate(lab.endpoint, {"Name": "store", "Recipients": ["in.example.com"], "Actions": [to_s3("mail/")]})
    client("ses", lab.endpoint, REGION).set_active_receipt_rule_set()
    received = deliver(lab.endpoint, message())
    assert (
        not received.accepted
        and received.rules == []
        and "no active receipt rule set" in str(received.reason)
    )
    assert keys(lab) == []


def test_a_message_over_40_mb_is_refused(lab: Lab) -> None:
    """API_S3Action: the maximum email size, headers included, is 40 MB."""
    inbox(lab)
    activate(lab.endpoint, {"Name": "store", "Recipients": ["in.example.com"], "Actions": [to_s3("mail/")]})
    raw = message()
    with pytest.raises(EmailTooLargeError):
        deliver(lab.endpoint, raw + b"x" * (MAX_MESSAGE_BYTES - len(raw) + 1))
    assert keys(lab) == []
    assert deliver(lab.endpoint, raw + b"x" * (MAX_MESSAGE_BYTES - len(raw))).accepted


@pytest.mark.parametrize(("encoding", "expected"), [("Base64", "BASE64"), ("UTF-8", "UTF8")])
def test_the_sns_action_publishes_the_notification_with_the_message_as_content(
    lab: Lab, encoding: str, expected: str
) -> None:
    """receiving-email-action-sns.html and notifications-contents: notificationType Received, the
    receipt and mail objects, and ``content``, the raw message in the action's encoding."""
    sns = client("sns", lab.endpoint, REGION)
    topic = sns.create_topic(Name="inbound")["TopicArn"]
    url, queue_arn, _ = lab.queue("inbound-notifications")
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn)
    sns_action = {"SNSAction": {"TopicArn": topic, "Encoding": encoding}}
    activate(lab.endpoint, {"Name": "publish", "Recipients": ["in.example.com"], "Actions": [sns_action]})
    raw = message()
    received = deliver(lab.endpoint, raw)
    wait_for(lambda: lab.visible(url) >= 1)
    envelope = json.loads(lab.sqs.receive_message(QueueUrl=url)["Messages"][0]["Body"])
    body = json.loads(envelope["Message"])
    assert body["notificationType"] == "Received"
    assert body["mail"]["messageId"] == received.message_id
    assert body["receipt"]["action"] == {"type": "SNS", "topicArn": topic, "encoding": expected}
    content = base64.b64decode(body["content"]) if expected == "BASE64" else body["content"].encode()
    assert content == raw
