"""Invalid filter patterns are refused when the mapping or pipe is created, never while matching."""

from __future__ import annotations

import json
from typing import Any

import botocore.exceptions
import pytest

from embedded_aws.base import client
from tests.embedded_aws.conftest import Lab

pytestmark = pytest.mark.e2e

VALID = {"dynamodb": {"NewImage": {"status": {"S": ["Pending"]}}}}
INVALID = [
    {"dynamodb": {"NewImage": {"status": {"S": {"prefix": "Pen"}}}}},  # an operator outside a leaf list
    {"dynamodb": {"NewImage": {"status": {"S": [{"wildcard": "Pend*"}]}}}},  # a bus-only operator
    {"dynamodb": {"NewImage": {"status": {"S": [{"cidr": "10.0.0.0/8"}]}}}},  # not a filter operator
    {"$or": [{"eventName": ["INSERT"]}]},  # $or needs alternatives
]


def _criteria(pattern: Any) -> dict[str, Any]:
    return {"Filters": [{"Pattern": json.dumps(pattern)}]}


@pytest.mark.parametrize("pattern", INVALID)
def test_an_event_source_mapping_with_an_invalid_filter_pattern_is_refused_at_creation(
    lab: Lab, pattern: Any
) -> None:
    # GIVEN a function and a stream
    lab.function("dispatcher")
    stream = lab.table("tasks")
    # WHEN a mapping is created with an invalid pattern THEN Lambda refuses it and keeps nothing
    with pytest.raises(botocore.exceptions.ClientError) as refused:
        lab.lam.create_event_source_mapping(
            FunctionName="dispatcher",
            EventSourceArn=stream,
            StartingPosition="TRIM_HORIZON",
            FilterCriteria=_criteria(pattern),
        )
    assert refused.value.response["Error"]["Code"] == "InvalidParameterValueException"
    assert lab.lam.list_event_source_mappings(FunctionName="dispatcher")["EventSourceMappings"] == []


def test_an_event_source_mapping_update_with_an_invalid_filter_pattern_is_refused(lab: Lab) -> None:
    # GIVEN a mapping with a valid pattern
    lab.function("dispatcher")
    stream = lab.table("tasks")
    uuid = lab.mapping(
        FunctionName="dispatcher",
        EventSourceArn=stream,
        StartingPosition="TRIM_HORIZON",
        FilterCriteria=_criteria(VALID),
    )["UUID"]
    # WHEN it is updated with an invalid one THEN the update is refused and the valid pattern stays
    with pytest.raises(botocore.exceptions.ClientError) as refused:
        lab.lam.update_event_source_mapping(UUID=uuid, FilterCriteria=_criteria(INVALID[0]))
    assert refused.value.response["Error"]["Code"] == "InvalidParameterValueException"
    kept = lab.lam.get_event_source_mapping(UUID=uuid)["FilterCriteria"]["Filters"][0]["Pattern"]
    assert json.loads(kept) == VALID


def test_a_pipe_with_an_invalid_filter_pattern_is_refused_at_creation(lab: Lab) -> None:
    # GIVEN a stream and a queue
    stream = lab.table("tasks")
    _, queue_arn, _ = lab.queue("scrape")
    pipes = client("pipes", lab.endpoint)
    # WHEN a pipe is created with a wildcard filter THEN Pipes refuses it and keeps nothing
    with pytest.raises(botocore.exceptions.ClientError) as refused:
        pipes.create_pipe(
            Name="dispatch",
            RoleArn=lab.role,
            Source=stream,
            SourceParameters={
                "FilterCriteria": _criteria(INVALID[1]),
                "DynamoDBStreamParameters": {"StartingPosition": "TRIM_HORIZON"},
            },
            Target=queue_arn,
        )
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert pipes.list_pipes()["Pipes"] == []


def test_a_dynamodb_mapping_filtering_on_a_key_other_than_dynamodb_is_refused(lab: Lab) -> None:
    # GIVEN a function and a stream
    lab.function("dispatcher")
    stream = lab.table("tasks")
    # WHEN a mapping filters on the record's eventName (the top level, outside the dynamodb key)
    top_level = {"eventName": ["INSERT"], "dynamodb": {"NewImage": {"status": {"S": ["Pending"]}}}}
    with pytest.raises(botocore.exceptions.ClientError) as refused:
        lab.lam.create_event_source_mapping(
            FunctionName="dispatcher",
            EventSourceArn=stream,
            StartingPosition="TRIM_HORIZON",
            FilterCriteria=_criteria(top_level),
        )
    # THEN Lambda refuses it, and the same pattern on the dynamodb key alone is accepted
    assert refused.value.response["Error"]["Code"] == "InvalidParameterValueException"
    assert "dynamodb key only" in refused.value.response["Error"]["Message"]
    lab.mapping(
        FunctionName="dispatcher",
        EventSourceArn=stream,
        StartingPosition="TRIM_HORIZON",
        FilterCriteria=_criteria({"dynamodb": top_level["dynamodb"]}),
    )
