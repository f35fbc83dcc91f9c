"""The embedded AWS applies a plain UpdateExpression itself, as DynamoDB would; moto the rest."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.dynamodb.models import dynamodb_backends
from moto.dynamodb.parsing import validators

from embedded_aws import dynamodb_plain_updates
from embedded_aws.dynamodb_size_limits import enforce_dynamodb_size_limits
from tests.embedded_aws.dynamodb_observed import TABLE, observe

REGION = "eu-central-1"
ACCOUNT = "123456789012"


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    enforce_dynamodb_size_limits()  # installs the plain updates first, as every embedded AWS does
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name=REGION)
        dynamodb.create_table(
            TableName="t",
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
                    "Projection": {"ProjectionType": "KEYS_ONLY"},
                }
            ],
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        )
        dynamodb.put_item(
            TableName="t",
            Item={"pk": {"S": "a"}, "status": {"S": "Pending"}, "open_key": {"S": "k#1"}, "n": {"N": "2"}},
        )
        yield dynamodb


def _validator_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*_: Any, **__: Any) -> None:
        raise AssertionError("moto's UpdateExpressionValidator ran")

    monkeypatch.setattr(validators.UpdateExpressionValidator, "validate", refused)


def _item(dynamodb: Any) -> dict[str, Any]:
    return dict(dynamodb.get_item(TableName="t", Key={"pk": {"S": "a"}}, ConsistentRead=True)["Item"])


def _stream(dynamodb: Any) -> list[dict[str, Any]]:
    table: Any = dynamodb_backends[ACCOUNT][REGION].get_table("t")
    return [record.to_json()["dynamodb"] for record in table.stream_shard.items]


def test_a_plain_update_is_applied_without_moto_s_validator_with_its_stream_record(
    table: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _validator_refuses(monkeypatch)
    table.update_item(
        TableName="t",
        Key={"pk": {"S": "a"}},
        UpdateExpression="SET #s = :s, reason = :r REMOVE open_key ADD n :one, fresh :one",
        ConditionExpression="#s = :expected",
        ExpressionAttributeNames={"#s": "status"},
        ExpressionAttributeValues={
            ":s": {"S": "Cancelled"}, ":r": {"S": "why"}, ":one": {"N": "1"}, ":expected": {"S": "Pending"},
        },
    )  # fmt: skip
    assert _item(table) == {
        "pk": {"S": "a"}, "status": {"S": "Cancelled"}, "reason": {"S": "why"}, "n": {"N": "3"},
        "fresh": {"N": "1"},
    }  # fmt: skip
    last = _stream(table)[-1]
    assert last["OldImage"]["status"] == {"S": "Pending"} and "open_key" in last["OldImage"]
    assert last["NewImage"]["status"] == {"S": "Cancelled"} and "open_key" not in last["NewImage"]
    keys = table.query(
        TableName="t",
        IndexName="open",
        KeyConditionExpression="open_key = :k",
        ExpressionAttributeValues={":k": {"S": "k#1"}},
    )
    assert keys["Items"] == []


def test_a_failed_condition_changes_nothing_and_writes_no_stream_record(
    table: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _validator_refuses(monkeypatch)
    records = len(_stream(table))
    with pytest.raises(ClientError, match="ConditionalCheckFailed"):
        table.update_item(
            TableName="t",
            Key={"pk": {"S": "a"}},
            UpdateExpression="SET #s = :s",
            ConditionExpression="#s = :expected",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={":s": {"S": "Running"}, ":expected": {"S": "Finished"}},
        )
    assert _item(table)["status"] == {"S": "Pending"}
    assert len(_stream(table)) == records


@pytest.mark.parametrize(
    ("expression", "values", "error"),
    [
        ("SET pk = :v", {":v": {"S": "b"}}, "part of the key"),
        ("SET open_key = :v", {":v": {"N": "1"}}, "Type mismatch|mismatch"),
        ("SET a = :v, a = :v", {":v": {"S": "x"}}, "overlap"),
        ("SET a = :missing", {":v": {"S": "x"}}, "unused|not defined|:missing"),
    ],
)
def test_what_dynamodb_refuses_is_left_to_moto_which_refuses_it(
    table: Any, expression: str, values: dict[str, Any], error: str
) -> None:
    with pytest.raises(ClientError, match=error):
        table.update_item(
            TableName="t",
            Key={"pk": {"S": "a"}},
            UpdateExpression=expression,
            ExpressionAttributeValues=values,
        )
    assert _item(table)["status"] == {"S": "Pending"}


def test_an_update_that_is_not_plain_is_applied_by_moto(table: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[str] = []
    validate = validators.UpdateExpressionValidator.validate

    def counted(self: Any) -> Any:
        ran.append("validate")
        return validate(self)

    monkeypatch.setattr(validators.UpdateExpressionValidator, "validate", counted)
    for expression, values in (
        ("SET m = :m, n = n + :one", {":m": {"M": {"x": {"S": "y"}}}, ":one": {"N": "1"}}),
        ("SET m.x = :z", {":z": {"S": "z"}}),
    ):
        table.update_item(
            TableName="t",
            Key={"pk": {"S": "a"}},
            UpdateExpression=expression,
            ExpressionAttributeValues=values,
        )
    assert len(ran) == 2
    assert _item(table)["n"] == {"N": "3"} and _item(table)["m"] == {"M": {"x": {"S": "z"}}}


def _update(expression: str, values: dict[str, Any], **more: Any) -> tuple[str, dict[str, Any]]:
    params = {"TableName": TABLE, "Key": {"pk": {"S": "a"}}, "UpdateExpression": expression, **more}
    if values:
        params["ExpressionAttributeValues"] = values
    return ("update_item", params)


_CANCEL = "SET #s = :s, reason = :r REMOVE open_key ADD n :one, fresh :one"
_CANCEL_VALUES = {":s": {"S": "Cancelled"}, ":r": {"S": "why"}, ":one": {"N": "1"}}
SAME_AS_MOTO: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "SET, REMOVE and ADD, ALL_NEW": [
        _update(_CANCEL, _CANCEL_VALUES, ExpressionAttributeNames={"#s": "status"}, ReturnValues="ALL_NEW")
    ],
    "a condition that holds, UPDATED_OLD": [
        _update(
            "SET #s = :s",
            {":s": {"S": "Running"}, ":p": {"S": "Pending"}},
            ConditionExpression="#s = :p AND attribute_exists(open_key)",
            ExpressionAttributeNames={"#s": "status"},
            ReturnValues="UPDATED_OLD",
        )
    ],
    "a condition that fails": [
        _update(
            "SET #s = :s",
            {":s": {"S": "Running"}, ":f": {"S": "Finished"}},
            ConditionExpression="#s = :f",
            ExpressionAttributeNames={"#s": "status"},
        )
    ],
    "ADD to a decimal and to nothing, UPDATED_NEW": [
        _update("ADD ratio :d, fresh :d", {":d": {"N": "2.25"}}, ReturnValues="UPDATED_NEW")
    ],
    "SET of every type, ALL_OLD": [
        _update(
            "SET m = :m, l = :l, b = :b, ss = :ss, t = :t",
            {
                ":m": {"M": {"x": {"N": "1"}}},
                ":l": {"L": [{"S": "y"}]},
                ":b": {"B": b"\x01"},
                ":ss": {"SS": ["p", "q"]},
                ":t": {"BOOL": True},
            },
            ReturnValues="ALL_OLD",
        )
    ],
    "a new index key, then the key moved": [
        _update("SET open_key = :k", {":k": {"S": "k#2"}}),
        _update("REMOVE open_key", {}),
    ],
    "ADD to a string (moto refuses)": [
        _update("ADD #s :one", {":one": {"N": "1"}}, ExpressionAttributeNames={"#s": "status"})
    ],
    "in a transaction, a condition failing among updates": [
        (
            "transact_write_items",
            {
                "TransactItems": [
                    {
                        "Update": {
                            "TableName": TABLE,
                            "Key": {"pk": {"S": key}},
                            "UpdateExpression": "SET #s = :s",
                            "ConditionExpression": "#s = :p",
                            "ExpressionAttributeNames": {"#s": "status"},
                            "ExpressionAttributeValues": {":s": {"S": "Cancelled"}, ":p": {"S": status}},
                        }
                    }
                    for key, status in (("a", "Pending"), ("b", "Running"))
                ]
            },
        ),
    ],
    "in a transaction, every condition holding": [
        (
            "transact_write_items",
            {
                "TransactItems": [
                    {
                        "Update": {
                            "TableName": TABLE,
                            "Key": {"pk": {"S": key}},
                            "UpdateExpression": _CANCEL,
                            "ConditionExpression": "#s = :p",
                            "ExpressionAttributeNames": {"#s": "status"},
                            "ExpressionAttributeValues": {**_CANCEL_VALUES, ":p": {"S": "Pending"}},
                        }
                    }
                    for key in ("a", "b")
                ]
            },
        ),
    ],
}


@pytest.mark.parametrize("requests", SAME_AS_MOTO.values(), ids=SAME_AS_MOTO.keys())
def test_a_plain_update_answers_stores_and_streams_what_moto_s_update_does(
    requests: list[tuple[str, dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    enforce_dynamodb_size_limits()
    plain = observe(requests)
    with monkeypatch.context() as slow:

        def not_plain(*_: Any, **__: Any) -> None:
            raise dynamodb_plain_updates._NotPlain

        slow.setattr(dynamodb_plain_updates, "_apply_plain", not_plain)
        moto = observe(requests)
    assert plain == moto
    assert plain["outcomes"]
