"""A for_each entry's blocks rendered from the source: dynamic blocks per item, iterators by name."""

from __future__ import annotations

from typing import Any

import pytest

from tests.policies.test_policy_expressions import _load

_load("outreach_policy_source")
entry_blocks = _load("outreach_policy_entry_blocks")
expressions = _load("outreach_policy_expressions")

PIPE = """
  name = each.key
  dynamic "source_parameters" {
    for_each = try([each.value.source_parameters], [])
    content {
      dynamic "dynamodb_stream_parameters" {
        for_each = try([source_parameters.value.dynamodb_stream_parameters], [])
        content {
          maximum_retry_attempts = try(dynamodb_stream_parameters.value.maximum_retry_attempts, null)
          dynamic "dead_letter_config" {
            for_each = try([dynamodb_stream_parameters.value.dead_letter_config], [])
            content {
              arn = dead_letter_config.value.arn
            }
          }
        }
      }
      dynamic "sqs_queue_parameters" {
        for_each = try([source_parameters.value.sqs_queue_parameters], [])
        content {
          batch_size = sqs_queue_parameters.value.batch_size
        }
      }
    }
  }
"""


def _render(body: str, name: str, each_value: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    def scope(root: str, attribute: str) -> Any:
        if root == "each" and attribute == "value":
            return each_value
        raise expressions.UnknownValueError(f"{root}.{attribute}")

    def settle(value: Any) -> Any:
        return expressions.rendered(value)

    def text_of(value: Any) -> str | None:
        return value if isinstance(value, str) and value.startswith("aws_") else None

    found: dict[str, Any] = {}
    blocks = entry_blocks.render_blocks(
        body,
        name,
        lambda text, bound: expressions.evaluate_expression(text, scope, bound),
        settle,
        text_of,
        found,
    )
    return blocks, found


def test_nested_dynamic_blocks_render_once_per_item_with_their_iterators() -> None:
    # GIVEN a stream pipe entry with retries and a dead-letter queue, and no SQS parameters
    entry = {
        "source_parameters": {
            "dynamodb_stream_parameters": {
                "maximum_retry_attempts": 3,
                "dead_letter_config": {"arn": "aws_sqs_queue.failures.arn"},
            }
        }
    }
    # WHEN its source_parameters block is rendered
    blocks, found = _render(PIPE, "source_parameters", entry)
    # THEN the stream block holds the entry's values, the absent SQS block is left out, and the
    # dead-letter reference is reported by its path
    assert blocks == [
        {
            "dynamodb_stream_parameters": [
                {
                    "maximum_retry_attempts": [3],
                    "dead_letter_config": [{"arn": ["aws_sqs_queue.failures.arn"]}],
                }
            ]
        }
    ]
    assert found == {
        "source_parameters.dynamodb_stream_parameters.dead_letter_config.arn": "aws_sqs_queue.failures.arn"
    }


def test_a_dynamic_block_whose_for_each_is_unknown_is_not_rendered() -> None:
    body = (
        'dynamic "retry_policy" {\n  for_each = var.unknown\n'
        "  content {\n    maximum_retry_attempts = 1\n  }\n}"
    )
    with pytest.raises(expressions.UnknownValueError):
        _render(body, "retry_policy", {})


def test_two_blocks_of_one_name_are_not_rendered() -> None:
    body = (
        "filter_criteria {\n  filter {\n    pattern = each.value.a\n  }\n"
        "  filter {\n    pattern = each.value.b\n  }\n}"
    )
    with pytest.raises(expressions.UnknownValueError):
        _render(body, "filter_criteria", {"a": "x", "b": "y"})
