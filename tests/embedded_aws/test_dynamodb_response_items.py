"""The embedded AWS writes DynamoDB items into responses itself: the same bytes as moto's walk."""

from __future__ import annotations

from typing import Any

import pytest
from moto.core.serialize import BaseJSONSerializer, JSONSerializer

from embedded_aws import dynamodb_response_items
from embedded_aws.dynamodb_response_items import write_dynamodb_items_directly
from tests.embedded_aws.dynamodb_observed import ROW, TABLE, observe

KEY = {"pk": {"S": "a"}}
READS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "GetItem": [("get_item", {"TableName": TABLE, "Key": KEY})],
    "Query of the table": [
        (
            "query",
            {
                "TableName": TABLE,
                "KeyConditionExpression": "pk = :a",
                "ExpressionAttributeValues": {":a": KEY["pk"]},
            },
        )
    ],
    "Query of an index, paged": [
        (
            "query",
            {
                "TableName": TABLE,
                "IndexName": "open",
                "Limit": 1,
                "KeyConditionExpression": "open_key = :k",
                "ExpressionAttributeValues": {":k": {"S": "k#1"}},
            },
        )
    ],
    "Scan with a projection": [
        (
            "scan",
            {
                "TableName": TABLE,
                "ProjectionExpression": "pk, doc.deep, #l[0]",
                "ExpressionAttributeNames": {"#l": "list"},
            },
        )
    ],
    "BatchGetItem": [("batch_get_item", {"RequestItems": {TABLE: {"Keys": [KEY, {"pk": {"S": "b"}}]}}})],
    "UpdateItem returning ALL_NEW": [
        (
            "update_item",
            {
                "TableName": TABLE,
                "Key": KEY,
                "UpdateExpression": "SET extra = :v",
                "ReturnValues": "ALL_NEW",
                "ExpressionAttributeValues": {":v": {"M": {"b": {"B": b"\x02"}}}},
            },
        )
    ],
    "DeleteItem returning ALL_OLD": [
        ("delete_item", {"TableName": TABLE, "Key": KEY, "ReturnValues": "ALL_OLD"})
    ],
    "a failed condition returning the item": [
        (
            "put_item",
            {
                "TableName": TABLE,
                "Item": ROW,
                "ConditionExpression": "attribute_not_exists(pk)",
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            },
        )
    ],
    "a cancelled transaction returning the item": [
        (
            "transact_write_items",
            {
                "TransactItems": [
                    {
                        "ConditionCheck": {
                            "TableName": TABLE,
                            "Key": KEY,
                            "ConditionExpression": "attribute_not_exists(pk)",
                            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                        }
                    }
                ]
            },
        )
    ],
}


@pytest.fixture(autouse=True)
def installed() -> None:
    write_dynamodb_items_directly()


def _moto_walks(monkeypatch: pytest.MonkeyPatch) -> None:
    original = dynamodb_response_items._ORIGINAL[0]
    monkeypatch.setattr(BaseJSONSerializer, "_serialize_type_map", original)


@pytest.mark.parametrize("requests", READS.values(), ids=READS.keys())
def test_items_in_a_response_are_the_bytes_moto_s_walk_writes(
    requests: list[tuple[str, dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    direct = observe(requests)
    with monkeypatch.context() as walking:
        _moto_walks(walking)
        walked = observe(requests)
    assert direct == walked
    assert direct["outcomes"] and all(direct["bodies"])


def test_an_item_in_a_response_is_written_without_moto_s_walk_of_each_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    walked: list[str] = []
    structure = JSONSerializer._serialize_type_structure

    def counted(self: Any, serialized: Any, value: Any, shape: Any, key: str) -> None:
        if shape.name == "AttributeValue":
            walked.append(key)
        structure(self, serialized, value, shape, key)

    monkeypatch.setattr(JSONSerializer, "_serialize_type_structure", counted)
    seen = observe(READS["Query of the table"])
    assert seen["outcomes"][0]["Items"][0] == {**ROW, "blob": {"B": b"\x00\x01bytes"}}
    assert walked == []


def test_a_value_of_another_form_is_left_to_moto_s_walk() -> None:
    with pytest.raises(dynamodb_response_items._NotPlain):
        dynamodb_response_items.attribute_map({"a": {"N": 1}})
    with pytest.raises(dynamodb_response_items._NotPlain):
        dynamodb_response_items.attribute_map({"a": {"S": "x", "N": "1"}})
