"""The embedded AWS holds items to 400 KB and a TransactWriteItems request to 4 MB, as DynamoDB does."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from embedded_aws import dynamodb_size_limits
from embedded_aws.base import client
from embedded_aws.clock import VirtualClock
from embedded_aws.dynamodb_size_limits import TRANSACTION_TOO_LARGE, item_size

REGION = "eu-central-1"
KB = 1024
MB = 1024 * KB


def _table(endpoint: str) -> Any:
    dynamodb = client("dynamodb", endpoint, REGION)
    dynamodb.create_table(
        TableName="sized",
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
    )
    return dynamodb


def _item(pk: str, size: int) -> dict[str, Any]:
    """An item of exactly ``size`` bytes as DynamoDB counts them (names and values)."""
    item = {"pk": {"S": pk}, "blob": {"S": ""}}
    item["blob"]["S"] = "x" * (size - item_size(item))
    assert item_size(item) == size
    return item


def _count(dynamodb: Any) -> int:
    """Items in the table (a Scan reads at most 1 MB a page)."""
    pages = dynamodb.get_paginator("scan").paginate(TableName="sized", Select="COUNT")
    return sum(int(page["Count"]) for page in pages)


def _puts(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"Put": {"TableName": "sized", "Item": item}} for item in items]


def test_a_put_of_401_kb_is_refused_and_writes_nothing(endpoint: str, clock: VirtualClock) -> None:
    """Items are at most 400 KB, names included, 1 KB = 1024 bytes:
    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Constraints.html (Items), sized as
    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html"""
    dynamodb = _table(endpoint)
    with pytest.raises(ClientError) as refused:
        dynamodb.put_item(TableName="sized", Item=_item("big", 401 * KB))
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert refused.value.response["Error"]["Message"] == "Item size has exceeded the maximum allowed size"
    assert _count(dynamodb) == 0


def test_a_put_of_399_kb_is_stored(endpoint: str, clock: VirtualClock) -> None:
    """An item under 400 KB is stored whole:
    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Constraints.html (Items)"""
    dynamodb = _table(endpoint)
    dynamodb.put_item(TableName="sized", Item=_item("fits", 399 * KB))
    stored = dynamodb.get_item(TableName="sized", Key={"pk": {"S": "fits"}}, ConsistentRead=True)["Item"]
    assert item_size(stored) == 399 * KB


def test_an_item_of_exactly_400_kb_is_stored_and_one_byte_more_is_refused(
    endpoint: str, clock: VirtualClock
) -> None:
    """The limit is 400 KB = 409,600 bytes (binary units):
    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Constraints.html"""
    dynamodb = _table(endpoint)
    dynamodb.put_item(TableName="sized", Item=_item("edge", 400 * KB))
    with pytest.raises(ClientError, match="Item size has exceeded"):
        dynamodb.put_item(TableName="sized", Item=_item("over", 400 * KB + 1))
    assert _count(dynamodb) == 1


def test_an_update_is_held_to_400_kb_inside_a_map_too_and_changes_nothing_when_refused(
    endpoint: str, clock: VirtualClock
) -> None:
    """The size that counts is the item's after the update, nested attributes included:
    https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html,
    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html"""
    dynamodb = _table(endpoint)
    dynamodb.put_item(TableName="sized", Item={"pk": {"S": "doc"}, "m": {"M": {}}})
    # GIVEN an item grown by an update inside its map to 399 KB: accepted
    overhead = item_size({"pk": {"S": "doc"}, "m": {"M": {"a": {"S": ""}}}})
    dynamodb.update_item(
        TableName="sized",
        Key={"pk": {"S": "doc"}},
        UpdateExpression="SET m.a = :a",
        ExpressionAttributeValues={":a": {"S": "a" * (399 * KB - overhead)}},
    )
    before = dynamodb.get_item(TableName="sized", Key={"pk": {"S": "doc"}}, ConsistentRead=True)["Item"]
    assert item_size(before) == 399 * KB
    # WHEN another update inside the map would take it past 400 KB
    with pytest.raises(ClientError) as refused:
        dynamodb.update_item(
            TableName="sized",
            Key={"pk": {"S": "doc"}},
            UpdateExpression="SET m.b = :b, n = :n",
            ExpressionAttributeValues={":b": {"S": "b" * 2 * KB}, ":n": {"N": "1"}},
        )
    # THEN it is refused and the item is as it was
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert refused.value.response["Error"]["Message"] == (
        "Item size to update has exceeded the maximum allowed size"
    )
    after = dynamodb.get_item(TableName="sized", Key={"pk": {"S": "doc"}}, ConsistentRead=True)["Item"]
    assert after == before


def test_an_update_that_uses_one_value_twice_counts_it_twice_and_changes_nothing_when_refused(
    endpoint: str, clock: VirtualClock
) -> None:
    """Each attribute the update sets counts in the item after it:
    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html"""
    dynamodb = _table(endpoint)
    dynamodb.put_item(TableName="sized", Item={"pk": {"S": "twice"}})
    with pytest.raises(ClientError, match="Item size to update has exceeded"):
        dynamodb.update_item(
            TableName="sized",
            Key={"pk": {"S": "twice"}},
            UpdateExpression="SET a = :v, b = :v",
            ExpressionAttributeValues={":v": {"S": "v" * 250 * KB}},
        )
    item = dynamodb.get_item(TableName="sized", Key={"pk": {"S": "twice"}}, ConsistentRead=True)["Item"]
    assert item == {"pk": {"S": "twice"}}


def test_a_transaction_carrying_over_4_mb_is_refused_whole(endpoint: str, clock: VirtualClock) -> None:
    """DynamoDB: "The aggregate size of the items in the transaction cannot exceed 4 MB", and it rejects
    the entire request: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html,
    https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html"""
    dynamodb = _table(endpoint)
    # GIVEN eleven items of 390 KB each, every one within the item limit, 4.19 MB together
    items = [_item(f"part-{n}", 390 * KB) for n in range(11)]
    assert sum(item_size(item) for item in items) > 4 * MB
    # WHEN they are written in one transaction
    with pytest.raises(ClientError) as refused:
        dynamodb.transact_write_items(TransactItems=_puts(items))
    # THEN it is refused as a ValidationException and none of them was written
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert refused.value.response["Error"]["Message"] == TRANSACTION_TOO_LARGE
    assert _count(dynamodb) == 0


def test_a_transaction_under_4_mb_is_written_whole(endpoint: str, clock: VirtualClock) -> None:
    """Up to 4 MB a transaction is applied, all of it:
    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html"""
    dynamodb = _table(endpoint)
    items = [_item(f"part-{n}", 399 * KB) for n in range(10)]
    assert sum(item_size(item) for item in items) < 4 * MB
    dynamodb.transact_write_items(TransactItems=_puts(items))
    assert _count(dynamodb) == 10


def test_a_transaction_with_one_item_over_400_kb_is_cancelled_and_writes_nothing(
    endpoint: str, clock: VirtualClock
) -> None:
    """DynamoDB cancels a transaction in which "an item size becomes too large (larger than 400 KB)",
    reason ValidationError: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html
    (TransactionCanceledException)"""
    dynamodb = _table(endpoint)
    items = [_item("small-1", KB), _item("small-2", KB), _item("big", 401 * KB), _item("small-3", KB)]
    with pytest.raises(ClientError) as cancelled:
        dynamodb.transact_write_items(TransactItems=_puts(items))
    assert _count(dynamodb) == 0
    assert cancelled.value.response["Error"]["Code"] == "TransactionCanceledException"
    reasons = [reason["Code"] for reason in cancelled.value.response["CancellationReasons"]]
    assert reasons == ["None", "None", "ValidationError", "None"]


def test_item_size_is_counted_as_dynamodb_documents_it() -> None:
    """Names and values in UTF-8 bytes, binary raw, a number one byte per two significant digits plus
    one, Boolean and null one byte, a list or map three bytes plus one byte an element:
    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html"""
    assert item_size({"name": {"S": "Grüße"}}) == 4 + 7
    assert item_size({"b": {"B": "AAECAw=="}}) == 1 + 4
    assert item_size({"n": {"N": "-0012345.6700"}}) == 1 + 4 + 1
    assert item_size({"t": {"BOOL": True}, "z": {"NULL": True}}) == 2 + 2
    assert item_size({"l": {"L": [{"S": "ab"}, {"N": "7"}]}}) == 1 + 3 + (1 + 2) + (1 + 2)
    assert item_size({"m": {"M": {"k": {"S": "v"}}}}) == 1 + 3 + (1 + 1 + 1)
    assert item_size({"m": {"M": {}}, "ss": {"SS": ["a", "bc"]}}) == (1 + 3) + (2 + 3)


def test_a_transaction_s_update_past_400_kb_is_cancelled_and_each_update_is_sized_once(
    endpoint: str, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each action's item is sized before the transaction is applied, and only then: the update is
    applied on the state it was sized on, under the same lock."""
    dynamodb = _table(endpoint)
    dynamodb.put_item(TableName="sized", Item=_item("near", 399 * KB))
    dynamodb.put_item(TableName="sized", Item=_item("small", KB))
    sized: list[str] = []
    grows = dynamodb_size_limits._grows_too_large

    def counted(backend: Any, table: str, key: dict[str, Any], *rest: Any) -> bool:
        sized.append(key["pk"]["S"])
        return grows(backend, table, key, *rest)

    monkeypatch.setattr(dynamodb_size_limits, "_grows_too_large", counted)

    def update(pk: str, size: int) -> dict[str, Any]:
        return {
            "Update": {
                "TableName": "sized",
                "Key": {"pk": {"S": pk}},
                "UpdateExpression": "SET extra = :v",
                "ExpressionAttributeValues": {":v": {"S": "y" * size}},
            }
        }

    with pytest.raises(ClientError) as cancelled:
        dynamodb.transact_write_items(TransactItems=[update("small", KB), update("near", 2 * KB)])
    reasons = [reason["Code"] for reason in cancelled.value.response["CancellationReasons"]]
    assert reasons == ["None", "ValidationError"]
    assert "extra" not in dynamodb.get_item(TableName="sized", Key={"pk": {"S": "small"}})["Item"]
    sized.clear()
    dynamodb.transact_write_items(TransactItems=[update("small", KB), update("near", 10)])
    assert sorted(sized) == ["near", "small"]
    assert "extra" in dynamodb.get_item(TableName="sized", Key={"pk": {"S": "near"}})["Item"]
