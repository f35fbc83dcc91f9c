"""A dead-letter queue's RedriveAllowPolicy is kept, returned, checked and enforced by the embedded AWS."""

from __future__ import annotations

import json
from typing import Any

import botocore.exceptions
import pytest

from embedded_aws.base import client

pytestmark = pytest.mark.e2e

ACCOUNT_QUEUE_ARN = "arn:aws:sqs:us-east-1:123456789012:{}"


def _by_queue(*names: str) -> str:
    return json.dumps(
        {"redrivePermission": "byQueue", "sourceQueueArns": [ACCOUNT_QUEUE_ARN.format(n) for n in names]}
    )


def _redrive_to(sqs: Any, dlq_url: str) -> str:
    arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 3})


@pytest.fixture
def sqs(endpoint: str, clock: object) -> Any:
    return client("sqs", endpoint)


def test_a_redrive_allow_policy_set_at_creation_is_returned_by_get_queue_attributes(sqs: Any) -> None:
    policy = _by_queue("work")
    url = sqs.create_queue(QueueName="work-dlq", Attributes={"RedriveAllowPolicy": policy})["QueueUrl"]

    named = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["RedriveAllowPolicy"])["Attributes"]
    every = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]

    assert json.loads(named["RedriveAllowPolicy"]) == json.loads(policy)
    assert every["RedriveAllowPolicy"] == named["RedriveAllowPolicy"]


def test_a_queue_without_a_redrive_allow_policy_reports_none(sqs: Any) -> None:
    url = sqs.create_queue(QueueName="plain")["QueueUrl"]

    assert (
        "RedriveAllowPolicy"
        not in sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    )


def test_set_queue_attributes_replaces_and_an_empty_string_removes_the_redrive_allow_policy(sqs: Any) -> None:
    created = sqs.create_queue(QueueName="work-dlq", Attributes={"RedriveAllowPolicy": _by_queue("a")})
    url = created["QueueUrl"]

    sqs.set_queue_attributes(QueueUrl=url, Attributes={"RedriveAllowPolicy": _by_queue("b")})
    replaced = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["RedriveAllowPolicy"])["Attributes"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"RedriveAllowPolicy": ""})
    removed = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]

    assert json.loads(replaced["RedriveAllowPolicy"]) == json.loads(_by_queue("b"))
    assert "RedriveAllowPolicy" not in removed


@pytest.mark.parametrize(
    "policy",
    [
        "not json",
        json.dumps({"redrivePermission": "someQueues"}),
        json.dumps({"redrivePermission": "byQueue"}),
        json.dumps({"redrivePermission": "byQueue", "sourceQueueArns": []}),
        json.dumps({"redrivePermission": "allowAll", "sourceQueueArns": [ACCOUNT_QUEUE_ARN.format("a")]}),
        _by_queue(*(f"q{i}" for i in range(11))),
    ],
)
def test_a_redrive_allow_policy_outside_the_documented_rules_is_refused(sqs: Any, policy: str) -> None:
    with pytest.raises(botocore.exceptions.ClientError) as refused:
        sqs.create_queue(QueueName="work-dlq", Attributes={"RedriveAllowPolicy": policy})

    assert refused.value.response["Error"]["Code"] == "InvalidAttributeValue"
    assert sqs.list_queues().get("QueueUrls", []) == []


def test_a_source_queue_the_dead_letter_queue_allows_may_redrive_to_it(sqs: Any) -> None:
    created = sqs.create_queue(QueueName="work-dlq", Attributes={"RedriveAllowPolicy": _by_queue("work")})
    dlq = created["QueueUrl"]

    work = sqs.create_queue(QueueName="work", Attributes={"RedrivePolicy": _redrive_to(sqs, dlq)})["QueueUrl"]

    redrive = sqs.get_queue_attributes(QueueUrl=work, AttributeNames=["RedrivePolicy"])["Attributes"]
    assert json.loads(redrive["RedrivePolicy"])["maxReceiveCount"] == 3


@pytest.mark.parametrize(
    "policy",
    [_by_queue("another"), json.dumps({"redrivePermission": "denyAll"})],
    ids=["by-another-queue", "deny-all"],
)
def test_a_source_queue_the_dead_letter_queue_does_not_allow_cannot_name_it(sqs: Any, policy: str) -> None:
    dlq = sqs.create_queue(QueueName="work-dlq", Attributes={"RedriveAllowPolicy": policy})["QueueUrl"]
    other = sqs.create_queue(QueueName="other")["QueueUrl"]

    with pytest.raises(botocore.exceptions.ClientError) as at_creation:
        sqs.create_queue(QueueName="work", Attributes={"RedrivePolicy": _redrive_to(sqs, dlq)})
    with pytest.raises(botocore.exceptions.ClientError) as at_update:
        sqs.set_queue_attributes(QueueUrl=other, Attributes={"RedrivePolicy": _redrive_to(sqs, dlq)})

    assert at_creation.value.response["Error"]["Code"] == "InvalidParameterValue"
    assert at_update.value.response["Error"]["Code"] == "InvalidParameterValue"
    unchanged = sqs.get_queue_attributes(QueueUrl=other, AttributeNames=["All"])["Attributes"]
    assert "RedrivePolicy" not in unchanged
