"""The embedded AWS applies TransactWriteItems all-or-nothing, also under concurrent requests."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from botocore.exceptions import ClientError

from embedded_aws.base import client
from embedded_aws.clock import VirtualClock

REGION = "eu-central-1"


def _table(endpoint: str) -> tuple[Any, str]:
    dynamodb = client("dynamodb", endpoint, REGION)
    dynamodb.create_table(
        TableName="tx",
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )
    return dynamodb, "tx"


def _increment(dynamodb: Any, n: int) -> None:
    dynamodb.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": "tx", "Item": {"pk": {"S": f"task-{n}"}}}},
            {
                "Update": {
                    "TableName": "tx",
                    "Key": {"pk": {"S": "counter"}},
                    "UpdateExpression": "ADD done :one",
                    "ExpressionAttributeValues": {":one": {"N": "1"}},
                }
            },
        ]
    )


def _cancelled(dynamodb: Any, n: int) -> None:
    with pytest.raises(ClientError):
        dynamodb.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": "tx", "Item": {"pk": {"S": f"never-{n}"}}}},
                {
                    "ConditionCheck": {
                        "TableName": "tx",
                        "Key": {"pk": {"S": "missing"}},
                        "ConditionExpression": "attribute_exists(pk)",
                    }
                },
            ]
        )


def test_concurrent_transactions_lose_no_write_when_others_are_cancelled(
    endpoint: str, clock: VirtualClock
) -> None:
    # GIVEN transactions that each add a row and bump one shared counter, and others that are cancelled
    dynamodb, _ = _table(endpoint)
    # WHEN they run from 8 threads at once
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda n: _increment(dynamodb, n) if n % 2 else _cancelled(dynamodb, n), range(400)))
    # THEN every successful transaction's writes survive and the cancelled ones left nothing
    counter = dynamodb.get_item(TableName="tx", Key={"pk": {"S": "counter"}}, ConsistentRead=True)["Item"]
    assert counter["done"]["N"] == "200"
    assert dynamodb.scan(TableName="tx", Select="COUNT")["Count"] == 201


def test_a_failed_condition_applies_no_action_and_writes_no_stream_record(
    endpoint: str, clock: VirtualClock
) -> None:
    dynamodb, _ = _table(endpoint)
    streams = client("dynamodbstreams", endpoint, REGION)
    stream_arn = dynamodb.describe_table(TableName="tx")["Table"]["LatestStreamArn"]
    # GIVEN a transaction whose first action is fine and whose second condition fails
    with pytest.raises(ClientError) as failure:
        dynamodb.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": "tx", "Item": {"pk": {"S": "a"}}}},
                {
                    "Put": {
                        "TableName": "tx",
                        "Item": {"pk": {"S": "b"}},
                        "ConditionExpression": "attribute_exists(pk)",
                    }
                },
            ]
        )
    # THEN it is cancelled with per-action reasons and nothing was written, not even to the stream
    reasons = [reason["Code"] for reason in failure.value.response["CancellationReasons"]]
    assert reasons == ["None", "ConditionalCheckFailed"]
    assert dynamodb.scan(TableName="tx", Select="COUNT")["Count"] == 0
    shard = streams.describe_stream(StreamArn=stream_arn)["StreamDescription"]["Shards"][0]["ShardId"]
    iterator = streams.get_shard_iterator(
        StreamArn=stream_arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON"
    )
    assert streams.get_records(ShardIterator=iterator["ShardIterator"])["Records"] == []
