"""Recorded operations become IAM actions on planned ARNs: the mappings that are not one to one."""

from __future__ import annotations

from typing import Any

import pytest

from tests.iam.conftest import EVIDENCE_TIMEOUT, Evidence
from tests.iam.needs import Need
from tests.iam.operation_actions import UnresolvedResource, needs_of
from tests.support.aws_operation_recorder import _item_keys

pytestmark = pytest.mark.timeout(EVIDENCE_TIMEOUT)

TABLE = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-prod-tasks"
QUEUE = "arn:aws:sqs:eu-central-1:111122223333:outreach-prod-scrape"
RESULTS = "arn:aws:s3:::outreach-prod-results-111122223333-eu-central-1"
SCRAPER = "outreach-prod-scraper"
WORKER = "outreach-prod-email-worker"
EMAIL_RECONCILER = "outreach-prod-email-reconciler"
GUARD = "outreach-prod-sending-guard"
IDENTITY = "arn:aws:ses:eu-central-1:111122223333:identity/example.com"
CONFIGURATION_SET = "arn:aws:ses:eu-central-1:111122223333:configuration-set/outreach-prod-email"
SCHEDULES = "arn:aws:scheduler:eu-central-1:111122223333:schedule/outreach-prod-email"
SCHEDULER_ROLE = "arn:aws:iam::111122223333:role/outreach-prod-email-scheduler"
UNSUBSCRIBE = "outreach-prod-unsubscribe"
UNSUBSCRIBE_KEY = "arn:aws:kms:eu-central-1:111122223333:key/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"


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


def _needs(evidence: Evidence, record: dict[str, Any], function_name: str = SCRAPER) -> list[tuple[str, str]]:
    function = evidence.plan.functions()[function_name]
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


def test_a_mac_verification_needs_verify_mac_on_the_key_its_key_id_names(evidence: Evidence) -> None:
    verify = _record("kms", "VerifyMac", {"KeyId": "k"}, k=["UNSUBSCRIBE_KEY_ID"])
    assert _needs(evidence, verify, UNSUBSCRIBE) == [("kms:VerifyMac", UNSUBSCRIBE_KEY)]
    # The planned key is found by its id as well as by its ARN (KMS takes either as KeyId).
    assert evidence.plan.kms_key_arn("0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0") == UNSUBSCRIBE_KEY
    with pytest.raises(LookupError, match="aws_kms_key"):
        evidence.plan.kms_key_arn("alias/somebody-elses")


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


def test_a_send_needs_send_email_on_the_identity_covering_the_sender_and_on_the_configuration_set(
    evidence: Evidence,
) -> None:
    for sender in ("sales@example.com", "Sales <sales@example.com>", "news@mail.example.com"):
        record = _record(
            "ses",
            "SendEmail",
            {"FromEmailAddress": sender, "ConfigurationSetName": "c"},
            c=["EMAIL_CONFIGURATION_SET"],
        )
        assert _needs(evidence, record, WORKER) == [
            ("ses:SendEmail", CONFIGURATION_SET),
            ("ses:SendEmail", IDENTITY),
        ], sender


def test_a_send_from_an_address_no_planned_identity_covers_is_refused(evidence: Evidence) -> None:
    for sender in ("sales@example.org", "sales@notexample.com"):
        record = _record("ses", "SendEmail", {"FromEmailAddress": sender})
        with pytest.raises(UnresolvedResource, match="SendEmail"):
            _needs(evidence, record, WORKER)


def test_a_suppression_list_lookup_needs_its_action_on_star_having_no_resource_type(
    evidence: Evidence,
) -> None:
    record = _record("ses", "GetSuppressedDestination", {})
    assert _needs(evidence, record, WORKER) == [("ses:GetSuppressedDestination", "*")]


def test_pausing_a_configuration_set_needs_the_action_on_that_configuration_set(evidence: Evidence) -> None:
    record = _record(
        "ses",
        "PutConfigurationSetSendingOptions",
        {"ConfigurationSetName": "c"},
        c=["EMAIL_CONFIGURATION_SET"],
    )
    assert _needs(evidence, record, GUARD) == [("ses:PutConfigurationSetSendingOptions", CONFIGURATION_SET)]


def test_creating_a_schedule_needs_the_action_on_the_schedule_and_pass_role_on_its_role(
    evidence: Evidence,
) -> None:
    record = _record(
        "scheduler",
        "CreateSchedule",
        {"GroupName": "g", "Name": "email-1", "RoleArn": "r"},
        g=["EMAIL_SCHEDULE_GROUP"],
        r=["EMAIL_SCHEDULER_ROLE_ARN"],
    )
    assert _needs(evidence, record, EMAIL_RECONCILER) == [
        ("iam:PassRole", SCHEDULER_ROLE),
        ("scheduler:CreateSchedule", f"{SCHEDULES}/email-1"),
    ]


