"""EventBridge event-pattern rules on the default bus deliver what matches to their SQS and Lambda targets.

Pages: https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns.html (and its
content-filtering and arrays pages), eb-events.html (the fields of an event), eb-rules.html (a rule is
a pattern or a schedule), eb-use-resource-based.html (queue and function permissions), eb-rule-dlq.html
(a refused delivery goes to the DLQ at once), and
https://docs.aws.amazon.com/lambda/latest/dg/invocation-async.html (a rule invokes Lambda asynchronously).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from embedded_aws.async_invoke import AsyncInvoker
from embedded_aws.base import client
from embedded_aws.clock import VirtualClock
from embedded_aws.event_bus import bus_deliveries
from embedded_aws.event_rule_invoker import EventRuleInvoker
from embedded_aws.runtime import FunctionRuntime
from tests.embedded_aws.conftest import Lab, wait_for

REGION = "us-east-1"
SES_RULE = {
    "source": ["aws.ses"],
    "detail": {"mail": {"tags": {"ses:configuration-set": ["outreach-email"]}}},
}


def queue_policy(queue_arn: str, rule_arn: str) -> str:
    """The statement eb-use-resource-based.html#eb-sqs-permissions gives a rule's target queue."""
    statement = {
        "Effect": "Allow",
        "Principal": {"Service": "events.amazonaws.com"},
        "Action": "sqs:SendMessage",
        "Resource": queue_arn,
        "Condition": {"ArnEquals": {"aws:SourceArn": rule_arn}},
    }
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]})


def rule_to_queue(
    lab: Lab, name: str, pattern: dict[str, Any], *, permitted: bool = True, **target: Any
) -> tuple[str, str]:
    """A rule with ``pattern`` whose target is a new queue (allowed by its policy unless not
    ``permitted``); returns (queue url, rule ARN)."""
    events = client("events", lab.endpoint)
    url, arn, _ = lab.queue(f"{name}-target")
    rule_arn: str = events.put_rule(Name=name, EventPattern=json.dumps(pattern))["RuleArn"]
    if permitted:
        lab.sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": queue_policy(arn, rule_arn)})
    events.put_targets(Rule=name, Targets=[{"Id": "queue", "Arn": arn, **target}])
    return url, rule_arn


def drain(lab: Lab, url: str) -> list[dict[str, Any]]:
    """Every message now in the queue (received and deleted), with its attributes."""
    messages: list[dict[str, Any]] = []
    while True:
        batch = lab.sqs.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"]
        ).get("Messages", [])
        if not batch:
            return messages
        messages.extend(batch)
        for message in batch:
            lab.sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])


def put(endpoint: str, source: str, detail: dict[str, Any], detail_type: str = "Test") -> str:
    answer = client("events", endpoint).put_events(
        Entries=[{"Source": source, "DetailType": detail_type, "Detail": json.dumps(detail)}]
    )
    assert answer["FailedEntryCount"] == 0
    return str(answer["Entries"][0]["EventId"])


def test_an_event_matching_the_rule_reaches_the_queue_as_the_event_json_unchanged(
    lab: Lab, clock: VirtualClock
) -> None:
    # GIVEN the SES rule of the pipeline (source and configuration-set tag) with a queue target
    url, _ = rule_to_queue(lab, "ses-events", SES_RULE)
    # WHEN an event arrives whose text holds what moto's template would have rewritten
    detail = {
        "eventType": "Bounce",
        "mail": {
            "tags": {"ses:configuration-set": ["outreach-email"], "outreach-step": ["2"]},
            "commonHeaders": {"subject": 'Your <time> slot at <source>, "quoted" \\ <id>'},
        },
    }
    event_id = put(lab.endpoint, "aws.ses", detail, "Email Bounced")
    # THEN the queue holds the event JSON with every documented field, its detail as sent
    [message] = drain(lab, url)
    event = json.loads(message["Body"])
    assert set(event) == {
        "version",
        "id",
        "detail-type",
        "source",
        "account",
        "time",
        "region",
        "resources",
        "detail",
    }
    assert (event["id"], event["source"], event["detail-type"]) == (event_id, "aws.ses", "Email Bounced")
    assert (event["version"], event["account"], event["region"]) == ("0", "123456789012", REGION)
    assert event["detail"] == detail
    assert len(event["time"]) == 20 and event["time"].endswith("Z")  # 2017-12-22T18:43:48Z


