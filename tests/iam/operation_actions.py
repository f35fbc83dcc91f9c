"""The IAM actions, on planned resource ARNs, that one recorded AWS operation of a handler needs.

An operation needs ``<prefix>:<operation>``, the prefix being the service's signing name in
botocore's service model (the action prefix of the Service Authorization Reference), except where
the reference or the service's guide says otherwise:

- DynamoDB ``TransactWriteItems``/``TransactGetItems`` are authorized item by item: ``Put``,
  ``Update``, ``Delete`` and ``Get`` by ``PutItem``, ``UpdateItem``, ``DeleteItem`` and ``GetItem``,
  ``ConditionCheck`` by ``ConditionCheckItem``
  (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html).
- SQS batch operations are authorized by their single-message action
  (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-api-permissions-reference.html).
- S3 ``ListObjectsV2``/``HeadBucket`` by ``s3:ListBucket``, ``HeadObject`` by ``s3:GetObject``
  (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazons3.html).
- SES v2 ``SendEmail`` is authorized on the sending identity and, when the request names one, on
  the configuration set (resource types ``identity`` and ``configuration-set``); the identity is the
  planned one that covers the sender address (``Plan.identity_arn``). ``GetSuppressedDestination``
  reads the account's suppression list and has no resource type, so its only resource is ``*``
  (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonsimpleemailservicev2.html;
  ``platform_actions.NO_RESOURCE_TYPE_ACTIONS`` lists it). ``PutConfigurationSetSendingOptions`` is
  authorized on the configuration set it names (resource type ``configuration-set``).
- KMS ``GenerateMac`` and ``VerifyMac`` are authorized on the key (resource type ``key``), which the
  request names by ``KeyId``, its ARN or id
  (https://docs.aws.amazon.com/service-authorization/latest/reference/list_awskeymanagementservice.html).
- EventBridge Scheduler's ``CreateSchedule``, ``GetSchedule`` and ``DeleteSchedule`` are authorized
  on the schedule, ``schedule/<group>/<name>``; ``CreateSchedule`` also needs ``iam:PassRole`` on the
  role its target is given (``Target.RoleArn``), its dependent action
  (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazoneventbridgescheduler.html,
  https://docs.aws.amazon.com/scheduler/latest/UserGuide/setting-up.html#setting-up-execution-role).

Resources are named in the recording by the test run's values (``outreach-test-tasks``); a handler
finds them only through its environment, so each is translated through the environment variable that
held it to the value the planned function gets for that variable, and then to that resource's
planned ARN. A query on an index needs the action on the index ARN
(https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazondynamodb.html).

Each need carries the request context its conditions are evaluated with:

- ``dynamodb:LeadingKeys``: the partition key values (of the planned table's ``hash_key``) the request
  names: a single item's key, each transaction item's own (a transaction item is authorized as its
  underlying operation: transaction-apis-iam.html above), a BatchGetItem's keys of one table
  together, a table Query's partition key value. The developer guide defines the key as the table's
  partition key and says nothing of what DynamoDB puts in it for a Query on a global secondary index
  (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html), so an
  index Query carries none and its statement is left unconditioned.
- ``ses:FromAddress``: the address of ``FromEmailAddress`` (without a display name, which is
  ``ses:FromDisplayName``), as sent: SES matches it case-sensitively
  (https://docs.aws.amazon.com/ses/latest/dg/control-user-access.html,
  https://docs.aws.amazon.com/ses/latest/dg/sending-authorization-policy-examples.html).
- ``iam:PassedToService``: the service principal a role is passed to, ``scheduler.amazonaws.com`` for
  the role ``CreateSchedule`` gives its target
  (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_iam-condition-keys.html#ck_PassedToService).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from email.utils import parseaddr
from typing import Any

from tests.iam.needs import Context, Need, context_of
from tests.iam.planned_roles import Plan, PlannedFunction
from tests.iam.platform_actions import NO_RESOURCE_TYPE_ACTIONS

TRANSACT_ITEM_ACTIONS: Mapping[str, str] = {
    "Put": "dynamodb:PutItem",
    "Update": "dynamodb:UpdateItem",
    "Delete": "dynamodb:DeleteItem",
    "ConditionCheck": "dynamodb:ConditionCheckItem",
    "Get": "dynamodb:GetItem",
}

RENAMED_ACTIONS: Mapping[tuple[str, str], str] = {
    ("sqs", "SendMessageBatch"): "sqs:SendMessage",
    ("sqs", "DeleteMessageBatch"): "sqs:DeleteMessage",
    ("sqs", "ChangeMessageVisibilityBatch"): "sqs:ChangeMessageVisibility",
    ("s3", "ListObjectsV2"): "s3:ListBucket",
    ("s3", "HeadBucket"): "s3:ListBucket",
    ("s3", "HeadObject"): "s3:GetObject",
}


LEADING_KEYS = "dynamodb:LeadingKeys"
FROM_ADDRESS = "ses:FromAddress"
PASSED_TO_SERVICE = "iam:PassedToService"
SCHEDULER_PRINCIPAL = "scheduler.amazonaws.com"


class UnresolvedResource(LookupError):
    """A recorded operation names a resource the planned function is not wired to."""


def _planned_value(record: Mapping[str, Any], name: str, function: PlannedFunction) -> str:
    variables = [v for v in record["environment"].get(name, []) if v in function.environment]
    values = {function.environment[v] for v in variables}
    if len(values) != 1:
        raise UnresolvedResource(
            f"{record['handler']} calls {record['operation']} on {name!r}, which no variable of "
            f"{function.name}'s environment names (held by {record['environment'].get(name, [])})"
        )
    return values.pop()


def _leading_keys(
    record: Mapping[str, Any], item: Mapping[str, Any], function: PlannedFunction, plan: Plan
) -> Context:
    """The ``dynamodb:LeadingKeys`` of one recorded item entry; none for a Query on an index."""
    if "index" in item:
        return ()
    attribute = plan.table_partition_key(_planned_value(record, item["table"], function))
    values = [str(keys[attribute]) for keys in item["keys"] if attribute in keys]
    return context_of({LEADING_KEYS: values}) if values else ()


def _dynamodb_needs(
    record: Mapping[str, Any], function: PlannedFunction, plan: Plan, action: str, reason: str
) -> Iterator[Need]:
    """One need per recorded item entry: a transaction's items each as their own action."""
    for item in record["items"]:
        arn = plan.table_arn(_planned_value(record, item["table"], function))
        if "index" in item:
            arn = f"{arn}/index/{item['index']}"
        kind = item["kind"]
        item_action = TRANSACT_ITEM_ACTIONS.get(kind, action)
        item_reason = f"{reason} ({kind})" if kind in TRANSACT_ITEM_ACTIONS else reason
        yield Need(item_action, arn, item_reason, _leading_keys(record, item, function, plan))


