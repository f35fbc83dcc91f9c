"""The expression subset the policies evaluate to decide instances: exact results, and Unknown outside it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

POLICIES = Path(__file__).resolve().parents[2] / "policies"


def _load(name: str) -> ModuleType:
    # checkov loads policy helpers by plain file name; the evaluator has no checkov dependency.
    spec = importlib.util.spec_from_file_location(name, POLICIES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file executes
    spec.loader.exec_module(module)
    return module


_load("outreach_policy_expression_values")  # what the evaluator imports by plain file name
expressions = _load("outreach_policy_expressions")
VARIABLES: dict[str, Any] = {
    "create": True,
    "create_dlq": False,
    "mappings": {"jobs": {"arn": "arn:aws:sqs:eu-west-1:123456789012:jobs"}, "audit": {"batch_size": 5}},
    "empty": {},
}


def scope(root: str, name: str) -> Any:
    if root == "var" and name in VARIABLES:
        return VARIABLES[name]
    if root == "each" and name in {"key", "value"}:
        return "jobs" if name == "key" else VARIABLES["mappings"]["jobs"]
    raise expressions.UnknownValueError(f"{root}.{name}")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("var.create ? 1 : 0", 1),
        ("var.create && var.create_dlq ? 1 : 0", 0),
        ("!var.create_dlq", True),
        ("var.create_dlq && var.not_declared ? 1 : 0", 0),  # a decided && ignores its right side
        ("{ for k, v in var.mappings : k => v if var.create_dlq }", {}),
        ("length({ for k, v in var.mappings : k => v if var.create })", 2),
        ("try(each.value.arn, null)", "arn:aws:sqs:eu-west-1:123456789012:jobs"),
        ("try(each.value.batch_size, null)", None),
        (
            'lookup(each.value, "destination", null) != null ? aws_x.y[each.value.destination].arn '
            ": each.value.arn",
            "arn:aws:sqs:eu-west-1:123456789012:jobs",
        ),
        ("try(each.value.destination, null) != null ? [true] : []", []),
        ("coalesce(null, 30)", 30),
        (
            'jsonencode({ maxReceiveCount = 5, "deadLetterTargetArn" = "arn:aws:sqs:eu-west-1:1:dlq" })',
            {"maxReceiveCount": 5, "deadLetterTargetArn": "arn:aws:sqs:eu-west-1:1:dlq"},
        ),
    ],
)
def test_the_instance_deciding_expressions_evaluate_exactly(text: str, expected: Any) -> None:
    assert expressions.rendered(expressions.evaluate_expression(text, scope)) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the eventbridge module's targets local: one list per rule, flattened, each entry merged
        (
            'flatten([for index, rule in var.mappings : [for t in [rule] : merge(t, { "rule" = index })] '
            "if length(var.mappings) != 0])",
            [
                {"arn": "arn:aws:sqs:eu-west-1:123456789012:jobs", "rule": "jobs"},
                {"batch_size": 5, "rule": "audit"},
            ],
        ),
        ("flatten([for index, rule in var.empty : [rule]])", []),
        ('[for k in keys(var.mappings) : k if k != "jobs"]', ["audit"]),
        ('"${var.create ? "on" : "off"}-${length(var.mappings)}"', "on-2"),
        ('"${replace(each.key, "_", "-")}-schedule"', '"${replace(each.key, "_", "-")}-schedule"'),
        ("concat([1], tolist([2, 3]))", [1, 2, 3]),
        ('toset(["a", "b", "a"])', ["a", "b"]),
        ('contains(["nightly"], "nightly") ? 1 : 0', 1),
    ],
)
def test_the_collection_shapes_of_registry_modules_evaluate_exactly(text: str, expected: Any) -> None:
    assert expressions.rendered(expressions.evaluate_expression(text, scope)) == expected


@pytest.mark.parametrize(
    "text",
    [
        "{ for k, v in var.not_declared : v.name => v if var.create_dlq }",
        'flatten([for k, v in local.not_rendered : merge(v, { "name" = k }) if var.create_dlq])',
        "[for v in module.queue.arns : v if !var.create]",
    ],
)
def test_a_for_expression_filtered_by_a_false_switch_is_empty_whatever_its_collection(text: str) -> None:
    assert expressions.rendered(expressions.evaluate_expression(text, scope)) in ({}, [])


def test_a_dynamic_block_iterator_is_read_through_its_bound_name() -> None:
    bound = {"source_parameters": {"key": 0, "value": {"batch_size": 5}}}
    result = expressions.evaluate_expression("try(source_parameters.value.batch_size, null)", scope, bound)
    assert result == 5


def test_a_reference_to_another_block_is_kept_as_its_text() -> None:
    result = expressions.evaluate_expression("{ dlq = module.orders_dlq.queue_arn }", scope)
    assert expressions.rendered(result) == {"dlq": "module.orders_dlq.queue_arn"}


@pytest.mark.parametrize(
    "text",
    [
        "var.not_declared ? 1 : 0",  # a name without a value
        "module.queue.arn == null ? 1 : 0",  # a comparison with another block's attribute
        'zipmap(["a"], [var.create])',  # a function outside the subset
        "{ for k, v in var.not_declared : k => v if v.enabled }",  # the condition reads the entry
        "{ for k, v in var.not_declared : k => v if var.create }",  # unknown and not filtered out
        "var.mappings ? 1 : 0",  # a condition that is not a boolean
    ],
)
def test_an_expression_outside_the_subset_is_unknown(text: str) -> None:
    with pytest.raises(expressions.UnknownValueError):
        expressions.evaluate_expression(text, scope)
