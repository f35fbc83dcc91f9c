"""A stream record's images are written out when it is read: the records moto writes at each write."""

from __future__ import annotations

from typing import Any

import pytest
from moto.dynamodb.models import dynamodb_backends
from moto.dynamodb.models import table as tables

from embedded_aws.dynamodb_plain_updates import install as plain_updates
from embedded_aws.dynamodb_stream_images import ORIGINAL, ImagesWhenRead, write_stream_images_when_read
from tests.embedded_aws.dynamodb_observed import ACCOUNT, REGION, ROW, TABLE, fresh_table, observe

KEY = {"pk": {"S": "a"}}
WRITES: list[tuple[str, dict[str, Any]]] = [
    ("put_item", {"TableName": TABLE, "Item": {**ROW, "pk": {"S": "c"}}}),
    (
        "update_item",
        {
            "TableName": TABLE,
            "Key": KEY,
            "UpdateExpression": "SET n = :n REMOVE open_key",
            "ExpressionAttributeValues": {":n": {"N": "3"}},
        },
    ),
    (
        "update_item",
        {
            "TableName": TABLE,
            "Key": KEY,
            "UpdateExpression": "SET #d.#i = :v",
            "ExpressionAttributeNames": {"#d": "doc", "#i": "inner"},
            "ExpressionAttributeValues": {":v": {"S": "w"}},
        },
    ),
    (
        "update_item",
        {
            "TableName": TABLE,
            "Key": KEY,
            "UpdateExpression": "SET #d.#i = :v",
            "ExpressionAttributeNames": {"#d": "doc", "#i": "inner"},
            "ExpressionAttributeValues": {":v": {"S": "x"}},
        },
    ),
    (
        "transact_write_items",
        {
            "TransactItems": [
                {
                    "Update": {
                        "TableName": TABLE,
                        "Key": {"pk": {"S": "b"}},
                        "UpdateExpression": "ADD n :one",
                        "ExpressionAttributeValues": {":one": {"N": "1"}},
                    }
                },
                {"Delete": {"TableName": TABLE, "Key": {"pk": {"S": "c"}}}},
            ]
        },
    ),
    ("delete_item", {"TableName": TABLE, "Key": KEY}),
]


@pytest.fixture(autouse=True)
def installed() -> None:
    plain_updates()
    write_stream_images_when_read()


def test_the_stream_holds_the_records_moto_writes_at_each_write(monkeypatch: pytest.MonkeyPatch) -> None:
    when_read = observe(WRITES)
    with monkeypatch.context() as moto:
        moto.setattr(tables, "StreamRecord", ORIGINAL["record"])
        at_write = observe(WRITES)
    assert when_read == at_write
    # the two updates inside the map: each record holds the map as that write left it
    images = [r.get("NewImage", {}).get("doc", {}).get("M", {}).get("inner") for r in when_read["stream"]]
    assert {"S": "w"} in images and {"S": "x"} in images
    assert len(when_read["stream"]) == 2 + len(WRITES) + 1  # two rows made, a transaction of two


def test_a_record_is_written_out_only_when_read() -> None:
    with fresh_table() as dynamodb:
        dynamodb.update_item(**WRITES[1][1])
        shard = dynamodb_backends[ACCOUNT][REGION].get_table(TABLE).stream_shard
        assert shard is not None
        last = shard.items[-1]
        assert isinstance(last, ImagesWhenRead) and last._record is None
        record = last.to_json()
        assert record["dynamodb"]["NewImage"]["n"] == {"N": "3"}
        assert record["dynamodb"]["OldImage"]["n"] == {"N": "2"}
        assert last.to_json() is record
