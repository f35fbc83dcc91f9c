"""A condition is parsed once per text and the bindings it names: the same answers, the same refusals."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest
from moto.dynamodb.comparisons import ConditionExpressionParser

from embedded_aws import dynamodb_condition_parses as condition_parses
from embedded_aws.dynamodb_condition_parses import ORIGINAL, remember_condition_parses
from embedded_aws.dynamodb_transactions import make_transactions_atomic
from tests.embedded_aws.dynamodb_observed import TABLE, observe

_PENDING = {":expected": {"S": "Pending"}}


def _update(key: str, condition: str, values: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {
        "TableName": TABLE,
        "Key": {"pk": {"S": key}},
        "UpdateExpression": "SET #s = :to, stamp = :at",
        "ConditionExpression": condition,
        "ExpressionAttributeNames": {"#s": "status", **more.pop("names", {})},
        "ExpressionAttributeValues": {":to": {"S": "Cancelled"}, ":at": {"S": key}, **values},
        **more,
    }


def _transaction(*updates: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return ("transact_write_items", {"TransactItems": [{"Update": update} for update in updates]})


HELD = "#s = :expected AND (attribute_exists(pk))"
SAME_ANSWERS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "one condition on many updates, other update values": [
        _transaction(*(_update(key, HELD, _PENDING) for key in "ab")),
        _transaction(_update("a", HELD, _PENDING)),  # now fails: a is Cancelled
    ],
    "the same text with another value": [
        ("update_item", _update("a", HELD, {":expected": {"S": "Running"}})),
        ("update_item", _update("a", HELD, _PENDING)),
    ],
    "a name given and never used": [
        ("update_item", _update("a", HELD, _PENDING, names={"#x": "x"})),
    ],
    "a binary value, then another": [
        ("update_item", _update("a", "blob = :b", {":b": {"B": b"\x00\x01bytes"}})),
        ("update_item", _update("b", "blob = :b", {":b": {"B": b"\x00\x02bytes"}})),
    ],
    "a condition check and a put with the same condition": [
        (
            "transact_write_items",
            {
                "TransactItems": [
                    {
                        "ConditionCheck": {
                            "TableName": TABLE,
                            "Key": {"pk": {"S": "a"}},
                            "ConditionExpression": "n < :ten",
                            "ExpressionAttributeValues": {":ten": {"N": "10"}},
                        }
                    },
                    {
                        "Put": {
                            "TableName": TABLE,
                            "Item": {"pk": {"S": "c"}, "n": {"N": "1"}},
                            "ConditionExpression": "attribute_not_exists(pk)",
                        }
                    },
                ]
            },
        ),
        (
            "put_item",
            {
                "TableName": TABLE,
                "Item": {"pk": {"S": "c"}},
                "ConditionExpression": "attribute_not_exists(pk)",
            },
        ),
    ],
}


@pytest.fixture(autouse=True)
def installed() -> None:
    make_transactions_atomic()
    remember_condition_parses()


@pytest.mark.parametrize("requests", SAME_ANSWERS.values(), ids=SAME_ANSWERS.keys())
def test_a_remembered_condition_answers_and_refuses_as_moto_s_parse_does(
    requests: list[tuple[str, dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    remembered = observe(requests)
    with monkeypatch.context() as parsing:
        parsing.setattr(ConditionExpressionParser, "_lex_condition_expression", ORIGINAL["lex"])
        parsing.setattr(ConditionExpressionParser, "parse", ORIGINAL["parse"])
        parsed = observe(requests)
    assert remembered == parsed
    assert remembered["outcomes"]


REFUSED = {
    "a value the condition names, missing": ("#s = :nowhere", {"#s": "status"}, {}),
    "a name the condition names, missing": ("#nowhere = :v", {}, {":v": {"S": "x"}}),
    "no names at all": ("#s = :v", None, {":v": {"S": "x"}}),
    "a text that does not parse": ("#s = = :v", {"#s": "status"}, {":v": {"S": "x"}}),
}


@pytest.mark.parametrize("condition", REFUSED.values(), ids=REFUSED.keys())
def test_a_condition_that_does_not_parse_raises_each_time_as_moto_s_parse_does(
    condition: tuple[str, Any, Any],
) -> None:
    def raised(parse: Any) -> tuple[type[BaseException], str]:
        with pytest.raises(Exception) as error:
            parse(ConditionExpressionParser(*condition))
        return error.type, str(error.value)

    expected = raised(ORIGINAL["parse"])
    assert [raised(ConditionExpressionParser.parse) for _ in range(2)] == [expected, expected]


def test_one_condition_on_a_transaction_s_updates_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    parses: list[str] = []

    def counted(self: Any) -> Any:
        parses.append(self.condition_expression)
        return ORIGINAL["parse"](self)

    monkeypatch.setattr(condition_parses, "_PARSES", OrderedDict())
    monkeypatch.setattr(ConditionExpressionParser, "parse", condition_parses._remembering(counted))
    text = "#s = :expected AND (attribute_exists(pk)) AND attribute_exists(open_key)"
    seen = observe([_transaction(*(_update(key, text, _PENDING) for key in "ab"))])
    assert "error" not in seen["outcomes"][0]
    # two updates, each parsed by moto's request checks and by the transaction: one parse
    assert parses.count(text) == 1
