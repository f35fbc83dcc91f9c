"""JSON event fixtures and events built from real moto queue receives."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import boto3

from tests.support.aws import REGION

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "events"


def load_event(name: str) -> dict[str, Any]:
    return dict(json.loads((FIXTURES / name).read_text()))


def sqs_event_from_queue(queue_url: str, *, max_messages: int = 1) -> dict[str, Any]:
    """Receive from a moto queue and shape the messages the way the SQS event source mapping does."""
    template = load_event("sqs_scrape_message.json")["Records"][0]
    sqs = boto3.client("sqs", region_name=REGION)
    messages = sqs.receive_message(
        QueueUrl=queue_url, MaxNumberOfMessages=max_messages, AttributeNames=["All"]
    ).get("Messages", [])
    records = []
    for message in messages:
        record = copy.deepcopy(template)
        record["messageId"] = message["MessageId"]
        record["receiptHandle"] = message["ReceiptHandle"]
        record["body"] = message["Body"]
        record["attributes"].update(message.get("Attributes", {}))
        records.append(record)
    return {"Records": records}
