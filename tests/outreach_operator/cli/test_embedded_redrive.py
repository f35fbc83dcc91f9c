"""SQS dead-letter redrive on the embedded AWS (moto server plus the project's message move tasks)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from click.testing import CliRunner

from embedded_aws.server import embedded_aws
from outreach_operator.cli.app import cli
from tests.support.aws import REGION


@pytest.fixture
def endpoint(aws_env: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with embedded_aws() as url:
        # the command exports the endpoint for the core's clients; the test restores it afterwards
        monkeypatch.setenv("AWS_ENDPOINT_URL", url)
        yield url


def _pair(endpoint: str) -> tuple[Any, str, str, str]:
    sqs = boto3.client("sqs", region_name=REGION, endpoint_url=endpoint)
    name = f"q-{uuid.uuid4().hex[:8]}"
    dlq_url = sqs.create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    queue_url = sqs.create_queue(
        QueueName=name,
        Attributes={"RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "3"})},
    )["QueueUrl"]
    return sqs, queue_url, dlq_url, dlq_arn


def _drain(sqs: Any, url: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    while batch := sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["All"], MessageAttributeNames=["All"]
    ).get("Messages", []):
        found.extend(batch)
    return found


def test_redrive_moves_the_dlq_back_to_its_queue_as_new_messages_with_progress(endpoint: str) -> None:
    # GIVEN 25 messages that exhausted their receives (receive count 3) and now wait in the DLQ
    sqs, queue_url, dlq_url, _ = _pair(endpoint)
    for n in range(25):
        sqs.send_message(QueueUrl=queue_url, MessageBody=json.dumps({"task_id": f"t{n}"}))
    for _ in range(3):
        for message in _drain(sqs, queue_url):
            sqs.change_message_visibility(
                QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
            )
    assert _drain(sqs, queue_url) == []  # the fourth receive moved them all to the DLQ
    sqs.purge_queue(QueueUrl=queue_url)
    assert (
        int(
            sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["All"])["Attributes"][
                "ApproximateNumberOfMessages"
            ]
        )
        == 25
    )
    # WHEN the operator redrives at 50 messages a second
    result = CliRunner().invoke(
        cli,
        ["--endpoint-url", endpoint, "--region", REGION, "--queue-url", queue_url, "--dlq-url", dlq_url,
         "--json", "dlq", "redrive", "scrape", "--rate", "50"],
    )  # fmt: skip
    # THEN the move task completed, every message is back in the queue once, as a new message
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["Status"], report["ApproximateNumberOfMessagesMoved"]) == ("COMPLETED", 25)
    back = _drain(sqs, queue_url)
    assert sorted(json.loads(m["Body"])["task_id"] for m in back) == sorted(f"t{n}" for n in range(25))
    assert {m["Attributes"]["ApproximateReceiveCount"] for m in back} == {"1"}
    assert _drain(sqs, dlq_url) == []


def test_one_move_task_per_source_and_a_cancelled_task_stops_moving(endpoint: str) -> None:
    sqs, _, dlq_url, dlq_arn = _pair(endpoint)
    for n in range(20):
        sqs.send_message(QueueUrl=dlq_url, MessageBody=f"m{n}")
    handle = sqs.start_message_move_task(SourceArn=dlq_arn, MaxNumberOfMessagesPerSecond=2)["TaskHandle"]
    with pytest.raises(ClientError, match="already a task running"):
        sqs.start_message_move_task(SourceArn=dlq_arn)
    moved = sqs.cancel_message_move_task(TaskHandle=handle)["ApproximateNumberOfMessagesMoved"]
    deadline = time.monotonic() + 30
    while (status := sqs.list_message_move_tasks(SourceArn=dlq_arn)["Results"][0])["Status"] != "CANCELLED":
        assert time.monotonic() < deadline, status
        time.sleep(0.05)
    assert moved <= status["ApproximateNumberOfMessagesMoved"] < 20
    assert "TaskHandle" not in status
    with pytest.raises(ClientError, match="must be configured as a Dead Letter Queue"):
        sqs.start_message_move_task(SourceArn=status["DestinationArn"])


def test_a_redriven_message_keeps_its_job_as_its_message_group(endpoint: str) -> None:
    # GIVEN a scrape message of job big that exhausted its receives and waits in the DLQ
    sqs, queue_url, dlq_url, _ = _pair(endpoint)
    sqs.send_message(QueueUrl=queue_url, MessageBody=json.dumps({"task_id": "t1"}), MessageGroupId="big")
    for _ in range(3):
        for message in _drain(sqs, queue_url):
            sqs.change_message_visibility(
                QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
            )
    assert _drain(sqs, queue_url) == []
    # WHEN the operator redrives it
    result = CliRunner().invoke(
        cli,
        ["--endpoint-url", endpoint, "--region", REGION, "--queue-url", queue_url, "--dlq-url", dlq_url,
         "--json", "dlq", "redrive", "scrape"],
    )  # fmt: skip
    # THEN it is back in the queue with its group, still its job's tenant in SQS fair queues
    assert result.exit_code == 0, result.output
    (back,) = _drain(sqs, queue_url)
    assert back["Attributes"].get("MessageGroupId") == "big"
