"""The embedded AWS throttles writes to one partition key past 1,000 write units a second, table and index.

One partition serves at most 1,000 write request units a second, on-demand tables included
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html,
https://repost.aws/knowledge-center/on-demand-table-throttling-dynamodb); a global secondary index
whose write is throttled throttles the table write that caused it
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations);
a throttled request names why and where (``ThrottlingReasons``,
https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_ThrottlingReason.html), a
throttled transaction is cancelled with ``ThrottlingError``
(https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from embedded_aws.clock import VirtualClock
from embedded_aws.dynamodb_partition_throttling import Throttle, partition_throttling

REGION = "eu-central-1"
TABLE = "hot"


def _client(endpoint: str) -> Any:
    """A client that does not retry, so each refusal is seen as it is."""
    return boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(retries={"mode": "standard", "total_max_attempts": 1}),
    )


@pytest.fixture
def dynamodb(endpoint: str, clock: VirtualClock) -> Any:
    dynamodb = _client(endpoint)
    dynamodb.create_table(
        TableName=TABLE,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "gk", "AttributeType": "S"},
        ],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by-gk",
                "KeySchema": [{"AttributeName": "gk", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
    )
    return dynamodb


@pytest.fixture
def frozen() -> Iterator[tuple[Throttle, list[float]]]:
    """The throttle on a clock that moves only when the test moves it."""
    now = [1_000.0]
    with partition_throttling(now=lambda: now[0]) as throttle:
        yield throttle, now


def _puts(start: int, count: int, index_key: str) -> list[dict[str, Any]]:
    return [
        {"Put": {"TableName": TABLE, "Item": {"pk": {"S": f"item-{i}"}, "gk": {"S": index_key}}}}
        for i in range(start, start + count)
    ]


def _stored(dynamodb: Any, pk: str) -> bool:
    return "Item" in dynamodb.get_item(TableName=TABLE, Key={"pk": {"S": pk}}, ConsistentRead=True)


def test_a_transaction_past_1000_index_writes_a_second_on_one_key_is_cancelled_whole_with_throttling_error(
    dynamodb: Any, frozen: tuple[Throttle, list[float]]
) -> None:
    throttle, _ = frozen
    # GIVEN 1,000 items put in one second, each an entry under the same index key (one unit each)
    for start in range(0, 1_000, 100):
        dynamodb.transact_write_items(TransactItems=_puts(start, 100, "hot"))
    # WHEN one more transaction writes that key in the same second
    with pytest.raises(ClientError) as refused:
        dynamodb.transact_write_items(TransactItems=_puts(1_000, 2, "hot"))
    # THEN it is cancelled whole, each throttled action naming ThrottlingError, and nothing is written
    assert refused.value.response["Error"]["Code"] == "TransactionCanceledException"
    codes = [reason["Code"] for reason in refused.value.response["CancellationReasons"]]
    assert codes == ["ThrottlingError", "ThrottlingError"]
    assert not _stored(dynamodb, "item-1000") and not _stored(dynamodb, "item-1001")
    assert throttle.throttled_requests == 1


def test_a_throttled_index_write_throttles_the_table_write_that_caused_it(
    dynamodb: Any, frozen: tuple[Throttle, list[float]]
) -> None:
    for start in range(0, 1_000, 100):
        dynamodb.transact_write_items(TransactItems=_puts(start, 100, "hot"))
    # A new item (its own table key, never written) whose index entry goes under the exhausted key
    with pytest.raises(ClientError) as refused:
        dynamodb.put_item(TableName=TABLE, Item={"pk": {"S": "fresh"}, "gk": {"S": "hot"}})
    error: dict[str, Any] = dict(refused.value.response)
    assert error["Error"]["Code"] == "ProvisionedThroughputExceededException"
    assert [reason["reason"] for reason in error["ThrottlingReasons"]] == [
        "IndexWriteKeyRangeThroughputExceeded"
    ]
    assert error["ThrottlingReasons"][0]["resource"].endswith(f"table/{TABLE}/index/by-gk")
    assert not _stored(dynamodb, "fresh")
    # The same item under another index key is written: the limit is per partition key
    dynamodb.put_item(TableName=TABLE, Item={"pk": {"S": "fresh"}, "gk": {"S": "cool"}})
    assert _stored(dynamodb, "fresh")


def test_one_table_key_takes_1000_units_a_second_and_more_once_a_second_has_passed(
    dynamodb: Any, frozen: tuple[Throttle, list[float]]
) -> None:
    _, now = frozen
    # An item of under 1 KB without the index attribute: one unit a write, on its table key only
    add_one = {"UpdateExpression": "ADD n :one", "ExpressionAttributeValues": {":one": {"N": "1"}}}
    for _ in range(10):
        dynamodb.transact_write_items(
            TransactItems=[
                {"Update": {"TableName": TABLE, "Key": {"pk": {"S": f"c{i}"}}, **add_one}} for i in range(100)
            ]
        )
    # 10 transactional updates of each of c0..c99: 20 units a key so far; now 980 plain updates of c0
    for _ in range(980):
        dynamodb.update_item(
            TableName=TABLE,
            Key={"pk": {"S": "c0"}},
            UpdateExpression="ADD n :one",
            ExpressionAttributeValues={":one": {"N": "1"}},
        )
    with pytest.raises(ClientError) as refused:
        dynamodb.update_item(
            TableName=TABLE,
            Key={"pk": {"S": "c0"}},
            UpdateExpression="ADD n :one",
            ExpressionAttributeValues={":one": {"N": "1"}},
        )
    error: dict[str, Any] = dict(refused.value.response)
    assert [r["reason"] for r in error["ThrottlingReasons"]] == ["TableWriteKeyRangeThroughputExceeded"]
    now[0] += 0.5
    dynamodb.update_item(
        TableName=TABLE,
        Key={"pk": {"S": "c0"}},
        UpdateExpression="ADD n :one",
        ExpressionAttributeValues={":one": {"N": "1"}},
    )
    item = dynamodb.get_item(TableName=TABLE, Key={"pk": {"S": "c0"}}, ConsistentRead=True)["Item"]
    assert item["n"]["N"] == str(10 + 980 + 1)


def test_without_the_switch_nothing_is_throttled(dynamodb: Any) -> None:
    for start in range(0, 1_200, 100):
        dynamodb.transact_write_items(TransactItems=_puts(start, 100, "hot"))
    assert _stored(dynamodb, "item-1199")
