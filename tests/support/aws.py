"""Resources the handlers expect, created on moto the way Terraform declares them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import boto3

REGION: Final = "eu-central-1"


@dataclass(frozen=True)
class Resources:
    table: str
    stream_arn: str
    queue_url: str
    dlq_url: str
    bucket: str


def create_tasks_table(name: str) -> str:
    client = boto3.client("dynamodb", region_name=REGION)
    response = client.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[
            {"AttributeName": "task_id", "AttributeType": "S"},
            {"AttributeName": "open_key", "AttributeType": "S"},
            {"AttributeName": "updated_at", "AttributeType": "S"},
        ],
        KeySchema=[{"AttributeName": "task_id", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "open-tasks",
                "KeySchema": [
                    {"AttributeName": "open_key", "KeyType": "HASH"},
                    {"AttributeName": "updated_at", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )
    return str(response["TableDescription"]["LatestStreamArn"])


def create_resources(prefix: str = "outreach-test") -> Resources:
    stream_arn = create_tasks_table(f"{prefix}-tasks")
    sqs = boto3.client("sqs", region_name=REGION)
    dlq_url = sqs.create_queue(QueueName=f"{prefix}-scrape-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    queue_url = sqs.create_queue(
        QueueName=f"{prefix}-scrape",
        Attributes={
            "VisibilityTimeout": "5400",
            "RedrivePolicy": f'{{"deadLetterTargetArn": "{dlq_arn}", "maxReceiveCount": "3"}}',
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
