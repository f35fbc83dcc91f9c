"""CKV_OUT_008: a DynamoDB stream event source mapping filters on the ``dynamodb`` key only.

DynamoDB event source mappings only support filtering on the record's ``dynamodb`` key
(https://docs.aws.amazon.com/lambda/latest/dg/with-ddb-filtering.html). A pattern on ``eventName``
or any other top-level key is not what AWS evaluates, so the mapping would not select the records
the configuration promises; "a task was inserted" is told by ``dynamodb.OldImage`` being absent.
"""

from __future__ import annotations

import json
from typing import Any

from outreach_policy_aws import stream_source_service
from outreach_policy_check import OutreachCheck
from outreach_policy_values import MISSING, Problems, block, value

ALLOWED_TOP_LEVEL_KEYS = frozenset({"dynamodb"})


def filter_patterns(conf: dict[str, Any], problems: Problems) -> list[dict[str, Any]]:
    """The mapping's filter patterns as JSON objects; one that cannot be read is recorded as unresolved.

    Literal ``filter`` blocks are read as rendered. A ``dynamic "filter"`` block whose content is
    ``pattern = filter.value`` is read from its ``for_each`` list, which checkov renders (the filter
    blocks it expands from it keep the text ``filter.value``).
    """
    criteria = block(conf, "filter_criteria")
    if criteria is None:
        return []
    raw_patterns = _dynamic_filter_patterns(criteria, problems)
    if raw_patterns is None:
        filters = criteria.get("filter", [])
        entries = filters if isinstance(filters, list) else [filters]
        raw_patterns = [value(entry, "pattern") if isinstance(entry, dict) else MISSING for entry in entries]
    patterns: list[dict[str, Any]] = []
    for raw in raw_patterns:
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except ValueError:
                problems.unresolved("filter_criteria.filter.pattern", raw)
                continue
        if not isinstance(raw, dict):
            problems.unresolved("filter_criteria.filter.pattern", raw)
            continue
        patterns.append(raw)
    return patterns


def _dynamic_filter_patterns(criteria: dict[str, Any], problems: Problems) -> list[Any] | None:
    """The patterns of a ``dynamic "filter"`` block; None when the block has none."""
    dynamics = criteria.get("dynamic", [])
    for dynamic in dynamics if isinstance(dynamics, list) else [dynamics]:
        spec = dynamic.get("filter") if isinstance(dynamic, dict) else None
        if not isinstance(spec, dict):
            continue
        pattern = value(spec, "content", "pattern")
        items = spec.get("for_each")
        if pattern != "filter.value":
            problems.unresolved("filter_criteria.dynamic.filter.content.pattern", pattern)
            return []
        if not isinstance(items, list):
            problems.unresolved("filter_criteria.dynamic.filter.for_each", items)
            return []
        return list(items)
    return None


class DynamoDbMappingFiltersOnDynamodbKey(OutreachCheck):
    # filter_criteria is read here, dynamic blocks included, rather than completed by the base.
    inputs = ("event_source_arn",)

    def __init__(self) -> None:
        super().__init__(
            name="DynamoDB stream event source mapping filter patterns use only the top-level dynamodb key",
            id="CKV_OUT_008",
            supported_resources=("aws_lambda_event_source_mapping",),
        )

    def evaluate(self, conf: dict[str, Any], problems: Problems) -> bool:
        if stream_source_service(self.view, self.node, conf, problems) != "dynamodb":
            return False
        for pattern in filter_patterns(conf, problems):
            for key in sorted(set(pattern) - ALLOWED_TOP_LEVEL_KEYS):
                problems.add(
                    f"filter pattern key {key!r}: DynamoDB mappings filter on the dynamodb key only "
                    "(express an insert as dynamodb.OldImage absent)"
                )
        return True


check = DynamoDbMappingFiltersOnDynamodbKey()
