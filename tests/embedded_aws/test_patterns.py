"""Event pattern matching as Lambda filter criteria apply it to DynamoDB stream records."""

from __future__ import annotations

import pytest

from embedded_aws.patterns import PatternError, matches, validate

BECAME_PENDING_BY_INSERT = {
    "dynamodb": {
        "NewImage": {"kind": {"S": ["scrape"]}, "status": {"S": ["Pending"]}},
        "OldImage": {"status": {"S": [{"exists": False}]}},
    }
}


def _record(new_status: str, old_status: str | None) -> dict[str, object]:
    images: dict[str, object] = {"NewImage": {"kind": {"S": "scrape"}, "status": {"S": new_status}}}
    if old_status is not None:
        images["OldImage"] = {"kind": {"S": "scrape"}, "status": {"S": old_status}}
    return {"eventName": "INSERT" if old_status is None else "MODIFY", "dynamodb": images}


def test_an_exists_false_leaf_matches_a_record_whose_parent_object_is_absent() -> None:
    # an INSERT record carries no OldImage at all: every leaf below it is absent
    assert matches(BECAME_PENDING_BY_INSERT, _record("Pending", None))


def test_an_exists_false_leaf_does_not_match_a_record_that_has_the_leaf() -> None:
    assert not matches(BECAME_PENDING_BY_INSERT, _record("Pending", "Running"))
    assert not matches(BECAME_PENDING_BY_INSERT, _record("Pending", "Pending"))


def test_a_value_leaf_under_an_absent_parent_never_matches() -> None:
    pattern = {"dynamodb": {"OldImage": {"status": {"S": ["Running"]}}}}
    assert not matches(pattern, _record("Pending", None))


def test_or_matches_when_any_alternative_matches_at_its_level() -> None:
    pattern = {
        "dynamodb": {"$or": [{"NewImage": {"status": {"S": ["Pending"]}}}, {"Keys": {"id": {"S": ["x"]}}}]}
    }
    assert matches(pattern, _record("Pending", "Running"))
    assert not matches(pattern, _record("Running", "Pending"))


def test_or_alternatives_are_and_ed_with_the_fields_beside_them() -> None:
    pattern = {
        "eventName": ["MODIFY"],
        "dynamodb": {
            "$or": [{"NewImage": {"status": {"S": ["Pending"]}}}, {"OldImage": {"status": {"S": ["Done"]}}}]
        },
    }
    assert matches(pattern, _record("Pending", "Running"))
    assert not matches(pattern, _record("Pending", None))  # an INSERT, not a MODIFY


def test_a_pattern_with_operators_off_the_leaves_or_unknown_operators_is_invalid() -> None:
    for bad in (
        {"status": {"prefix": "Pen"}},
        {"status": [{"wildcard": "P*"}]},
        {"status": [{"numeric": [">", "one"]}]},
        {"status": [{"exists": "yes"}]},
        {"status": [["Pending"]]},
        {"$or": {"status": ["Pending"]}},
    ):
        with pytest.raises(PatternError):
            validate(bad)
    validate({"status": [{"wildcard": "P*"}]}, wildcard=True)
    validate({"$or": [{"status": ["Pending"]}, {"kind": [{"prefix": "scr"}]}], "n": [{"numeric": [">", 0]}]})