def test_an_event_of_another_source_or_configuration_set_reaches_no_target(
    lab: Lab, clock: VirtualClock
) -> None:
    url, _ = rule_to_queue(lab, "ses-events", SES_RULE)
    put(lab.endpoint, "outreach.test", {"mail": {"tags": {"ses:configuration-set": ["outreach-email"]}}})
    put(lab.endpoint, "aws.ses", {"mail": {"tags": {"ses:configuration-set": ["another-set"]}}})
    put(lab.endpoint, "aws.ses", {"mail": {"tags": {}}})
    assert drain(lab, url) == []
    assert bus_deliveries(REGION) == []


def test_a_scheduled_rule_and_a_disabled_rule_match_no_event(lab: Lab, clock: VirtualClock) -> None:
    # GIVEN a scheduled rule with a Lambda target (moto matched it to every event and then failed the
    # whole PutEvents on the Lambda target) and a disabled pattern rule with a queue target
    events = client("events", lab.endpoint)
    function = lab.function("reconciler")
    events.put_rule(Name="reconcile", ScheduleExpression="rate(5 minutes)")
    events.put_targets(Rule="reconcile", Targets=[{"Id": "f", "Arn": function}])
    url, _ = rule_to_queue(lab, "disabled", {"source": ["outreach.test"]})
    events.disable_rule(Name="disabled")
    # WHEN an event is put, THEN PutEvents succeeds and no target gets it
    put(lab.endpoint, "outreach.test", {"n": 1})
    assert drain(lab, url) == []
    assert bus_deliveries(REGION) == []


@pytest.mark.parametrize(
    ("pattern", "detail", "matched"),
    [
        # Prefix matching works on strings (content-based-filtering, "Prefix matching").
        ({"state": [{"prefix": "init"}]}, {"state": "initializing"}, True),
        ({"state": [{"prefix": "init"}]}, {"state": "running"}, False),
        # Anything-but: a value, a list, a prefix; a missing field is not "anything but".
        ({"state": [{"anything-but": "initializing"}]}, {"state": "running"}, True),
        ({"state": [{"anything-but": ["stopped", "overloaded"]}]}, {"state": "stopped"}, False),
        ({"state": [{"anything-but": {"prefix": "init"}}]}, {"state": "initializing"}, False),
        ({"state": [{"anything-but": "initializing"}]}, {}, False),
        # Exists works on leaf nodes only, never on an object.
        ({"c-count": [{"exists": True}]}, {"c-count": 3}, True),
        ({"c-count": [{"exists": False}]}, {"state": "x"}, True),
        ({"c-count": [{"exists": True}]}, {"c-count": {"c1": 100}}, False),
        ({"c-count": [{"exists": False}]}, {"c-count": {"c1": 100}}, True),
        # Numeric ranges apply to JSON numbers only: true is not 1.
        ({"c-count": [{"numeric": [">", 0, "<=", 5]}]}, {"c-count": 5}, True),
        ({"c-count": [{"numeric": [">", 0, "<=", 5]}]}, {"c-count": 6}, False),
        ({"c-count": [{"numeric": [">", 0]}]}, {"c-count": True}, False),
        ({"flag": [1]}, {"flag": True}, False),
        # An array matches when it shares a value with the pattern (eb-event-patterns-arrays.html).
        ({"tags": ["b"]}, {"tags": ["a", "b"]}, True),
        ({"tags": ["c"]}, {"tags": ["a", "b"]}, False),
        # Nesting is structure: a key with a dot is not a nested field.
        ({"a": {"b": ["v"]}}, {"a.b": "v"}, False),
        ({"a": {"b": ["v"]}}, {"a": {"b": "v"}}, True),
    ],
)
def test_pattern_operators_match_as_the_eventbridge_pages_say(
    lab: Lab, clock: VirtualClock, pattern: dict[str, Any], detail: dict[str, Any], matched: bool
) -> None:
    url, _ = rule_to_queue(lab, "operators", {"source": ["outreach.test"], "detail": pattern})
    put(lab.endpoint, "outreach.test", detail)
    assert len(drain(lab, url)) == (1 if matched else 0)


