"""A DynamoDB read in the embedded AWS sees an item before or after a concurrent update, never during.

AWS: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/WorkingWithItems.html (GetItem,
UpdateItem and the other item operations are atomic).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator
from typing import Any

import boto3
from botocore.config import Config

from embedded_aws.clock import VirtualClock

REGION = "eu-west-3"
ACCOUNT = "123456789012"


class _GatedAttributes(dict[str, Any]):
    """An item's attributes whose first reader pauses after the first one until ``gate`` opens (or
    1 s); other threads, and copies, read them as usual."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.gate = threading.Event()
        self.paused = threading.Event()
        self.reader: int | None = None

    def items(self) -> Any:
        if self.reader is None:
            self.reader = threading.get_ident()
        if threading.get_ident() != self.reader:
            return super().items()
        return self._paused_items()

    def _paused_items(self) -> Iterator[tuple[str, Any]]:
        for pair in super().items():
            yield pair
            self.paused.set()
            self.gate.wait(1.0)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return copy.deepcopy(dict(self), memo)


def _client(endpoint: str) -> Any:
    # No retries: a read answered 500 must show as the error it is.
    return boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(retries={"total_max_attempts": 1}),
    )


def test_a_get_item_during_an_update_sees_the_item_before_it_and_the_update_waits(
    endpoint: str, clock: VirtualClock
) -> None:
    from moto.dynamodb.models import dynamodb_backends

    dynamodb = _client(endpoint)
    dynamodb.create_table(
        TableName="isolated",
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
    )
    dynamodb.put_item(TableName="isolated", Item={"pk": {"S": "task-1"}, "status": {"S": "Pending"}})
    # GIVEN the stored item's attributes pause a reader after the first one
    table: Any = dynamodb_backends[ACCOUNT][REGION].get_table("isolated")
    (stored,) = table.items.values()
    stored.attrs = _GatedAttributes(stored.attrs)
    read: dict[str, Any] = {}
    errors: list[Exception] = []

    def reading() -> None:
        try:
            read.update(dynamodb.get_item(TableName="isolated", Key={"pk": {"S": "task-1"}})["Item"])
        except Exception as exc:  # outcome: kept for the assertion (the 500 this isolation removes)
            errors.append(exc)

    reader = threading.Thread(target=reading)
    reader.start()
    assert stored.attrs.paused.wait(10), "the read never started"

    # WHEN an update adds attributes while the read is paused inside the item
    def updating(**kwargs: Any) -> None:
        try:
            dynamodb.update_item(**kwargs)
        except Exception as exc:  # outcome: kept for the assertion
            errors.append(exc)

    writer = threading.Thread(
        target=updating,
        kwargs={
            "TableName": "isolated",
            "Key": {"pk": {"S": "task-1"}},
            "UpdateExpression": "SET #s = :r, claimed_by = :w",
            "ExpressionAttributeNames": {"#s": "status"},
            "ExpressionAttributeValues": {":r": {"S": "Running"}, ":w": {"S": "worker-1"}},
        },
    )
    writer.start()
    writer.join(0.3)
    stored.attrs.gate.set()
    reader.join(10)
    writer.join(10)

    # THEN the read answered the item as it was before the update, and the update then applied
    assert errors == []
    assert read == {"pk": {"S": "task-1"}, "status": {"S": "Pending"}}
    after = dynamodb.get_item(TableName="isolated", Key={"pk": {"S": "task-1"}}, ConsistentRead=True)["Item"]
    assert after["status"] == {"S": "Running"} and after["claimed_by"] == {"S": "worker-1"}
