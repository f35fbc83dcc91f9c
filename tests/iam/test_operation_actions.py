"""Recorded operations become IAM actions on planned ARNs: the mappings that are not one to one."""

from __future__ import annotations

from typing import Any

import pytest

from tests.iam.conftest import Evidence
from tests.iam.needs import Need
from tests.iam.operation_actions import UnresolvedResource, needs_of

TABLE = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-prod-tasks"
QUEUE = "arn:aws:sqs:eu-central-1:111122223333:outreach-prod-scrape"
RESULTS = "arn:aws:s3:::outreach-prod-results-111122223333-eu-central-1"
SCRAPER = "outreach-prod-scraper"


def _record(
    signing_name: str, operation: str, resources: dict[str, Any], **environment: list[str]
) -> dict[str, Any]:
    return {
        "handler": "outreach.scraper",
        "signing_name": signing_name,
        "operation": operation,
        "resources": resources,
        "environment": environment,
    }


def _needs(evidence: Evidence, record: dict[str, Any]) -> list[tuple[str, str]]:
    function = evidence.plan.functions()[SCRAPER]
    return sorted((n.action, n.resource) for n in needs_of(record, function, evidence.plan))


def test_a_transaction_needs_each_items_own_action_on_its_table(evidence: Evidence) -> None:
    record = _record(
        "dynamodb",
        "TransactWriteItems",
        {"TransactItems": [["ConditionCheck", "t"], ["Delete", "t"], ["Put", "t"], ["Update", "t"]]},
        t=["TASKS_TABLE"],
    )
    assert _needs(evidence, record) == [
        ("dynamodb:ConditionCheckItem", TABLE),
        ("dynamodb:DeleteItem", TABLE),
        ("dynamodb:PutItem", TABLE),
        ("dynamodb:UpdateItem", TABLE),
    ]


@pytest.mark.parametrize(
    ("operation", "action"),
    [
        ("SendMessageBatch", "sqs:SendMessage"),
        ("DeleteMessageBatch", "sqs:DeleteMessage"),
        ("ChangeMessageVisibilityBatch", "sqs:ChangeMessageVisibility"),
        ("ChangeMessageVisibility", "sqs:ChangeMessageVisibility"),
    ],
)
def test_an_sqs_batch_operation_needs_its_single_message_action(
    evidence: Evidence, operation: str, action: str
) -> None:
    record = _record("sqs", operation, {"QueueUrl": "q"}, q=["SCRAPE_QUEUE_URL"])
    assert _needs(evidence, record) == [(action, QUEUE)]


def test_a_query_on_an_index_needs_the_action_on_the_index(evidence: Evidence) -> None:
    record = _record("dynamodb", "Query", {"TableName": "t", "IndexName": "open-tasks"}, t=["TASKS_TABLE"])
    assert _needs(evidence, record) == [("dynamodb:Query", f"{TABLE}/index/open-tasks")]


def test_an_object_write_needs_the_action_on_the_object_and_listing_needs_it_on_the_bucket(
    evidence: Evidence,
) -> None:
    put = _record("s3", "PutObject", {"Bucket": "b", "Key": "results/j/t.json"}, b=["RESULTS_BUCKET"])
    listing = _record("s3", "ListObjectsV2", {"Bucket": "b"}, b=["RESULTS_BUCKET"])
    assert _needs(evidence, put) == [("s3:PutObject", f"{RESULTS}/results/j/t.json")]
    assert _needs(evidence, listing) == [("s3:ListBucket", RESULTS)]


def test_a_resource_no_variable_of_the_functions_environment_names_is_refused(evidence: Evidence) -> None:
    unnamed = _record("dynamodb", "GetItem", {"TableName": "t"}, t=[])
    foreign = _record("dynamodb", "GetItem", {"TableName": "t"}, t=["SOME_OTHER_TABLE"])
    for record in (unnamed, foreign):
        with pytest.raises(UnresolvedResource, match="GetItem"):
            _needs(evidence, record)


def test_the_dispatchers_batch_send_is_recorded_and_needs_send_message(evidence: Evidence) -> None:
    dispatcher = evidence.plan.functions()["outreach-prod-dispatcher"]
    batch_sends = [
        need
        for record in evidence.records
        if record["handler"] == dispatcher.handler_module and record["operation"] == "SendMessageBatch"
        for need in needs_of(record, dispatcher, evidence.plan)
    ]
    assert batch_sends
    assert set(batch_sends) == {Need("sqs:SendMessage", QUEUE)}
