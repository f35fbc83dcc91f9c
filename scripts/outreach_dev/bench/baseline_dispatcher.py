"""Baseline dispatcher: what a user would write with Powertools' BatchProcessor, one SendMessage per record.

It does the same work as ``outreach.dispatcher`` (every scrape task that became Pending becomes one
message on the scrape queue) the way the Powertools documentation shows it: a record handler called
once per stream record, partial failures reported per record.
https://docs.powertools.aws.dev/lambda/python/latest/utilities/batch/
"""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from outreach import clients, config
from outreach.stream_records import parse_task_change


def _send_one(record: DynamoDBRecord) -> None:
    change = parse_task_change(record.raw_event)
    if change.scrape_task_became_pending:
        clients.sqs().send_message(
            QueueUrl=config.scrape_queue_url(), MessageBody=json.dumps({"task_id": change.task_id})
        )


def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    processor = BatchProcessor(event_type=EventType.DynamoDBStreams)
    return process_partial_response(
        event=event, record_handler=_send_one, processor=processor, context=context
    )
