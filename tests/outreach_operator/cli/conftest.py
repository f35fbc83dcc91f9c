"""Running ``outreach`` with click's runner against moto, and reading AWS state around it."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import boto3
import pytest
from click.testing import CliRunner, Result

from embedded_aws.dynamodb_size_limits import enforce_dynamodb_size_limits
from embedded_aws.dynamodb_transactions import make_transactions_atomic
from embedded_aws.sqs_message_move import support_message_move_tasks
from outreach import task_store
from outreach.results import store_result
from outreach.task_model import Task
from outreach_operator.cli.app import cli
from tests.support.aws import REGION, Resources

OPERATOR = "ops@example.test"

Run = Callable[..., Result]


def target_flags(resources: Resources) -> list[str]:
    return [
        "--table", resources.table,
        "--queue-url", resources.queue_url,
        "--dlq-url", resources.dlq_url,
        "--results-bucket", resources.bucket,
        "--region", REGION,
    ]  # fmt: skip


@pytest.fixture(autouse=True, scope="session")
def embedded_aws_behaviour() -> None:
    """moto as the embedded AWS runs it: transactions without whole-table copies, SQS message moves."""
    make_transactions_atomic()
    enforce_dynamodb_size_limits()
    support_message_move_tasks()


@pytest.fixture
def run(resources: Resources) -> Run:
    """``run(*args)``: the CLI pointed at the moto resources by flags, as an operator would."""

    def invoke(*args: str, extra: list[str] | None = None) -> Result:
        runner = CliRunner()
        return runner.invoke(
            cli, [*target_flags(resources), *(extra or []), *args], env={"OUTREACH_OPERATOR": OPERATOR}
        )

    return invoke


def as_json(result: Result) -> Any:
    assert result.exit_code == 0, (result.exit_code, result.output, result.stderr)
    return json.loads(result.stdout)


def aws_state(
    resources: Resources, *, queues: Sequence[str] = (), buckets: Sequence[str] = ()
) -> dict[str, Any]:
    """Everything a command could change: every table item, queue depths, objects with their tags."""
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    items: list[Any] = []
    request: dict[str, Any] = {"TableName": resources.table, "ConsistentRead": True}
    while True:
        page = dynamodb.scan(**request)
        items.extend(page["Items"])
        if "LastEvaluatedKey" not in page:
            break
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    sqs = boto3.client("sqs", region_name=REGION)
    depths = {
        url: sqs.get_queue_attributes(
            QueueUrl=url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        for url in [resources.queue_url, resources.dlq_url, *queues]
    }
    s3 = boto3.client("s3", region_name=REGION)
    objects: dict[str, Any] = {}
    for bucket in [resources.bucket, *buckets]:
        for obj in s3.list_objects_v2(Bucket=bucket).get("Contents", []):
            tags = s3.get_object_tagging(Bucket=bucket, Key=obj["Key"])["TagSet"]
            objects[f"{bucket}/{obj['Key']}"] = (obj["ETag"], tags)
    return {
        "items": sorted(json.dumps(i, sort_keys=True) for i in items),
        "queues": depths,
        "objects": objects,
    }


def finish_task(task_id: str, *, title: str = "Acme") -> None:
    task = task_store.get_task(task_id)
    assert task is not None
    claimed = task_store.claim(task, message_id="m-1", receive_count=1, lease_seconds=300)
    document = {
        "final_url": task.url,
        "title": title,
        "emails": [{"address": "info@acme.example", "page": task.url, "decoded": "mailto"}],
        "phones": [
            {"e164": "+4930583920", "kind": "phone", "as_found": "030 583920", "page": task.url},
            {"e164": "+4930583929", "kind": "fax", "as_found": "030 583929", "page": task.url},
        ],
        "text": "hello",
        "pages": [],
    }
    key = store_result(task.job_id, task.task_id, document)
    task_store.finish(claimed, result_key=key, summary={"title": title})


def fail_task(task_id: str, reason: str) -> None:
    task = task_store.get_task(task_id)
    assert task is not None
    claimed = task_store.claim(task, message_id="m-1", receive_count=1, lease_seconds=300)
    task_store.fail(claimed, reason=reason)


def claim_task(task_id: str, *, lease_seconds: int = 300) -> Task:
    task = task_store.get_task(task_id)
    assert task is not None
    return task_store.claim(task, message_id="m-1", receive_count=1, lease_seconds=lease_seconds)