def test_a_queue_whose_policy_does_not_admit_the_rule_gets_nothing_and_the_event_goes_to_the_dlq_at_once(
    lab: Lab, clock: VirtualClock
) -> None:
    # GIVEN a target queue without a policy for EventBridge, and a target DLQ that has one
    events = client("events", lab.endpoint)
    dlq_url, dlq_arn, _ = lab.queue("rule-dlq")
    url, rule_arn = rule_to_queue(
        lab, "unpermitted", {"source": ["outreach.test"]}, permitted=False, DeadLetterConfig={"Arn": dlq_arn}
    )
    lab.sqs.set_queue_attributes(QueueUrl=dlq_url, Attributes={"Policy": queue_policy(dlq_arn, rule_arn)})
    target_arn = events.list_targets_by_rule(Rule="unpermitted")["Targets"][0]["Arn"]
    # WHEN an event matches
    event_id = put(lab.endpoint, "outreach.test", {"n": 1})
    # THEN the target gets nothing and the DLQ gets the event with eb-rule-dlq's attributes, no retry
    assert drain(lab, url) == []
    [dead] = drain(lab, dlq_url)
    assert json.loads(dead["Body"])["id"] == event_id
    attributes = {k: v["StringValue"] for k, v in dead["MessageAttributes"].items()}
    assert attributes["ERROR_CODE"] == "AccessDeniedException"
    assert (attributes["RULE_ARN"], attributes["TARGET_ARN"]) == (rule_arn, target_arn)
    assert attributes["RETRY_ATTEMPTS"] == "0"
    assert [d.outcome for d in bus_deliveries(REGION)] == ["dead_lettered"]


def test_a_queue_policy_that_also_denies_insecure_transport_still_admits_the_rule(
    lab: Lab, clock: VirtualClock
) -> None:
    url, rule_arn = rule_to_queue(lab, "tls-only", {"source": ["outreach.test"]})
    arn = lab.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    policy = json.loads(queue_policy(arn, rule_arn))
    policy["Statement"].append(
        {
            "Effect": "Deny",
            "Principal": "*",
            "Action": "sqs:*",
            "Resource": arn,
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        }
    )
    lab.sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps(policy)})
    put(lab.endpoint, "outreach.test", {"n": 1})
    assert len(drain(lab, url)) == 1


def test_a_permission_for_another_rule_does_not_admit_this_one(lab: Lab, clock: VirtualClock) -> None:
    url, _ = rule_to_queue(lab, "first", {"source": ["outreach.test"]})
    events = client("events", lab.endpoint)
    events.put_rule(Name="second", EventPattern=json.dumps({"source": ["outreach.test"]}))
    target = events.list_targets_by_rule(Rule="first")["Targets"][0]["Arn"]
    events.put_targets(Rule="second", Targets=[{"Id": "queue", "Arn": target}])
    put(lab.endpoint, "outreach.test", {"n": 1})
    assert len(drain(lab, url)) == 1
    assert sorted(d.outcome for d in bus_deliveries(REGION)) == ["delivered", "dropped"]


