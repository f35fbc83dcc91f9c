"""Actions Lambda itself performs with a function's execution role, implied by the planned wiring.

None of these is an API call in the handler's code, so no recording shows them; each rule below
reads the fact it depends on from the plan (a mapping, a destination, the log group, tracing):

- An SQS event source mapping polls with the role: ``sqs:ReceiveMessage``, ``sqs:DeleteMessage``,
  ``sqs:GetQueueAttributes`` on the queue
  (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html).
- A DynamoDB stream mapping reads with the role: ``dynamodb:DescribeStream``,
  ``dynamodb:GetRecords``, ``dynamodb:GetShardIterator``, ``dynamodb:ListStreams`` on the stream
  (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/iam-policy-example-lamda-process-dynamodb-streams.html).
- A mapping's on-failure destination, and an asynchronous invocation's, is written with the role:
  ``sqs:SendMessage``, ``sns:Publish``, or ``s3:PutObject`` on the objects and ``s3:ListBucket`` on
  the bucket (https://docs.aws.amazon.com/lambda/latest/dg/services-dynamodb-errors.html,
  https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html).
- Logs go to the function's own log group, which Terraform creates, so only
  ``logs:CreateLogStream`` and ``logs:PutLogEvents`` on its streams
  (https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs.html).
- Active tracing sends segments with the role: ``xray:PutTraceSegments``,
  ``xray:PutTelemetryRecords`` (https://docs.aws.amazon.com/lambda/latest/dg/services-xray.html);
  neither has a resource type, so "*" (https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsx-ray.html).

KMS: no key action is implied while every resource a function touches is encrypted with an AWS
owned or AWS managed key (SSE-SQS, SSE-S3, DynamoDB's default); ``customer_managed_keys`` lists any
that is not, and the tests require that list to be empty.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from tests.iam.needs import Need
from tests.iam.planned_roles import Plan, PlannedFunction

EVENT_SOURCE_ACTIONS: Mapping[str, tuple[str, ...]] = {
    "sqs": ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"),
    "dynamodb": (
        "dynamodb:DescribeStream",
        "dynamodb:GetRecords",
        "dynamodb:GetShardIterator",
        "dynamodb:ListStreams",
    ),
}

DESTINATION_ACTIONS: Mapping[str, tuple[str, ...]] = {
    "sqs": ("sqs:SendMessage",),
    "sns": ("sns:Publish",),
    "s3": ("s3:PutObject", "s3:ListBucket"),
}

LOG_ACTIONS = ("logs:CreateLogStream", "logs:PutLogEvents")
TRACE_ACTIONS = ("xray:PutTraceSegments", "xray:PutTelemetryRecords")
# Actions the Service Authorization Reference lists with no resource type: "*" is their only resource.
# X-Ray's (above), and SES v2's GetSuppressedDestination, a lookup in the account's suppression list, and
# GetAccount, the account's sending quota, whose request names no resource (its listing there without a
# resource type is unconfirmed)
# (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonsimpleemailservicev2.html).
NO_RESOURCE_TYPE_ACTIONS = frozenset({*TRACE_ACTIONS, "ses:GetSuppressedDestination", "ses:GetAccount"})


def _service(arn: str) -> str:
    return arn.split(":")[2]


def _destination_needs(arn: str, reason: str) -> Iterator[Need]:
    for action in DESTINATION_ACTIONS[_service(arn)]:
        if action == "s3:PutObject":
            yield Need(action, f"{arn}/*", f"{reason} under a key Lambda chooses")
        else:
            yield Need(action, arn, reason)


def _on_failure(config: Any, key: str) -> Iterator[str]:
    for destination in config or []:
        for on_failure in destination.get("on_failure") or []:
            if on_failure.get(key):
                yield on_failure[key]


def platform_needs(function: PlannedFunction, plan: Plan) -> Iterator[Need]:
    """What Lambda does with the role of ``function``, from the mappings and settings planned for it."""
    for address, mapping in plan.of_type("aws_lambda_event_source_mapping"):
        if mapping.get("function_name") not in (function.arn, function.name):
            continue
        source = mapping["event_source_arn"]
        for action in EVENT_SOURCE_ACTIONS[_service(source)]:
            yield Need(action, source, f"{address} polls {_service(source)}")
        for arn in _on_failure(mapping.get("destination_config"), "destination_arn"):
            yield from _destination_needs(arn, f"{address} writes failed batches")
    for address, config in plan.of_type("aws_lambda_function_event_invoke_config"):
        if config.get("function_name") in (function.arn, function.name):
            for arn in _on_failure(config.get("destination_config"), "destination"):
                yield from _destination_needs(arn, f"{address} sends spent asynchronous events")
    log_group = plan.log_group_arn(f"/aws/lambda/{function.name}")
    for action in LOG_ACTIONS:
        yield Need(
            action, f"{log_group}:log-stream:(stream named by Lambda)", "Lambda writes the function's logs"
        )
    if function.tracing_mode == "Active":
        for action in TRACE_ACTIONS:
            yield Need(action, "*", "active tracing")


def customer_managed_keys(plan: Plan) -> list[str]:
    """Planned tables, queues and buckets encrypted with a customer managed KMS key.

    A table's ``kms_key_arn`` is also computed when none is configured (AWS reports its managed key);
    the mocked provider fills that in with a random string, while a configured key is a key ARN.
    """
    found = [
        address
        for address, table in plan.of_type("aws_dynamodb_table")
        for sse in table.get("server_side_encryption") or []
        if str(sse.get("kms_key_arn") or "").startswith("arn:")
    ]
    found += [address for address, queue in plan.of_type("aws_sqs_queue") if queue.get("kms_master_key_id")]
    found += [
        address
        for address, config in plan.of_type("aws_s3_bucket_server_side_encryption_configuration")
        for rule in config.get("rule") or []
        for default in rule.get("apply_server_side_encryption_by_default") or []
        if default.get("sse_algorithm") != "AES256"
    ]
    return found
