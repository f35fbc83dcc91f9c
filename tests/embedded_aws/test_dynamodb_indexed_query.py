"""The embedded AWS's Query reads the one partition it names, table or index, and answers what moto does.

A Query reads the items of one partition key value, in sort-key order
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.html); a global secondary
index is a copy of the table organised by its own key
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html).
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from moto.dynamodb.models.table import Table

from embedded_aws.base import client
from embedded_aws.clock import VirtualClock

REGION = "eu-central-1"
TABLE = "partitions"


@pytest.fixture
def dynamodb(endpoint: str, clock: VirtualClock) -> Any:
    """A table keyed (pk, sk) with an index keyed (gk, gs), as the tasks table and its open-tasks index."""
    dynamodb = client("dynamodb", endpoint, REGION)
    dynamodb.create_table(
        TableName=TABLE,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[
            {"AttributeName": name, "AttributeType": kind}
            for name, kind in (("pk", "S"), ("sk", "S"), ("gk", "S"), ("gs", "N"))
        ],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by-gk",
                "KeySchema": [
                    {"AttributeName": "gk", "KeyType": "HASH"},
                    {"AttributeName": "gs", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
    )
    return dynamodb


def _fill(dynamodb: Any, items: int, seed: int = 7) -> None:
    """``items`` items over 5 table partitions and 4 index partitions (some items not in the index),
    with repeated index sort values, so ties are broken by the table's key."""
    rng = random.Random(seed)
    for n in range(items):
        item = {"pk": {"S": f"p{n % 5}"}, "sk": {"S": f"s{n:05d}"}, "n": {"N": str(n)}}
        if n % 7:
            item["gk"] = {"S": f"g{rng.randrange(4)}"}
            item["gs"] = {"N": str(rng.randrange(30))}
        dynamodb.put_item(TableName=TABLE, Item=item)


def _pages(dynamodb: Any, **request: Any) -> list[tuple[list[dict[str, Any]], Any, int]]:
    """Every page of a Query: its items, its LastEvaluatedKey and its ScannedCount."""
    pages = []
    start: dict[str, Any] = {}
    while True:
        page = dynamodb.query(TableName=TABLE, **request, **start)
        pages.append((page["Items"], page.get("LastEvaluatedKey"), page["ScannedCount"]))
        if "LastEvaluatedKey" not in page:
            return pages
        start = {"ExclusiveStartKey": page["LastEvaluatedKey"]}


QUERIES: list[dict[str, Any]] = [
    {"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "p3"}}, "Limit": 7},
    {
        "KeyConditionExpression": "pk = :p AND sk BETWEEN :a AND :b",
        "ExpressionAttributeValues": {":p": {"S": "p1"}, ":a": {"S": "s00020"}, ":b": {"S": "s00090"}},
        "ScanIndexForward": False,
        "Limit": 4,
    },
    {
        "IndexName": "by-gk",
        "KeyConditionExpression": "gk = :g",
        "ExpressionAttributeValues": {":g": {"S": "g2"}},
        "Limit": 9,
    },
    {
        "IndexName": "by-gk",
        "KeyConditionExpression": "gk = :g AND gs < :s",
        "FilterExpression": "n > :n",
        "ProjectionExpression": "pk, sk, gs",
        "ExpressionAttributeValues": {":g": {"S": "g0"}, ":s": {"N": "12"}, ":n": {"N": "40"}},
        "ScanIndexForward": False,
        "Limit": 5,
    },
    {
        "IndexName": "by-gk",
        "KeyConditionExpression": "gk = :g",
        "ExpressionAttributeValues": {":g": {"S": "nobody"}},
    },
]


@pytest.fixture
def moto_whole_table(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Switch moto's own Query (every item listed and sorted) back on."""

    def switch() -> None:
        monkeypatch.setattr(Table, "query", inspect.unwrap(Table.query))
        monkeypatch.setattr(Table, "all_items", inspect.unwrap(Table.all_items))

    return switch


def test_a_query_answers_the_pages_moto_answers_from_the_whole_table(
    dynamodb: Any, moto_whole_table: Callable[[], None]
) -> None:
    # GIVEN 150 items over several partitions of the table and of its index
    _fill(dynamodb, 150)
    # WHEN each Query is paged through on one partition, then with moto's whole-table walk
    partition = [_pages(dynamodb, **query) for query in QUERIES]
    moto_whole_table()
    whole = [_pages(dynamodb, **query) for query in QUERIES]
    # THEN every page holds the same items in the same order, with the same LastEvaluatedKey and count
    assert partition == whole
    assert sum(len(items) for pages in partition for items, _, _ in pages) > 50


@pytest.fixture
def items_listed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many items each listing of a table's items (moto's ``all_items``) handed to its caller."""
    listed: list[int] = []
    current = Table.all_items

    def counted(self: Any) -> list[Any]:
        items = current(self)
        listed.append(len(items))
        return items

    monkeypatch.setattr(Table, "all_items", counted)
    yield listed


def test_a_query_page_reads_its_partition_not_the_table(dynamodb: Any, items_listed: list[int]) -> None:
    # GIVEN 400 items, 80 in table partition p3, none of them in index partition "g-none"
    _fill(dynamodb, 400)
    dynamodb.put_item(
        TableName=TABLE, Item={"pk": {"S": "x"}, "sk": {"S": "x"}, "gk": {"S": "g-none"}, "gs": {"N": "1"}}
    )
    # WHEN partition p3 of the table and partition g-none of the index are each queried
    items_listed.clear()
    table = _pages(dynamodb, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "p3"}})
    index = _pages(
        dynamodb,
        IndexName="by-gk",
        KeyConditionExpression="gk = :g",
        ExpressionAttributeValues={":g": {"S": "g-none"}},
    )
    # THEN each Query was handed only the items of its partition, never the table's 401
    assert len(table[0][0]) == 80 and len(index[0][0]) == 1
    assert items_listed == [80, 1]
