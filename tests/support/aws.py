"""Resources the handlers expect, created on moto the way Terraform declares them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

import boto3

from outreach_dev import function_env, tasks_table_shape

REGION: Final = "eu-central-1"


@dataclass(frozen=True)
class Resources:
    table: str
    stream_arn: str
    queue_url: str
    dlq_url: str
    bucket: str


def create_tasks_table(name: str) -> str:
    return tasks_table_shape.create_tasks_table(name, REGION)


def create_resources(prefix: str = "outreach-test") -> Resources:
    stream_arn = create_tasks_table(f"{prefix}-tasks")
    sqs = boto3.client("sqs", region_name=REGION)
    dlq_url = sqs.create_queue(QueueName=f"{prefix}-scrape-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    queue = function_env.scrape_queue_attributes()
    queue_url = sqs.create_queue(
        QueueName=f"{prefix}-scrape",
        Attributes={
            "VisibilityTimeout": queue["VisibilityTimeout"],
            "RedrivePolicy": json.dumps(
                {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": queue["maxReceiveCount"]}
            ),
        },
    )["QueueUrl"]
    bucket = f"{prefix}-results"
    boto3.client("s3", region_name=REGION).create_bucket(
        Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REGION}
    )
    return Resources(
        table=f"{prefix}-tasks", stream_arn=stream_arn, queue_url=queue_url, dlq_url=dlq_url, bucket=bucket
    )


def receive_all(queue_url: str, *, wait: int = 0) -> list[dict[str, Any]]:
    sqs = boto3.client("sqs", region_name=REGION)
    messages: list[dict[str, Any]] = []
    while True:
        batch = sqs.receive_message(
            QueueUrl=queue_url,
            MaxNumberOfMessages=10,
            WaitTimeSeconds=wait,
            MessageAttributeNames=["All"],
            AttributeNames=["All"],
        ).get("Messages", [])
        if not batch:
            return messages
        messages.extend(dict(message) for message in batch)