def needs_of(record: Mapping[str, Any], function: PlannedFunction, plan: Plan) -> Iterator[Need]:
    """What the role of ``function`` must allow for one recorded operation of its handler."""
    prefix, operation = record["signing_name"], record["operation"]
    resources = record["resources"]
    reason = f"{record['handler']} calls {operation}"

    def table(name: str) -> str:
        return plan.table_arn(_planned_value(record, name, function))

    action = RENAMED_ACTIONS.get((prefix, operation), f"{prefix}:{operation}")
    if prefix == "dynamodb" and record.get("items"):
        yield from _dynamodb_needs(record, function, plan, action, reason)
        return
    if "TransactItems" in resources:
        for kind, name in resources["TransactItems"]:
            yield Need(TRANSACT_ITEM_ACTIONS[kind], table(name), f"{reason} ({kind})")
        return
    if action in NO_RESOURCE_TYPE_ACTIONS:
        yield Need(action, "*", f"{reason}; {action} has no resource type")
    elif "RequestItems" in resources:
        for name in resources["RequestItems"]:
            yield Need(action, table(name), reason)
    elif "TableName" in resources:
        arn = table(resources["TableName"])
        if "IndexName" in resources:
            arn = f"{arn}/index/{resources['IndexName']}"
        yield Need(action, arn, reason)
    elif "QueueUrl" in resources:
        yield Need(action, plan.queue_arn(_planned_value(record, resources["QueueUrl"], function)), reason)
    elif "Bucket" in resources:
        arn = plan.bucket_arn(_planned_value(record, resources["Bucket"], function))
        yield Need(action, f"{arn}/{resources['Key']}" if "Key" in resources else arn, reason)
    elif "GroupName" in resources and "Name" in resources:
        group = _planned_value(record, resources["GroupName"], function)
        yield Need(action, plan.schedule_arn(group, resources["Name"]), reason)
        if "RoleArn" in resources:
            role = plan.role_arn(_planned_value(record, resources["RoleArn"], function))
            passed = context_of({PASSED_TO_SERVICE: [SCHEDULER_PRINCIPAL]})
            yield Need("iam:PassRole", role, f"{reason}, which passes the schedule's role", passed)
    elif "KeyId" in resources:
        yield Need(action, plan.kms_key_arn(_planned_value(record, resources["KeyId"], function)), reason)
    elif "FromEmailAddress" in resources:
        sender = context_of({FROM_ADDRESS: [parseaddr(resources["FromEmailAddress"])[1]]})
        try:
            identity = plan.identity_arn(resources["FromEmailAddress"])
        except LookupError as exc:
            raise UnresolvedResource(f"{reason}: {exc}") from exc
        yield Need(action, identity, f"{reason} (identity)", sender)
        if "ConfigurationSetName" in resources:
            name = _planned_value(record, resources["ConfigurationSetName"], function)
            yield Need(action, plan.configuration_set_arn(name), f"{reason} (configuration set)", sender)
    elif "ConfigurationSetName" in resources:
        name = _planned_value(record, resources["ConfigurationSetName"], function)
        yield Need(action, plan.configuration_set_arn(name), reason)
    else:
        raise UnresolvedResource(f"{reason} with no resource this mapping knows: {resources}")
