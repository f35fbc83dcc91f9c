"""Email tasks are the email worker's: no change to one (insert, claim, release back to Pending)
becomes a message on the scrape queue."""

from __future__ import annotations

from typing import Any

import boto3

from outreach import config, dispatcher, task_store
from tests.support.aws import REGION, Resources, receive_all
from tests.support.email import planned
from tests.support.lambda_context import FakeContext


def _row(task_id: str) -> dict[str, Any]:
    """The task's stored item, as a stream record's image carries it."""
    item = boto3.client("dynamodb", region_name=REGION).get_item(
        TableName=config.tasks_table(), Key={"task_id": {"S": task_id}}, ConsistentRead=True
    )
    return dict(item["Item"])


def _record(sequence: int, name: str, old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    change: dict[str, Any] = {
        "Keys": {"task_id": new["task_id"]},
        "NewImage": new,
        "SequenceNumber": str(sequence),
        "StreamViewType": "NEW_AND_OLD_IMAGES",
    }
    if old is not None:
        change["OldImage"] = old
    return {
        "eventID": str(sequence),
        "eventName": name,
        "eventSource": "aws:dynamodb",
        "eventSourceARN": f"arn:aws:dynamodb:{REGION}:123456789012:table/t/stream/2027",
        "dynamodb": change,
    }


def test_email_task_changes_put_nothing_on_the_scrape_queue(resources: Resources) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    inserted = _row(email.task_id)
    task = task_store.get_task(email.task_id)
    assert task is not None
    claimed = task_store.claim_email(task, owner="request-1", lease_seconds=60)
    running = _row(email.task_id)
    task_store.return_email_to_pending(claimed, error="TooManyRequestsException")
    released = _row(email.task_id)
    assert released["status"] == {"S": "Pending"}
    event = {
        "Records": [
            _record(1, "INSERT", None, inserted),
            _record(2, "MODIFY", inserted, running),
            _record(3, "MODIFY", running, released),
        ]
    }
    assert dispatcher.lambda_handler(event, FakeContext()) == {"batchItemFailures": []}
    assert receive_all(resources.queue_url) == []
