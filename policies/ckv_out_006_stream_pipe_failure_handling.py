"""CKV_OUT_006: an EventBridge Pipe reading a DynamoDB or Kinesis stream bounds and parks its failures.

A pipe's stream source defaults to -1 retries (retry until the records expire), does not bisect a
failing batch and has no dead-letter queue, so one bad record blocks its shard and is then lost.
"""

from __future__ import annotations

from typing import Any

from outreach_policy_aws import STREAM_SOURCE_TYPES, arn_service
from outreach_policy_check import OutreachCheck
from outreach_policy_values import (
    MISSING,
    Problems,
    block,
    read_str,
    reference_target,
    require_int_in_range,
    require_reference,
    value,
)

PIPE_RETRY_RANGE = (0, 10_000)  # Pipes MaximumRetryAttempts: -1 (infinite) or 0..10000
STREAM_PARAMETERS = ("dynamodb_stream_parameters", "kinesis_stream_parameters")
SETTINGS = ("maximum_retry_attempts", "on_partial_batch_item_failure", "dead_letter_config.arn")


class StreamPipeFailureHandling(OutreachCheck):
    inputs = (
        "source",
        *(
            f"source_parameters.{parameters}.{setting}"
            for parameters in STREAM_PARAMETERS
            for setting in SETTINGS
        ),
    )

    def __init__(self) -> None:
        super().__init__(
            name=(
                "EventBridge Pipes with a DynamoDB/Kinesis stream source set a finite "
                "maximum_retry_attempts, on_partial_batch_item_failure = AUTOMATIC_BISECT and a "
                "dead_letter_config"
            ),
            id="CKV_OUT_006",
            supported_resources=("aws_pipes_pipe",),
        )

    def evaluate(self, conf: dict[str, Any], problems: Problems) -> bool:
        parameters_name = next(
            (name for name in STREAM_PARAMETERS if block(conf, "source_parameters", name) is not None), None
        )
        if parameters_name is None:
            if not self._source_is_stream(conf, problems):
                return False
            problems.add(
                "source_parameters has no dynamodb_stream_parameters/kinesis_stream_parameters block: "
                "retries are unlimited (-1), failed batches are not bisected and there is no "
                "dead-letter queue"
            )
            return True

        owner = f"source_parameters.{parameters_name}"
        parameters = block(conf, "source_parameters", parameters_name) or {}
        scoped = problems.child(owner, ".")
        require_int_in_range(
            parameters,
            ("maximum_retry_attempts",),
            *PIPE_RETRY_RANGE,
            scoped,
            "default -1: retried until the records expire",
        )
        if value(parameters, "on_partial_batch_item_failure") is MISSING:
            scoped.add(
                "on_partial_batch_item_failure is not set: failed batches are not split; set AUTOMATIC_BISECT"
            )
        else:
            bisect = read_str(parameters, ("on_partial_batch_item_failure",), scoped)
            if bisect is not None and bisect != "AUTOMATIC_BISECT":
                scoped.add(f"on_partial_batch_item_failure = {bisect!r} must be AUTOMATIC_BISECT")
        require_reference(
            parameters,
            ("dead_letter_config", "arn"),
            scoped,
            "records that exhaust their retries are dropped",
        )
        return True

    def _source_is_stream(self, conf: dict[str, Any], problems: Problems) -> bool:
        raw = value(conf, "source")
        view, idx = self.view, self.node
        if view is not None and idx is not None and view.resolve(idx, "source", raw, STREAM_SOURCE_TYPES):
            return True
        reference = reference_target(raw)
        if reference is not None:
            return reference[0] in STREAM_SOURCE_TYPES
        service = arn_service(raw)
        if service is not None:
            return service in {"dynamodb", "kinesis"}
        problems.unresolved("source", raw)
        return False


check = StreamPipeFailureHandling()
