"""moto's request checks parse an UpdateExpression text once: the same answers, the same refusals."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from embedded_aws.dynamodb_update_names import remember_update_expression_parses
from tests.embedded_aws.dynamodb_observed import TABLE, observe

# moto's response layer imports the parser without exporting it: both are reached as modules.
moto_responses: Any = importlib.import_module("moto.dynamodb.responses")
expressions: Any = importlib.import_module("moto.dynamodb.parsing.expressions")


def _update(key: str, expression: str, values: dict[str, Any], **more: Any) -> dict[str, Any]:
    params = {"TableName": TABLE, "Key": {"pk": {"S": key}}, "UpdateExpression": expression, **more}
    if values:
        params["ExpressionAttributeValues"] = values
    return params


_SET = "SET #s = :s, reason = :r REMOVE open_key"
_NAMES = {"#s": "status"}
_VALUES = {":s": {"S": "Cancelled"}, ":r": {"S": "why"}}
SAME_ANSWERS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "one expression twice": [
        ("update_item", _update(key, _SET, _VALUES, ExpressionAttributeNames=_NAMES)) for key in ("a", "b")
    ],
    "a name left unused, twice": [
        ("update_item", _update("a", _SET, _VALUES, ExpressionAttributeNames={**_NAMES, "#x": "x"}))
        for _ in range(2)
    ],
    "an expression that does not parse, twice": [
        ("update_item", _update("a", "SET = :s", {":s": {"S": "x"}})) for _ in range(2)
    ],
    "a transaction of one expression, then one with a name left unused": [
        (
            "transact_write_items",
            {
                "TransactItems": [
                    {"Update": _update(k, _SET, _VALUES, ExpressionAttributeNames=names)} for k in "ab"
                ]
            },
        )
        for names in (_NAMES, {**_NAMES, "#x": "x"})
    ],
}


@pytest.mark.parametrize("requests", SAME_ANSWERS.values(), ids=SAME_ANSWERS.keys())
def test_a_remembered_parse_answers_and_refuses_as_moto_s_parse_does(
    requests: list[tuple[str, dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    remember_update_expression_parses()
    remembered = observe(requests)
    with monkeypatch.context() as parsing:
        parsing.setattr(moto_responses, "UpdateExpressionParser", expressions.UpdateExpressionParser)
        parsed = observe(requests)
    assert remembered == parsed
    assert remembered["outcomes"]


def test_the_request_checks_parse_an_expression_text_once() -> None:
    remember_update_expression_parses()
    expression = "SET #s = :s, once_only = :r REMOVE open_key"
    first = moto_responses.UpdateExpressionParser.make(expression)
    assert moto_responses.UpdateExpressionParser.make(expression) is first
    # The backend's parser, whose tree moto's validator changes, still parses afresh.
    assert expressions.UpdateExpressionParser.make(expression) is not first
