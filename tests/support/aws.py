"""Resources the handlers expect, created on moto the way Terraform declares them."""

from __future__ import annotations

from typing import Any, Final

import boto3

from outreach_dev import tasks_table_shape
from outreach_dev.pipeline_resources import PipelineResources, create_pipeline_resources

REGION: Final = "eu-central-1"


Resources = PipelineResources


def create_tasks_table(name: str) -> str:
    return tasks_table_shape.create_tasks_table(name, REGION)


def create_resources(prefix: str = "outreach-test") -> Resources:
    return create_pipeline_resources(prefix, REGION)


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
