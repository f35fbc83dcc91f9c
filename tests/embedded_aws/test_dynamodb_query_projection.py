"""A projection of top-level names is answered from the projected attributes alone: moto's answers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from moto.dynamodb.models.dynamo_type import Item
from moto.dynamodb.models.table import Table

from embedded_aws import dynamodb_query_projection as projection
from embedded_aws.dynamodb_query_projection import ORIGINAL, project_top_level_names_directly
from tests.embedded_aws.dynamodb_observed import TABLE, fresh_table, observe

KEY = {"pk": {"S": "a"}}
_INDEX_QUERY = {
    "TableName": TABLE,
    "IndexName": "open",
    "KeyConditionExpression": "open_key = :k",
    "ExpressionAttributeValues": {":k": {"S": "k#1"}},
}
READS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "Query of an index, top-level names": [
        (
            "query",
            {
                **_INDEX_QUERY,
                "ProjectionExpression": "pk, #s, #d, #b, scores",
                "ExpressionAttributeNames": {"#s": "status", "#d": "doc", "#b": "blob"},
            },
        )
    ],
    "Query of an index, top-level names, paged": [
        ("query", {**_INDEX_QUERY, "Limit": 1, "ProjectionExpression": "pk, n"}),
        (
            "query",
            {
                **_INDEX_QUERY,
                "Limit": 1,
                "ProjectionExpression": "pk, n",
                "ExclusiveStartKey": {"pk": {"S": "a"}, "open_key": {"S": "k#1"}},
            },
        ),
    ],
    "Query naming an attribute no item has": [
        (
            "query",
            {**_INDEX_QUERY, "ProjectionExpression": "pk, #m", "ExpressionAttributeNames": {"#m": "missing"}},
        )
    ],
    "Query with a filter on an attribute it does not project": [
        (
            "query",
            {
                **_INDEX_QUERY,
                "ProjectionExpression": "pk",
                "FilterExpression": "n > :two",
                "ExpressionAttributeValues": {":k": {"S": "k#1"}, ":two": {"N": "2"}},
            },
        )
    ],
    "Query of the table, a nested path": [
        (
            "query",
            {
                "TableName": TABLE,
                "KeyConditionExpression": "pk = :a",
                "ExpressionAttributeValues": {":a": KEY["pk"]},
                "ProjectionExpression": "pk, #d.deep",
                "ExpressionAttributeNames": {"#d": "doc"},
            },
        )
    ],
    "GetItem of top-level names": [
        (
            "get_item",
            {
                "TableName": TABLE,
                "Key": KEY,
                "ProjectionExpression": "tags, #o, #z, #l",
                "ExpressionAttributeNames": {"#o": "on", "#z": "nothing", "#l": "list"},
            },
        )
    ],
    "Scan of top-level names": [("scan", {"TableName": TABLE, "ProjectionExpression": "pk, ratio, blobs"})],
}


@pytest.fixture(autouse=True)
def installed() -> None:
    project_top_level_names_directly()


def _sets_sorted(value: Any) -> Any:
    """``value`` with the members of every set sorted: DynamoDB returns a set's members in no order
    (moto's projection of a set goes through a Python set), so only the members are compared."""
    if isinstance(value, dict):
        return {
            key: sorted(member, key=repr) if key in ("SS", "NS", "BS") else _sets_sorted(member)
            for key, member in value.items()
        }
    if isinstance(value, list):
        return [_sets_sorted(member) for member in value]
    return value


def _answers(observed: dict[str, Any]) -> dict[str, Any]:
    """What a client observed, the response bodies read as JSON, sets compared by their members."""
    answers: dict[str, Any] = _sets_sorted(
        {**observed, "bodies": [json.loads(body) for body in observed["bodies"]]}
    )
    return answers


def _moto_projects(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Item, "project", ORIGINAL["project"])
    monkeypatch.setattr(Item, "__deepcopy__", ORIGINAL["deepcopy"])
    monkeypatch.setattr(Item, "size", ORIGINAL["size"])
    monkeypatch.setattr(Table, "query", ORIGINAL["query"])


@pytest.mark.parametrize("requests", READS.values(), ids=READS.keys())
def test_a_projected_read_answers_as_moto_s_projection(
    requests: list[tuple[str, dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    picked = observe(requests)
    with monkeypatch.context() as moto:
        _moto_projects(moto)
        projected = observe(requests)
    assert _answers(picked) == _answers(projected)
    assert all("error" not in outcome for outcome in picked["outcomes"])


def test_a_query_projecting_top_level_names_copies_no_whole_item_and_sizes_each_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    whole_copies: list[Any] = []
    sized: list[int] = []

    def whole_copy(self: Any, memo: dict[int, Any]) -> Any:
        whole_copies.append(self.hash_key.value)
        return ORIGINAL["deepcopy"](self, memo)

    def size(self: Any) -> int:
        sized.append(id(self))
        return int(ORIGINAL["size"](self))

    with fresh_table() as dynamodb:
        # moto's methods counted, under the embedded AWS's projection as installed
        monkeypatch.setattr(Item, "__deepcopy__", projection._deepcopy(whole_copy))
        monkeypatch.setattr(Item, "size", projection._size(size))
        (_, request), *_ = READS["Query of an index, top-level names"]
        page = dynamodb.query(**request)
        monkeypatch.undo()
    assert [set(item) for item in page["Items"]] == [{"pk", "status", "doc", "blob", "scores"}] * 2
    assert whole_copies == []
    assert len(sized) == len(set(sized)) == 2
