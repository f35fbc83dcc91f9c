"""CKV_OUT_002: an SQS event source mapping enables ReportBatchItemFailures.

Without it Lambda ignores the batchItemFailures a handler returns and deletes every message of a
batch whose invocation returned, including those the handler meant to have redelivered.
"""

from __future__ import annotations

from typing import Any

from outreach_policy_aws import mapping_source_kind, require_report_batch_item_failures
from outreach_policy_check import OutreachCheck
from outreach_policy_values import Problems


class SqsMappingReportsBatchItemFailures(OutreachCheck):
    inputs = ("event_source_arn", "function_response_types")

    def __init__(self) -> None:
        super().__init__(
            name="SQS event source mappings include ReportBatchItemFailures in function_response_types",
            id="CKV_OUT_002",
            supported_resources=("aws_lambda_event_source_mapping",),
        )

    def evaluate(self, conf: dict[str, Any], problems: Problems) -> bool:
        if mapping_source_kind(self.view, self.node, conf, problems) in {"stream", "other"}:
            return False
        require_report_batch_item_failures(
            conf,
            problems,
            "without it Lambda deletes every message of a batch whose invocation returned, "
            "ignoring batchItemFailures",
        )
        return True


check = SqsMappingReportsBatchItemFailures()
