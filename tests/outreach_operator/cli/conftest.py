"""Running ``outreach`` with click's runner against moto, and reading AWS state around it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import boto3
import pytest
from click.testing import CliRunner, Result

from embedded_aws.dynamodb_response_items import write_dynamodb_items_directly
from embedded_aws.dynamodb_size_limits import enforce_dynamodb_size_limits
from embedded_aws.dynamodb_transactions import make_transactions_atomic
from embedded_aws.dynamodb_update_names import remember_update_expression_parses
from embedded_aws.service_quotas import support_list_service_quotas
from embedded_aws.ses_account import report_ses_account, set_ses_account
from embedded_aws.ses_v2 import support_ses_v2
from embedded_aws.sqs_message_move import support_message_move_tasks
from outreach import clients, clock, task_store
from outreach.results import store_result
from outreach.task_model import Task
from outreach_dev.contacts_table_shape import create_contacts_table
from outreach_operator.cli.app import cli
from tests.outreach_operator.cli.campaign_support import GROUP, START
from tests.support.aws import REGION, Resources

OPERATOR = "ops@example.test"
CONTACTS_TABLE = "outreach-test-contacts"

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
    """moto as the embedded AWS runs it: transactions without whole-table copies, items written out
    directly in responses, SQS message moves, ListServiceQuotas."""
    make_transactions_atomic()
    enforce_dynamodb_size_limits()
    write_dynamodb_items_directly()
    remember_update_expression_parses()
    support_message_move_tasks()
    support_list_service_quotas()


@pytest.fixture
def contacts_table(resources: Resources, monkeypatch: pytest.MonkeyPatch) -> str:
    """The contact ledger's table as modules/contact-ledger declares it, beside the moto resources."""
    monkeypatch.setenv("CONTACTS_TABLE", create_contacts_table(CONTACTS_TABLE, REGION))
    return CONTACTS_TABLE


@pytest.fixture
def run(resources: Resources, contacts_table: str) -> Run:
    """``run(*args)``: the CLI pointed at the moto resources (the contact ledger among them) by flags,
    as an operator would."""

    def invoke(*args: str, extra: list[str] | None = None) -> Result:
        runner = CliRunner()
        flags = [*target_flags(resources), "--contacts-table", contacts_table]
        return runner.invoke(cli, [*flags, *(extra or []), *args], env={"OUTREACH_OPERATOR": OPERATOR})

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


# ---- campaigns: SES, the schedule target ----------------------------------------------------------


@pytest.fixture
def ses_account() -> Iterator[None]:
    """SES's GetAccount as the embedded AWS answers it: a ready account (14/s, 50,000 a day) unless a
    test sets another with ``set_ses_account``."""
    report_ses_account()
    yield
    set_ses_account(REGION)


@pytest.fixture
def email_flags(resources: Resources, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    boto3.client("scheduler", region_name=REGION).create_schedule_group(Name=GROUP)
    dlq_url = boto3.client("sqs", region_name=REGION).create_queue(QueueName="outreach-test-email-dlq")[
        "QueueUrl"
    ]
    dlq_arn = boto3.client("sqs", region_name=REGION).get_queue_attributes(
        QueueUrl=dlq_url, AttributeNames=["QueueArn"]
    )["Attributes"]["QueueArn"]
    # The worker, run in-process by these tests, has the same target in its environment (Terraform's).
    for name, value in {
        "EMAIL_SCHEDULE_GROUP": GROUP,
        "EMAIL_WORKER_ARN": f"arn:aws:lambda:{REGION}:123456789012:function:outreach-test-email-worker",
        "EMAIL_SCHEDULER_ROLE_ARN": "arn:aws:iam::123456789012:role/outreach-test-email-scheduler",
        "EMAIL_DLQ_ARN": dlq_arn,
    }.items():
        monkeypatch.setenv(name, value)
    return [
        "--email-schedule-group", GROUP,
        "--email-worker-arn", f"arn:aws:lambda:{REGION}:123456789012:function:outreach-test-email-worker",
        "--email-scheduler-role-arn", "arn:aws:iam::123456789012:role/outreach-test-email-scheduler",
        "--email-dlq-arn", dlq_arn,
    ]  # fmt: skip


SES_CONFIGURATION_SET = "outreach-test-email"


@pytest.fixture
def ses(resources: Resources, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """SES with the example campaign's sending domain verified; the clock (``now[0]``) settable."""
    support_ses_v2()
    ses = boto3.client("sesv2", region_name=REGION)
    ses.create_email_identity(EmailIdentity="mail.acme.example")
    ses.create_configuration_set(ConfigurationSetName=SES_CONFIGURATION_SET)
    monkeypatch.setenv("EMAIL_CONFIGURATION_SET", SES_CONFIGURATION_SET)
    now = [datetime.fromisoformat(START).replace(tzinfo=ZoneInfo("Europe/Berlin")).timestamp() - 3600]
    clock.set_time_source(lambda: now[0])
    yield now
    clock.set_time_source(None)


def hook_clients(event: str, handler: Any, unique_id: str) -> None:
    """``handler`` on every client made from boto3's default session from here on."""
    if boto3.DEFAULT_SESSION is None:
        boto3.setup_default_session()
    assert boto3.DEFAULT_SESSION is not None
    boto3.DEFAULT_SESSION.events.register(event, handler, unique_id=unique_id)
    clients.reset()  # clients copy the session's hooks when they are created


def unhook_clients(event: str, unique_id: str) -> None:
    assert boto3.DEFAULT_SESSION is not None
    boto3.DEFAULT_SESSION.events.unregister(event, unique_id=unique_id)
    clients.reset()


@pytest.fixture
def calls() -> Iterator[list[str]]:
    """Every AWS call the clients make from here on, as ``service:Operation``."""
    seen: list[str] = []

    def record(model: Any, **_: Any) -> None:
        seen.append(f"{model.service_model.endpoint_prefix}:{model.name}")

    hook_clients("before-call.*.*", record, "test-recorded-calls")
    yield seen
    unhook_clients("before-call.*.*", "test-recorded-calls")
