"""What a client observes of DynamoDB requests on moto: each response or error, the items after, the
stream records and an index's rows, to compare a fast path of the embedded AWS with moto's own."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import boto3
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.dynamodb.models import dynamodb_backends

REGION = "eu-central-1"
ACCOUNT = "123456789012"
TABLE = "t"

# One row of every attribute type DynamoDB stores, nested ones included.
ROW: dict[str, Any] = {
    "pk": {"S": "a"},
    "status": {"S": "Pending"},
    "open_key": {"S": "k#1"},
    "n": {"N": "2"},
    "ratio": {"N": "1.50"},
    "empty": {"S": ""},
    "blob": {"B": b"\x00\x01bytes"},
    "tags": {"SS": ["x", "y"]},
    "scores": {"NS": ["1", "2.5"]},
    "blobs": {"BS": [b"a", b"\xff"]},
    "on": {"BOOL": False},
    "nothing": {"NULL": True},
    "doc": {"M": {"inner": {"S": "v"}, "deep": {"M": {"list": {"L": [{"N": "1"}, {"S": "s"}]}}}}},
    "list": {"L": [{"M": {}}, {"L": []}, {"BOOL": True}, {"B": b"z"}]},
}


def create_table(dynamodb: Any) -> None:
    """The table: hash key ``pk``, an ``open`` index on ``open_key``, a stream of both images, and
    ``ROW`` with a second row beside it."""
    dynamodb.create_table(
        TableName=TABLE,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "open_key", "AttributeType": "S"},
        ],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "open",
                "KeySchema": [{"AttributeName": "open_key", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )
    dynamodb.put_item(TableName=TABLE, Item=ROW)
    dynamodb.put_item(TableName=TABLE, Item={**ROW, "pk": {"S": "b"}, "n": {"N": "7"}})


@contextmanager
def fresh_table() -> Iterator[Any]:
    """A DynamoDB client on a fresh moto holding ``create_table``'s table."""
    with mock_aws():
        dynamodb = boto3.client(
            "dynamodb", region_name=REGION, aws_access_key_id="testing", aws_secret_access_key="testing"
        )
        create_table(dynamodb)
        yield dynamodb


def _without_metadata(response: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in response.items() if k != "ResponseMetadata"}


def _stream() -> list[dict[str, Any]]:
    table: Any = dynamodb_backends[ACCOUNT][REGION].get_table(TABLE)
    records = [record.to_json() for record in table.stream_shard.items]
    # The record's id and creation time differ from run to run, and so does its size, which moto takes
    # of the record's JSON, creation time included; everything else is compared, in order.
    varying = {"ApproximateCreationDateTime", "SizeBytes"}
    return [
        {"eventName": r["eventName"], **{k: v for k, v in r["dynamodb"].items() if k not in varying}}
        for r in records
    ]


def observe(requests: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Run ``requests`` (operation name, parameters) on a fresh table; every response body as sent,
    each parsed response or error, the rows after, the stream records and the index's rows."""
    bodies: list[bytes] = []
    outcomes: list[Any] = []
    with fresh_table() as dynamodb:

        def keep_body(http_response: Any, **_: Any) -> None:
            bodies.append(http_response.content)

        dynamodb.meta.events.register("after-call.dynamodb", keep_body)
        for operation, params in requests:
            call: Callable[..., Any] = getattr(dynamodb, operation)
            try:
                outcomes.append(_without_metadata(call(**params)))
            except ClientError as error:
                outcomes.append({"error": error.response["Error"], **_without_metadata(dict(error.response))})
        dynamodb.meta.events.unregister("after-call.dynamodb", keep_body)
        rows = sorted(
            dynamodb.scan(TableName=TABLE, ConsistentRead=True)["Items"], key=lambda i: i["pk"]["S"]
        )
        index = dynamodb.scan(TableName=TABLE, IndexName="open")["Items"]
        return {
            "bodies": bodies,
            "outcomes": outcomes,
            "rows": rows,
            "stream": _stream(),
            "index": sorted(index, key=lambda i: i["pk"]["S"]),
        }