@pytest.mark.parametrize("operation", ["GetSchedule", "DeleteSchedule"])
def test_reading_or_deleting_a_schedule_needs_the_action_on_the_schedule_only(
    evidence: Evidence, operation: str
) -> None:
    record = _record(
        "scheduler", operation, {"GroupName": "g", "Name": "email-1"}, g=["EMAIL_SCHEDULE_GROUP"]
    )
    assert _needs(evidence, record, EMAIL_RECONCILER) == [(f"scheduler:{operation}", f"{SCHEDULES}/email-1")]


def test_a_schedule_in_a_group_no_variable_of_the_functions_environment_names_is_refused(
    evidence: Evidence,
) -> None:
    record = _record(
        "scheduler", "GetSchedule", {"GroupName": "g", "Name": "email-1"}, g=["EMAIL_CONFIGURATION_SET"]
    )
    with pytest.raises(UnresolvedResource, match="GetSchedule"):
        _needs(evidence, record, EMAIL_RECONCILER)


def test_the_email_functions_recorded_calls_reach_ses_and_scheduler(evidence: Evidence) -> None:
    recorded = {
        (r["handler"], r["operation"]) for r in evidence.records if r["signing_name"] in ("ses", "scheduler")
    }
    assert recorded == {
        ("outreach.email_worker", "GetSuppressedDestination"),
        ("outreach.email_worker", "SendEmail"),
        # While the sending identity warms up, the account's 24-hour quota is the ramp's ceiling.
        ("outreach.email_worker", "GetAccount"),
        # A deferred first contact's schedule, and its follow-ups', are moved.
        ("outreach.email_worker", "CreateSchedule"),
        ("outreach.email_worker", "DeleteSchedule"),
        ("outreach.email_worker", "GetSchedule"),
        # Forwards are SES v2 SendEmail with Raw content (no SendRawEmail); an out-of-office moves the
        # next step's schedule (GetSchedule, DeleteSchedule, CreateSchedule), a reply or a stop
        # deletes the open follow-ups' schedules.
        ("outreach.inbound_processor", "CreateSchedule"),
        ("outreach.inbound_processor", "DeleteSchedule"),
        ("outreach.inbound_processor", "GetSchedule"),
        ("outreach.inbound_processor", "SendEmail"),
        ("outreach.reconcilers.email", "CreateSchedule"),
        ("outreach.reconcilers.email", "DeleteSchedule"),
        ("outreach.reconcilers.email", "GetSchedule"),
        ("outreach.ses_event_consumer", "DeleteSchedule"),
        # The reputation guard pauses the configuration set.
        ("outreach.sending_guard", "PutConfigurationSetSendingOptions"),
    }


def test_the_unsubscribe_endpoints_recorded_calls_reach_its_key_and_queue(evidence: Evidence) -> None:
    recorded = {
        (r["operation"], next(iter(r["environment"].values()), ["-"])[0])
        for r in evidence.records
        if r["handler"] == "outreach.unsubscribe.endpoint" and r["signing_name"] in ("kms", "sqs")
    }
    assert recorded == {("VerifyMac", "UNSUBSCRIBE_KEY_ID"), ("SendMessage", "CONTACT_EVENTS_QUEUE_URL")}


def test_the_recorder_names_the_key_of_each_item_a_dynamodb_request_names() -> None:
    transaction = {
        "TransactItems": [
            {"Update": {"TableName": "t", "Key": {"task_id": {"S": "scrape#j#h"}}}},
            {"Update": {"TableName": "t", "Key": {"task_id": {"S": "job#j#3"}}}},
            {"Put": {"TableName": "t", "Item": {"task_id": {"S": "scrape#j#i"}, "attempts": {"N": "0"}}}},
        ]
    }
    assert _item_keys("TransactWriteItems", transaction) == [
        {"kind": "Update", "table": "t", "keys": [{"task_id": "scrape#j#h"}]},
        {"kind": "Update", "table": "t", "keys": [{"task_id": "job#j#3"}]},
        {"kind": "Put", "table": "t", "keys": [{"task_id": "scrape#j#i", "attempts": "0"}]},
    ]
    batch = {"RequestItems": {"t": {"Keys": [{"task_id": {"S": "job#j#0"}}, {"task_id": {"S": "job#j#1"}}]}}}
    assert _item_keys("BatchGetItem", batch) == [
        {"kind": "BatchGetItem", "table": "t", "keys": [{"task_id": "job#j#0"}, {"task_id": "job#j#1"}]}
    ]
    query = {
        "TableName": "t",
        "IndexName": "open-tasks",
        "KeyConditionExpression": "#k = :key AND updated_at BETWEEN :start AND :end",
        "ExpressionAttributeNames": {"#k": "open_key"},
        "ExpressionAttributeValues": {
            ":key": {"S": "email#Pending"},
            ":start": {"S": "a"},
            ":end": {"S": "b"},
        },
    }
    assert _item_keys("Query", query) == [
        {"kind": "Query", "table": "t", "keys": [{"open_key": "email#Pending"}], "index": "open-tasks"}
    ]