def test_a_target_input_or_input_path_replaces_the_event_in_the_message(
    lab: Lab, clock: VirtualClock
) -> None:
    constant, _ = rule_to_queue(lab, "constant", {"source": ["outreach.test"]}, Input='{"fixed": true}')
    part, _ = rule_to_queue(lab, "part", {"source": ["outreach.test"]}, InputPath="$.detail")
    put(lab.endpoint, "outreach.test", {"n": 7})
    assert [json.loads(m["Body"]) for m in drain(lab, constant)] == [{"fixed": True}]
    assert [json.loads(m["Body"]) for m in drain(lab, part)] == [{"n": 7}]


# Writes the event it was invoked with, one JSON line per invocation.
EVENT_RECORDER = """
import json, os
def handler(event, context):
    with open(os.environ["RECORD_PATH"], "a") as handle:
        handle.write(json.dumps({"event": event}) + "\\n")
    return {"ok": True}
"""


@pytest.fixture
def rule_invoker(
    lab: Lab, runtime: FunctionRuntime, clock: VirtualClock
) -> Iterator[tuple[AsyncInvoker, EventRuleInvoker]]:
    invoker = AsyncInvoker(runtime, clock, lab.endpoint)
    rules = EventRuleInvoker(invoker, clock, lab.endpoint, region=REGION)
    invoker.start()
    rules.start()
    yield invoker, rules
    rules.stop()
    invoker.stop()


@pytest.mark.e2e
def test_a_lambda_target_is_invoked_asynchronously_with_the_event(
    lab: Lab, clock: VirtualClock, rule_invoker: tuple[AsyncInvoker, EventRuleInvoker]
) -> None:
    # GIVEN a rule whose Lambda target grants events.amazonaws.com the invoke for this rule
    events = client("events", lab.endpoint)
    function = lab.function("consumer", EVENT_RECORDER)
    rule_arn = events.put_rule(Name="to-lambda", EventPattern=json.dumps({"source": ["outreach.test"]}))[
        "RuleArn"
    ]
    lab.lam.add_permission(
        FunctionName="consumer",
        StatementId="events",
        Action="lambda:InvokeFunction",
        Principal="events.amazonaws.com",
        SourceArn=rule_arn,
    )
    events.put_targets(Rule="to-lambda", Targets=[{"Id": "f", "Arn": function}])
    # WHEN an event matches
    event_id = put(lab.endpoint, "outreach.test", {"n": 3})
    # THEN PutEvents answered before the function ran, and the function gets the event once
    wait_for(lambda: len(lab.invocations()) == 1)
    [invocation] = lab.invocations()
    assert (invocation["event"]["id"], invocation["event"]["detail"]) == (event_id, {"n": 3})
    assert rule_invoker[1].stats[rule_arn].invocations == 1


@pytest.mark.e2e
def test_a_lambda_target_without_permission_for_the_rule_sends_the_event_to_the_dlq(
    lab: Lab, clock: VirtualClock, rule_invoker: tuple[AsyncInvoker, EventRuleInvoker]
) -> None:
    events = client("events", lab.endpoint)
    function = lab.function("unreachable", EVENT_RECORDER)
    dlq_url, dlq_arn, _ = lab.queue("lambda-rule-dlq")
    rule_arn = events.put_rule(Name="no-permission", EventPattern=json.dumps({"source": ["outreach.test"]}))[
        "RuleArn"
    ]
    events.put_targets(
        Rule="no-permission", Targets=[{"Id": "f", "Arn": function, "DeadLetterConfig": {"Arn": dlq_arn}}]
    )
    event_id = put(lab.endpoint, "outreach.test", {"n": 4})
    wait_for(lambda: lab.visible(dlq_url) == 1)
    [dead] = drain(lab, dlq_url)
    assert json.loads(dead["Body"])["id"] == event_id
    assert dead["MessageAttributes"]["RULE_ARN"]["StringValue"] == rule_arn
    assert lab.invocations() == []
