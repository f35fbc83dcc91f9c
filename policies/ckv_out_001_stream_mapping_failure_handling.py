"""CKV_OUT_001: a stream event source mapping bounds and reports its failures.

With the defaults a DynamoDB or Kinesis mapping retries a failing batch until its records expire
(-1 retries, -1 record age), blocking the shard for up to a day, and then drops it without a record.
"""

from __future__ import annotations

from typing import Any

from outreach_policy_aws import mapping_source_kind, require_report_batch_item_failures
from outreach_policy_check import OutreachCheck
from outreach_policy_values import Problems, is_set, read_bool, require_int_in_range, require_reference

# Lambda's documented ranges: MaximumRetryAttempts -1 (infinite) or 0..10000,
# MaximumRecordAgeInSeconds -1 (infinite) or 60..604800.
RETRY_RANGE = (0, 10_000)
RECORD_AGE_RANGE = (60, 604_800)


class StreamMappingFailureHandling(OutreachCheck):
    inputs = (
        "event_source_arn",
        "bisect_batch_on_function_error",
        "maximum_retry_attempts",
        "maximum_record_age_in_seconds",
        "destination_config.on_failure.destination_arn",
        "function_response_types",
    )

    def __init__(self) -> None:
        super().__init__(
            name=(
                "DynamoDB/Kinesis stream event source mappings set bisect_batch_on_function_error = true, "
                "finite maximum_retry_attempts and maximum_record_age_in_seconds, a "
                "destination_config.on_failure and ReportBatchItemFailures"
            ),
            id="CKV_OUT_001",
            supported_resources=("aws_lambda_event_source_mapping",),
        )

    def evaluate(self, conf: dict[str, Any], problems: Problems) -> bool:
        if mapping_source_kind(self.view, self.node, conf, problems) in {"sqs", "other"}:
            return False

        bisect = read_bool(conf, ("bisect_batch_on_function_error",), problems)
        if bisect is False or not is_set(conf, "bisect_batch_on_function_error"):
            problems.add(
                "bisect_batch_on_function_error must be true "
                "(default false: a failing batch is retried whole)"
            )
        require_int_in_range(
            conf,
            ("maximum_retry_attempts",),
            *RETRY_RANGE,
            problems,
            "default -1: retried until the records expire",
        )
        require_int_in_range(
            conf, ("maximum_record_age_in_seconds",), *RECORD_AGE_RANGE, problems, "default -1: no age limit"
        )
        require_reference(
            conf,
            ("destination_config", "on_failure", "destination_arn"),
            problems,
            "a batch that exhausts its retries is discarded without a record",
        )
        require_report_batch_item_failures(
            conf,
            problems,
            "without it a returned batchItemFailures list is ignored and the whole batch is retried",
        )
        return True


check = StreamMappingFailureHandling()