def _keyed_record(operation: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    record = _record("dynamodb", operation, {"TableName": "t"}, t=["TASKS_TABLE"])
    record["items"] = items
    return record


def _keyed_needs(evidence: Evidence, record: dict[str, Any]) -> list[tuple[str, str, dict[str, list[str]]]]:
    function = evidence.plan.functions()[SCRAPER]
    needs = sorted(needs_of(record, function, evidence.plan))
    return [(n.action, n.resource, n.request_context) for n in needs]


def test_each_transaction_item_needs_its_action_with_its_own_leading_key(evidence: Evidence) -> None:
    record = _keyed_record(
        "TransactWriteItems",
        [
            {"kind": "Update", "table": "t", "keys": [{"task_id": "scrape#j#h"}]},
            {"kind": "Update", "table": "t", "keys": [{"task_id": "job#j#3"}]},
            {"kind": "ConditionCheck", "table": "t", "keys": [{"task_id": "scrape#j#i"}]},
        ],
    )
    assert _keyed_needs(evidence, record) == [
        ("dynamodb:ConditionCheckItem", TABLE, {"dynamodb:LeadingKeys": ["scrape#j#i"]}),
        ("dynamodb:UpdateItem", TABLE, {"dynamodb:LeadingKeys": ["job#j#3"]}),
        ("dynamodb:UpdateItem", TABLE, {"dynamodb:LeadingKeys": ["scrape#j#h"]}),
    ]


def test_a_batch_get_needs_all_its_keys_of_one_table_in_one_request(evidence: Evidence) -> None:
    record = _keyed_record(
        "BatchGetItem",
        [{"kind": "BatchGetItem", "table": "t", "keys": [{"task_id": "job#j#1"}, {"task_id": "job#j#0"}]}],
    )
    assert _keyed_needs(evidence, record) == [
        ("dynamodb:BatchGetItem", TABLE, {"dynamodb:LeadingKeys": ["job#j#0", "job#j#1"]})
    ]


def test_only_the_tables_partition_key_is_a_leading_key_and_an_index_query_has_none(
    evidence: Evidence,
) -> None:
    on_index = _keyed_record(
        "Query",
        [{"kind": "Query", "table": "t", "index": "open-tasks", "keys": [{"open_key": "scrape#Pending"}]}],
    )
    on_table = _keyed_record("Query", [{"kind": "Query", "table": "t", "keys": [{"task_id": "scrape#j#h"}]}])
    no_partition_key = _keyed_record(
        "GetItem", [{"kind": "GetItem", "table": "t", "keys": [{"job_id": "j"}]}]
    )
    assert _keyed_needs(evidence, on_index) == [("dynamodb:Query", f"{TABLE}/index/open-tasks", {})]
    assert _keyed_needs(evidence, on_table) == [
        ("dynamodb:Query", TABLE, {"dynamodb:LeadingKeys": ["scrape#j#h"]})
    ]
    assert _keyed_needs(evidence, no_partition_key) == [("dynamodb:GetItem", TABLE, {})]


def test_a_send_carries_the_senders_address_and_a_pass_role_the_service(evidence: Evidence) -> None:
    worker = evidence.plan.functions()[WORKER]
    send = _record("ses", "SendEmail", {"FromEmailAddress": "Sales <sales@example.com>"})
    assert {tuple(n.context) for n in needs_of(send, worker, evidence.plan)} == {
        (("ses:FromAddress", ("sales@example.com",)),)
    }
    reconciler = evidence.plan.functions()[EMAIL_RECONCILER]
    create = _record(
        "scheduler",
        "CreateSchedule",
        {"GroupName": "g", "Name": "email-1", "RoleArn": "r"},
        g=["EMAIL_SCHEDULE_GROUP"],
        r=["EMAIL_SCHEDULER_ROLE_ARN"],
    )
    contexts = {n.action: n.request_context for n in needs_of(create, reconciler, evidence.plan)}
    assert contexts == {
        "iam:PassRole": {"iam:PassedToService": ["scheduler.amazonaws.com"]},
        "scheduler:CreateSchedule": {},
    }
