"""CKV_OUT_004: a consumed queue's visibility timeout is at least six times the function timeout.

AWS Lambda Developer Guide ("Creating and configuring an Amazon SQS event source mapping"): set the
source queue's visibility timeout to at least six times the function timeout, so that Lambda can
retry a throttled batch before the messages reappear; a function timeout above the visibility
timeout is rejected when the mapping is created. The rule compares numbers of two resources, which a
YAML policy cannot do: it follows the mapping's references in checkov's resource graph, through
module variables and outputs, to the queue and the function.
"""

from __future__ import annotations

from typing import Any

from outreach_policy_aws import consuming_mappings, functions_named
from outreach_policy_check import OutreachCheck
from outreach_policy_evaluation import effective, flag_unset_variables
from outreach_policy_values import MISSING, Problems, read_int, value

FACTOR = 6
DEFAULT_VISIBILITY_SECONDS = 30  # SQS default VisibilityTimeout
DEFAULT_FUNCTION_TIMEOUT_SECONDS = 3  # Lambda default timeout


class QueueVisibilityCoversFunctionTimeout(OutreachCheck):
    inputs = ("visibility_timeout_seconds",)

    def __init__(self) -> None:
        super().__init__(
            name=(
                "SQS queues consumed by a Lambda function have visibility_timeout_seconds >= 6 x the "
                "consuming function's timeout"
            ),
            id="CKV_OUT_004",
            supported_resources=("aws_sqs_queue",),
        )

    def evaluate(self, conf: dict[str, Any], problems: Problems) -> bool:
        graph = self.require_graph(problems)
        if graph is None:
            return True
        view, idx = graph
        mappings = consuming_mappings(view, idx)
        if not mappings:
            return False

        visibility = read_int(conf, ("visibility_timeout_seconds",), problems)
        if value(conf, "visibility_timeout_seconds") in (MISSING, None):
            visibility = DEFAULT_VISIBILITY_SECONDS
        for mapping in mappings:
            mapping_conf = view.conf(mapping)
            rendered = value(mapping_conf, "function_name")
            functions = functions_named(view, mapping, "function_name", rendered)
            if len(functions) != 1:
                problems.add(
                    f"{view.address(mapping)} consumes this queue, but its function_name {rendered!r} does "
                    "not name exactly one aws_lambda_function of this configuration, so its timeout cannot "
                    "be compared"
                )
                continue
            function = functions[0]
            function_conf = effective(view, function, ("timeout",))
            function_problems = problems.child(view.address(function))
            flag_unset_variables(view, function, ("timeout",), function_problems)
            timeout = read_int(function_conf, ("timeout",), function_problems)
            if function_problems:
                continue
            if value(function_conf, "timeout") in (MISSING, None):
                timeout = DEFAULT_FUNCTION_TIMEOUT_SECONDS
            if visibility is not None and timeout is not None and visibility < FACTOR * timeout:
                problems.add(
                    f"visibility_timeout_seconds = {visibility} is below {FACTOR} x "
                    f"{view.address(function)}.timeout ({timeout} s) = {FACTOR * timeout} s"
                )
        return True


check = QueueVisibilityCoversFunctionTimeout()
