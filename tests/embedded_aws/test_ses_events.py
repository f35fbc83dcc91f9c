"""The embedded SES v2 publishes each accepted email's events to EventBridge, with the message's tags, on
the emulator's clock, as the outcome lists say.

Pages: https://docs.aws.amazon.com/ses/latest/dg/monitoring-eventbridge.html (events to the default
bus), https://docs.aws.amazon.com/eventbridge/latest/ref/events-ref-ses.html (the detail-types),
https://docs.aws.amazon.com/ses/latest/dg/event-publishing-retrieving-sns-contents.html and its
examples page (the record: eventType, mail with tags, bounce/complaint/delivery/deliveryDelay/reject),
https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_EventDestination.html (matching types) and
https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_SuppressionOptions.html (the suppression list).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from botocore.exceptions import ClientError

from embedded_aws.base import client
from embedded_aws.clock import VirtualClock
from embedded_aws.ses_event_publishing import (
    PublishedEvent,
    pending_events,
    published_events,
    publishing_errors,
)
from embedded_aws.ses_outcomes import SesOutcomes, active_outcomes, ses_outcomes, set_ses_outcomes
from embedded_aws.ses_v2 import sent_emails
from tests.embedded_aws.conftest import Lab, wait_for
from tests.embedded_aws.test_eventbridge_rules import drain, rule_to_queue

if TYPE_CHECKING:
    from mypy_boto3_sesv2.literals import EventTypeType

REGION = "us-east-1"
ACCOUNT = "123456789012"
CONFIG_SET = "outreach-email"
BUS = f"arn:aws:events:{REGION}:{ACCOUNT}:event-bus/default"
EVERY_TYPE: list[EventTypeType] = [
    "SEND",
    "REJECT",
    "BOUNCE",
    "COMPLAINT",
    "DELIVERY",
    "DELIVERY_DELAY",
    "RENDERING_FAILURE",
]
RULE = {"source": ["aws.ses"], "detail": {"mail": {"tags": {"ses:configuration-set": [CONFIG_SET]}}}}
TAGS = [
    {"Name": "outreach-campaign", "Value": "spring_2D2026"},
    {"Name": "outreach-step", "Value": "2"},
    {"Name": "outreach-task", "Value": "0f" * 16},
]


def configuration_set(
    endpoint: str,
    types: list[EventTypeType] = EVERY_TYPE,
    *,
    enabled: bool = True,
    suppression: bool = True,
    reputation_metrics: bool = False,
) -> None:
    ses = client("sesv2", endpoint, REGION)
    ses.create_email_identity(EmailIdentity="example.com")
    options: dict[str, Any] = (
        {"SuppressionOptions": {"SuppressedReasons": ["BOUNCE", "COMPLAINT"]}} if suppression else {}
    )
    if reputation_metrics:
        options["ReputationOptions"] = {"ReputationMetricsEnabled": True}
    ses.create_configuration_set(ConfigurationSetName=CONFIG_SET, **options)
    ses.create_configuration_set_event_destination(
        ConfigurationSetName=CONFIG_SET,
        EventDestinationName="to-eventbridge",
        EventDestination={
            "Enabled": enabled,
            "MatchingEventTypes": types,
            "EventBridgeDestination": {"EventBusArn": BUS},
        },
    )


def send(endpoint: str, *to: str) -> str:
    return str(
        client("sesv2", endpoint, REGION).send_email(
            FromEmailAddress="Outreach <campaigns@example.com>",
            Destination={"ToAddresses": list(to)},
            Content={"Simple": {"Subject": {"Data": "Hello <time>"}, "Body": {"Text": {"Data": "Hi"}}}},
            ConfigurationSetName=CONFIG_SET,
            EmailTags=TAGS,
        )["MessageId"]
    )


def kinds(events: list[PublishedEvent]) -> list[tuple[str, tuple[str, ...]]]:
    return [(e.event_type, e.recipients) for e in events]


@pytest.fixture(autouse=True)
def everyone_delivered() -> Iterator[None]:
    set_ses_outcomes(None)
    yield
    set_ses_outcomes(None)


def test_an_accepted_send_publishes_send_at_once_and_delivery_a_few_virtual_seconds_later(
    lab: Lab, clock: VirtualClock
) -> None:
    # GIVEN a configuration set with an EventBridge destination for every type and the pipeline's rule
    configuration_set(lab.endpoint)
    url, _ = rule_to_queue(lab, "ses-events", RULE)
    # WHEN an email is sent (its delivery a virtual hour away, so it cannot come before the checks)
    with ses_outcomes(delivery_seconds=3600):
        message_id = send(lab.endpoint, "a@example.org")
    # THEN the Send event is on the queue when SendEmail has answered, as the documented envelope
    [sent] = drain(lab, url)
    event = json.loads(sent["Body"])
    assert (event["source"], event["detail-type"], event["account"]) == ("aws.ses", "Email Sent", ACCOUNT)
    assert event["resources"] == [f"arn:aws:ses:{REGION}:{ACCOUNT}:configuration-set/{CONFIG_SET}"]
    detail = event["detail"]
    assert (detail["eventType"], detail["send"]) == ("Send", {})
    mail = detail["mail"]
    assert (mail["messageId"], mail["destination"], mail["source"]) == (
        message_id,
        ["a@example.org"],
        "Outreach <campaigns@example.com>",
    )
    assert mail["commonHeaders"]["subject"] == "Hello <time>"
    # ... with the message's tags as {name: [value]} and the ones SES adds
    assert {t["Name"]: [t["Value"]] for t in TAGS}.items() <= mail["tags"].items()
    assert mail["tags"]["ses:configuration-set"] == [CONFIG_SET]
    assert mail["tags"]["ses:from-domain"] == ["example.com"]
    assert mail["tags"]["ses:source-ip"] == ["127.0.0.1"]
    assert mail["tags"]["ses:caller-identity"]
    assert sent_emails(REGION)[0].tags == {t["Name"]: t["Value"] for t in TAGS}
    # ... and the delivery follows when the emulator's clock gets there, recorded with its time
    assert kinds(published_events(REGION)) == [("SEND", ("a@example.org",))]
    clock.advance(3600)
    wait_for(lambda: len(published_events(REGION)) == 2)
    send_event, delivery = published_events(REGION)
    assert kinds([send_event, delivery]) == [("SEND", ("a@example.org",)), ("DELIVERY", ("a@example.org",))]
    assert send_event.event_id == event["id"] and send_event.message_id == message_id
    assert delivery.at - send_event.at == pytest.approx(3600)
    [delivered] = drain(lab, url)
    body = json.loads(delivered["Body"])
    assert (body["detail-type"], body["detail"]["delivery"]["recipients"]) == (
        "Email Delivered",
        ["a@example.org"],
    )
    assert body["detail"]["mail"]["messageId"] == message_id


def test_only_the_types_an_enabled_eventbridge_destination_matches_are_published(
    lab: Lab, clock: VirtualClock
) -> None:
    # GIVEN a destination for bounces and complaints only (as modules/email had it)
    configuration_set(lab.endpoint, ["BOUNCE", "COMPLAINT"])
    url, _ = rule_to_queue(lab, "ses-events", RULE)
    with ses_outcomes(hard_bounce={"gone@example.org"}, delivery_seconds=1):
        send(lab.endpoint, "a@example.org")
        send(lab.endpoint, "gone@example.org")
    # THEN once every event is due, only the bounce was published; the sends and the delivery were not
    clock.advance(60)
    wait_for(lambda: pending_events(REGION) == 0)
    assert kinds(published_events(REGION)) == [("BOUNCE", ("gone@example.org",))]
    assert [json.loads(m["Body"])["detail-type"] for m in drain(lab, url)] == ["Email Bounced"]


def test_a_disabled_destination_publishes_nothing(lab: Lab, clock: VirtualClock) -> None:
    configuration_set(lab.endpoint, enabled=False)
    url, _ = rule_to_queue(lab, "ses-events", RULE)
    send(lab.endpoint, "a@example.org")
    clock.advance(60)
    wait_for(lambda: pending_events(REGION) == 0)
    assert published_events(REGION) == []
    assert drain(lab, url) == []


def test_outcome_lists_make_addresses_bounce_hard_or_soft_complain_or_arrive_late(
    lab: Lab, clock: VirtualClock
) -> None:
    configuration_set(lab.endpoint)
    with ses_outcomes(
        hard_bounce={"Hard@example.org"},
        soft_bounce={"soft@example.org"},
        complain={"angry@example.org"},
        delay={"slow@example.org": 600.0},
    ) as active:
        for who in ["ok", "hard", "soft", "angry", "slow"]:
            send(lab.endpoint, f"{who}@example.org")
    assert active_outcomes() == SesOutcomes()
    # WHEN virtual time passes beyond every outcome
    clock.advance(active.soft_bounce_seconds + active.complaint_seconds + 600)
    wait_for(lambda: len(published_events(REGION)) == 12)
    by_recipient: dict[str, list[PublishedEvent]] = {}
    for event in published_events(REGION):
        by_recipient.setdefault(event.recipients[0].split("@")[0], []).append(event)
    # THEN each recipient's events follow its outcome, in time order
    assert {who: [e.event_type for e in events] for who, events in by_recipient.items()} == {
        "ok": ["SEND", "DELIVERY"],
        "hard": ["SEND", "BOUNCE"],
        "soft": ["SEND", "BOUNCE"],
        "angry": ["SEND", "DELIVERY", "COMPLAINT"],
        "slow": ["SEND", "DELIVERY_DELAY", "DELIVERY"],
    }
    bounce_types = (by_recipient["hard"][1].bounce_type, by_recipient["soft"][1].bounce_type)
    assert bounce_types == ("Permanent", "Transient")
    hard = by_recipient["hard"][1].event["detail"]["bounce"]
    assert hard["bouncedRecipients"][0]["emailAddress"] == "hard@example.org"
    complaint = by_recipient["angry"][2].event["detail"]["complaint"]
    assert complaint["complainedRecipients"] == [{"emailAddress": "angry@example.org"}]
    slow = by_recipient["slow"]
    assert slow[2].at - slow[0].at == pytest.approx(600.0)
    delayed = slow[1].event["detail"]["deliveryDelay"]["delayedRecipients"]
    assert [r["emailAddress"] for r in delayed] == ["slow@example.org"]
    for events in by_recipient.values():
        assert [e.at for e in events] == sorted(e.at for e in events)


def test_hard_bounces_and_complaints_put_the_address_on_the_suppression_list(
    lab: Lab, clock: VirtualClock
) -> None:
    configuration_set(lab.endpoint)
    ses = client("sesv2", lab.endpoint, REGION)
    with ses_outcomes(
        hard_bounce={"gone@example.org"}, complain={"angry@example.org"}, soft_bounce={"full@example.org"}
    ):
        send(lab.endpoint, "gone@example.org")
        send(lab.endpoint, "angry@example.org")
        send(lab.endpoint, "full@example.org")
    clock.advance(600)
    wait_for(lambda: len(published_events(REGION)) == 7)
    reasons = {
        address: ses.get_suppressed_destination(EmailAddress=address)["SuppressedDestination"]["Reason"]
        for address in ("gone@example.org", "angry@example.org")
    }
    assert reasons == {"gone@example.org": "BOUNCE", "angry@example.org": "COMPLAINT"}
    with pytest.raises(ClientError, match="NotFoundException"):
        ses.get_suppressed_destination(EmailAddress="full@example.org")  # a soft bounce is not suppressed
    # AND a later send to a suppressed address bounces on the list, without a delivery attempt
    before = len(published_events(REGION))
    send(lab.endpoint, "gone@example.org")
    clock.advance(60)
    wait_for(lambda: len(published_events(REGION)) == before + 2)
    bounce = published_events(REGION)[-1]
    assert bounce.event_type == "BOUNCE"
    assert bounce.event["detail"]["bounce"]["bounceSubType"] == "OnAccountSuppressionList"


def test_without_suppression_options_on_the_configuration_set_nothing_is_suppressed(
    lab: Lab, clock: VirtualClock
) -> None:
    configuration_set(lab.endpoint, suppression=False)
    with ses_outcomes(hard_bounce={"gone@example.org"}):
        send(lab.endpoint, "gone@example.org")
    clock.advance(60)
    wait_for(lambda: len(published_events(REGION)) == 2)
    with pytest.raises(ClientError, match="NotFoundException"):
        client("sesv2", lab.endpoint, REGION).get_suppressed_destination(EmailAddress="gone@example.org")


def test_the_duplicate_switch_delivers_every_event_twice_with_the_same_id(
    lab: Lab, clock: VirtualClock
) -> None:
    configuration_set(lab.endpoint)
    url, _ = rule_to_queue(lab, "ses-events", RULE)
    with ses_outcomes(duplicate_events=True):
        send(lab.endpoint, "a@example.org")
    clock.advance(60)
    wait_for(lambda: len(published_events(REGION)) == 2)
    assert [e.copies for e in published_events(REGION)] == [2, 2]
    bodies = [json.loads(m["Body"]) for m in drain(lab, url)]
    ids = [body["id"] for body in bodies]
    assert sorted(ids) == sorted([e.event_id for e in published_events(REGION)] * 2)
    assert sorted(body["detail-type"] for body in bodies) == ["Email Delivered"] * 2 + ["Email Sent"] * 2


def test_a_rejected_message_publishes_send_and_reject_and_is_never_delivered(
    lab: Lab, clock: VirtualClock
) -> None:
    configuration_set(lab.endpoint)
    with ses_outcomes(reject={"virus@example.org"}):
        send(lab.endpoint, "virus@example.org")
    clock.advance(60)
    wait_for(lambda: pending_events(REGION) == 0)
    assert kinds(published_events(REGION)) == [
        ("SEND", ("virus@example.org",)),
        ("REJECT", ("virus@example.org",)),
    ]
    assert published_events(REGION)[1].event["detail"]["reject"] == {"reason": "Bad content"}


def test_an_email_without_a_configuration_set_publishes_nothing(lab: Lab, clock: VirtualClock) -> None:
    configuration_set(lab.endpoint)
    client("sesv2", lab.endpoint, REGION).send_email(
        FromEmailAddress="campaigns@example.com",
        Destination={"ToAddresses": ["a@example.org"]},
        Content={"Simple": {"Subject": {"Data": "Hi"}, "Body": {"Text": {"Data": "Hi"}}}},
    )
    clock.advance(60)
    wait_for(lambda: pending_events(REGION) == 0)
    assert published_events(REGION) == []


def _in_process_send() -> dict[str, Any]:
    from moto import mock_aws

    from embedded_aws.event_bus import support_event_pattern_rules
    from embedded_aws.ses_v2 import support_ses_v2

    support_ses_v2()
    support_event_pattern_rules()
    with mock_aws():
        session = boto3.Session(
            aws_access_key_id="testing", aws_secret_access_key="testing", region_name=REGION
        )
        sqs, events = session.client("sqs"), session.client("events")
        url = sqs.create_queue(QueueName="in-process")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        rule = events.put_rule(Name="r", EventPattern=json.dumps(RULE))["RuleArn"]
        policy = {
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Service": "events.amazonaws.com"},
                    "Action": "sqs:SendMessage",
                    "Resource": arn,
                    "Condition": {"ArnEquals": {"aws:SourceArn": rule}},
                }
            ]
        }
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps(policy)})
        events.put_targets(Rule="r", Targets=[{"Id": "q", "Arn": arn}])
        configuration_set_in(session)
        with ses_outcomes(hard_bounce={"gone@example.org"}, delivery_seconds=0):
            session.client("sesv2").send_email(
                FromEmailAddress="campaigns@example.com",
                Destination={"ToAddresses": ["gone@example.org"]},
                Content={"Simple": {"Subject": {"Data": "Hi"}, "Body": {"Text": {"Data": "Hi"}}}},
                ConfigurationSetName=CONFIG_SET,
            )
        wait_for(lambda: len(published_events(REGION)) == 2)
        messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
        return {
            "published": kinds(published_events(REGION)),
            "delivered": sorted(json.loads(m["Body"])["detail-type"] for m in messages),
        }


def configuration_set_in(session: boto3.Session) -> None:
    ses = session.client("sesv2")
    ses.create_email_identity(EmailIdentity="example.com")
    ses.create_configuration_set(ConfigurationSetName=CONFIG_SET)
    ses.create_configuration_set_event_destination(
        ConfigurationSetName=CONFIG_SET,
        EventDestinationName="to-eventbridge",
        EventDestination={
            "Enabled": True,
            "MatchingEventTypes": EVERY_TYPE,
            "EventBridgeDestination": {"EventBusArn": BUS},
        },
    )


def test_outcomes_and_the_record_work_in_process_under_mock_aws_too() -> None:
    assert _in_process_send() == {
        "published": [("SEND", ("gone@example.org",)), ("BOUNCE", ("gone@example.org",))],
        "delivered": ["Email Bounced", "Email Sent"],
    }


def test_an_event_for_a_bus_that_does_not_exist_is_not_published_and_the_error_is_kept(
    lab: Lab, clock: VirtualClock
) -> None:
    ses = client("sesv2", lab.endpoint, REGION)
    ses.create_email_identity(EmailIdentity="example.com")
    ses.create_configuration_set(ConfigurationSetName=CONFIG_SET)
    ses.create_configuration_set_event_destination(
        ConfigurationSetName=CONFIG_SET,
        EventDestinationName="to-a-missing-bus",
        EventDestination={
            "Enabled": True,
            "MatchingEventTypes": ["SEND"],
            "EventBridgeDestination": {"EventBusArn": BUS.replace("/default", "/missing")},
        },
    )
    send(lab.endpoint, "a@example.org")
    assert published_events(REGION) == []
    [error] = publishing_errors(REGION)
    assert "Email Sent" in error and "event-bus/missing" in error and "ResourceNotFoundException" in error
