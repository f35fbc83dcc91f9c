"""The resources the handlers expect, created on an in-process AWS (moto) the way Terraform declares them.

Tests and benchmarks both run the handlers against these: the tasks table (``tasks_table_shape``),
the scrape queue with its visibility and redrive taken from the module (``function_env``), its DLQ,
and the results bucket.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import boto3

from outreach_dev import function_env
from outreach_dev.tasks_table_shape import create_tasks_table


@dataclass(frozen=True)
class PipelineResources:
    """Names of what ``create_pipeline_resources`` made."""

    table: str
    stream_arn: str
    queue_url: str
    dlq_url: str
    bucket: str


def create_pipeline_resources(prefix: str, region: str) -> PipelineResources:
    """Create ``<prefix>-tasks``, ``<prefix>-scrape`` with ``<prefix>-scrape-dlq``, ``<prefix>-results``."""
    table = f"{prefix}-tasks"
    stream_arn = create_tasks_table(table, region)
    sqs = boto3.client("sqs", region_name=region)
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
    boto3.client("s3", region_name=region).create_bucket(
        Bucket=bucket,
        CreateBucketConfiguration={"LocationConstraint": region},  # type: ignore[typeddict-item]
    )
    return PipelineResources(table, str(stream_arn), queue_url, dlq_url, bucket)
