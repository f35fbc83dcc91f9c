"""The in-process AWS the benchmarks run on: moto with the tasks table, queues and bucket Terraform declares.

The handlers read their resources from the environment Terraform sets; :func:`sandbox` sets the same
variables (and restores them on exit), resets the handlers' cached clients and, when asked, puts the
task store on a clock the benchmark moves by hand.
"""

from __future__ import annotations

import contextlib
import copy
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import boto3
from moto import mock_aws
from moto.dynamodb.models import dynamodb_backends

from embedded_aws.dynamodb_condition_parses import remember_condition_parses
from embedded_aws.dynamodb_indexed_query import query_one_partition
from embedded_aws.dynamodb_query_projection import project_top_level_names_directly
from embedded_aws.dynamodb_response_items import write_dynamodb_items_directly
from embedded_aws.dynamodb_size_limits import enforce_dynamodb_size_limits
from embedded_aws.dynamodb_stream_images import write_stream_images_when_read
from embedded_aws.dynamodb_transactions import make_transactions_atomic
from embedded_aws.dynamodb_update_names import remember_update_expression_parses
from embedded_aws.sqs_queue_scans import scan_queues_with_one_clock_read
from outreach import clients, clock
from outreach_dev import function_env
from outreach_dev.bench import call_counter
from outreach_dev.pipeline_resources import create_pipeline_resources

REGION: Final = "eu-central-1"
ACCOUNT: Final = "123456789012"
_ENV: Final = {
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "POWERTOOLS_SERVICE_NAME": "outreach-bench",
    "POWERTOOLS_METRICS_NAMESPACE": "OutreachBench",
    "POWERTOOLS_TRACE_DISABLED": "1",
    "POWERTOOLS_LOG_LEVEL": "WARNING",
}
_UNSET: Final = ("AWS_ENDPOINT_URL", "AWS_PROFILE")


@dataclass
class Sandbox:
    """Names of the created resources, and the hand-moved clock (seconds since the epoch)."""

    table: str
    stream_arn: str
    queue_url: str
    dlq_url: str
    bucket: str
    now: list[float] = field(default_factory=lambda: [1_800_000_000.0])

    def advance(self, seconds: float) -> None:
        self.now[0] += seconds

    def stream_records(self) -> list[dict[str, Any]]:
        """Every record the table's stream holds, oldest first, as Lambda's event source hands them over.

        Read from moto's backend (its in-process DynamoDB Streams API answers ``DescribeStream`` with
        "not yet implemented"); the records are those ``GetRecords`` would return.
        """
        table = dynamodb_backends[ACCOUNT][REGION].get_table(self.table)
        shard = table.stream_shard
        if shard is None:
            raise RuntimeError(f"table {self.table} has no stream")
        return [_as_event_record(record.to_json()) for record in shard.items]

    def receive_sqs_event(self, *, max_messages: int = 1) -> dict[str, Any]:
        """Receive from the scrape queue and shape the messages as the SQS event source mapping does."""
        messages = (
            boto3.client("sqs", region_name=REGION)
            .receive_message(
                QueueUrl=self.queue_url, MaxNumberOfMessages=max_messages, AttributeNames=["All"]
            )
            .get("Messages", [])
        )
        arn = f"arn:aws:sqs:{REGION}:{ACCOUNT}:{self.queue_url.rsplit('/', 1)[-1]}"
        return {
            "Records": [
                {
                    "messageId": message["MessageId"],
                    "receiptHandle": message["ReceiptHandle"],
                    "body": message["Body"],
                    "attributes": dict(message.get("Attributes", {})),
                    "messageAttributes": {},
                    "md5OfBody": message.get("MD5OfBody", ""),
                    "eventSource": "aws:sqs",
                    "eventSourceARN": arn,
                    "awsRegion": REGION,
                }
                for message in messages
            ]
        }


def _as_event_record(record: dict[str, Any]) -> dict[str, Any]:
    event = copy.deepcopy(record)
    event.setdefault("eventSource", "aws:dynamodb")
    event.setdefault("awsRegion", REGION)
    return event


def _create(prefix: str) -> Sandbox:
    """The tasks table with its ``open-tasks`` index and stream, the scrape queue with its DLQ, the bucket."""
    made = create_pipeline_resources(prefix, REGION)
    return Sandbox(made.table, made.stream_arn, made.queue_url, made.dlq_url, made.bucket)


@contextlib.contextmanager
def sandbox(prefix: str = "bench", *, extra_env: dict[str, str] | None = None) -> Iterator[Sandbox]:
    """A fresh in-process AWS with the pipeline's resources, the handlers pointed at it."""
    make_transactions_atomic()
    enforce_dynamodb_size_limits()
    write_dynamodb_items_directly()
    project_top_level_names_directly()
    remember_condition_parses()
    write_stream_images_when_read()
    remember_update_expression_parses()
    scan_queues_with_one_clock_read()
    query_one_partition()
    # Every function's settings at the modules' defaults; the scrape reconciler's thresholds win over
    # the email reconciler's, as the benchmarks time the scrape pipeline.
    settings = function_env.all_settings(
        "email_reconciler", "email_worker", "dispatcher", "scraper", "scrape_reconciler"
    )
    wanted = {**_ENV, **settings, **(extra_env or {})}
    previous = {
        name: os.environ.get(name)
        for name in (*wanted, *_UNSET, "TASKS_TABLE", "SCRAPE_QUEUE_URL", "SCRAPE_DLQ_URL", "RESULTS_BUCKET")
    }
    os.environ.update(wanted)
    for name in _UNSET:
        os.environ.pop(name, None)
    try:
        with mock_aws():
            call_counter.install()
            clients.reset()
            created = _create(prefix)
            os.environ.update(
                {
                    "TASKS_TABLE": created.table,
                    "SCRAPE_QUEUE_URL": created.queue_url,
                    "SCRAPE_DLQ_URL": created.dlq_url,
                    "RESULTS_BUCKET": created.bucket,
                }
            )
            clock.set_time_source(lambda: created.now[0])
            try:
                yield created
            finally:
                clock.set_time_source(None)
                clients.reset()
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
