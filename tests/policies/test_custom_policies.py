"""The CKV_OUT_* checkov policies against their fixtures: exact sets of passing and failing resources.

Every fixture folder under ``fixtures/`` is a Terraform root for one rule; each resource is named
after the case it exercises (``*_ok``/``*_complete`` for fully configured ones). One checkov run
covers them all.
"""

from __future__ import annotations

import pytest

from tests.policies.checkov_report import CUSTOM_CHECK_IDS, CheckovReport, Outcomes

ESM = "aws_lambda_event_source_mapping"
UNRESOLVED = "unresolved: "


def outcomes(report: CheckovReport, check_id: str, fixture: str) -> Outcomes:
    found = report.of(check_id, fixture)
    assert found.passed or found.failed, f"{check_id} produced no result in {fixture}"
    return found


def detail_lines(found: Outcomes, address: str) -> str:
    return "\n".join(found.details.get(address, []))


def test_every_custom_policy_loads_and_runs_without_errors(fixture_report: CheckovReport) -> None:
    # GIVEN the fixtures scanned with --external-checks-dir policies
    # WHEN checkov reports
    reported = {check for check, _fixture in fixture_report.results}
    # THEN each of the eight rules produced results and no check crashed or failed to load
    assert reported == set(CUSTOM_CHECK_IDS)
    assert "Cannot load external check" not in fixture_report.stderr
    assert "Failed to run check" not in fixture_report.stderr
    assert fixture_report.summary.get("parsing_errors") == 0


def test_ckv_out_001_stream_mappings_need_bisect_retry_limit_record_age_destination_and_item_failures(
    fixture_report: CheckovReport,
) -> None:
    # GIVEN DynamoDB/Kinesis stream mappings, raw and inside module calls
    found = outcomes(fixture_report, "CKV_OUT_001", "ckv_out_001_stream_mapping")
    # THEN only the fully configured ones pass; the SQS mapping is not judged by this rule
    assert found.passed == {
        f"{ESM}.dispatcher_complete",
        f"{ESM}.kinesis_complete",
        f"module.stream_consumer_ok.{ESM}.this",
        f"module.object_stream_consumer_defaults_ok.{ESM}.this",
    }
    assert found.failed == {
        f"{ESM}.seed_2025_insert_only",
        f"{ESM}.without_report_batch_item_failures",
        f"{ESM}.unlimited_retries",
        f"{ESM}.bisect_disabled",
        f"{ESM}.without_record_age_limit",
        f"{ESM}.without_destination",
        f"{ESM}.literal_stream_arn_without_limits",
        f"{ESM}.retries_from_unset_variable",
        f"module.stream_consumer_unbounded.{ESM}.this",
        f"module.stream_consumer_no_item_failures.{ESM}.this",
        f"module.stream_consumer_unset_retries.{ESM}.this",
        f"module.object_stream_consumer_unbounded.{ESM}.this",
    }


def test_ckv_out_001_names_every_gap_of_the_seed_2025_mapping(fixture_report: CheckovReport) -> None:
    # GIVEN the seed's 2025 mapping: INSERT-only filter, batch size 10, nothing else
    found = outcomes(fixture_report, "CKV_OUT_001", "ckv_out_001_stream_mapping")
    details = detail_lines(found, f"{ESM}.seed_2025_insert_only")
    # THEN the report names each missing setting
    for attribute in (
        "bisect_batch_on_function_error",
        "maximum_retry_attempts",
        "maximum_record_age_in_seconds",
        "destination_config.on_failure.destination_arn",
        "ReportBatchItemFailures",
    ):
        assert attribute in details


def test_ckv_out_001_module_values_decide_the_result(fixture_report: CheckovReport) -> None:
    # GIVEN one module called with finite and with -1 limits
    found = outcomes(fixture_report, "CKV_OUT_001", "ckv_out_001_stream_mapping")
    details = detail_lines(found, f"module.stream_consumer_unbounded.{ESM}.this")
    # THEN the rendered caller values are what fails
    assert "maximum_retry_attempts = -1" in details
    assert "maximum_record_age_in_seconds = -1" in details


def test_ckv_out_001_reads_optional_object_defaults_and_indexed_module_outputs(
    fixture_report: CheckovReport,
) -> None:
    # GIVEN limits from an object variable's optional() defaults (checkov renders them as {}) and a
    # destination from a count-indexed module's output
    found = outcomes(fixture_report, "CKV_OUT_001", "ckv_out_001_stream_mapping")
    # THEN the defaults count as set, an override by the caller wins, and the destination resolves
    assert f"module.object_stream_consumer_defaults_ok.{ESM}.this" in found.passed
    assert detail_lines(found, f"module.object_stream_consumer_unbounded.{ESM}.this") == (
        "maximum_retry_attempts = -1 is outside 0..10000"
    )


@pytest.mark.parametrize(
    "address",
    [f"{ESM}.retries_from_unset_variable", f"module.stream_consumer_unset_retries.{ESM}.this"],
)
def test_ckv_out_001_fails_closed_on_an_unset_variable(fixture_report: CheckovReport, address: str) -> None:
    # GIVEN maximum_retry_attempts fed by a variable without value (directly or through a module)
    found = outcomes(fixture_report, "CKV_OUT_001", "ckv_out_001_stream_mapping")
    # THEN the mapping fails with a detail naming the unresolved attribute
    assert address in found.failed
    assert f"{UNRESOLVED}maximum_retry_attempts" in detail_lines(found, address)


def test_ckv_out_002_sqs_mappings_need_report_batch_item_failures(fixture_report: CheckovReport) -> None:
    # GIVEN SQS mappings, raw, by literal ARN and through a module
    found = outcomes(fixture_report, "CKV_OUT_002", "ckv_out_002_sqs_mapping")
    # THEN only mappings with ReportBatchItemFailures pass; the stream mapping is not judged here
    assert found.passed == {
        f"{ESM}.scraper_complete",
        f"{ESM}.literal_queue_arn_complete",
        f"module.queue_consumer_ok.{ESM}.this",
    }
    assert found.failed == {
        f"{ESM}.scraper_without_report_batch_item_failures",
        f"{ESM}.literal_queue_arn_empty_response_types",
        f"{ESM}.response_types_from_unset_variable",
        f"module.queue_consumer_without_item_failures.{ESM}.this",
    }


def test_ckv_out_002_unset_list_variable_is_not_read_as_an_empty_list(fixture_report: CheckovReport) -> None:
    # GIVEN function_response_types from a list variable without value (checkov renders it as [])
    found = outcomes(fixture_report, "CKV_OUT_002", "ckv_out_002_sqs_mapping")
    # THEN the detail says the attribute is unresolved, naming the variable
    details = detail_lines(found, f"{ESM}.response_types_from_unset_variable")
    assert f"{UNRESOLVED}function_response_types" in details
    assert "var.scraper_response_types" in details


def test_ckv_out_003_consumed_queues_redrive_to_a_longer_lived_dlq(fixture_report: CheckovReport) -> None:
    # GIVEN consumed queues with and without redrive, DLQs of equal, longer and unknown retention
    found = outcomes(fixture_report, "CKV_OUT_003", "ckv_out_003_queue_redrive")
    # THEN unconsumed queues are not judged, a consumed DLQ is exempt, the rest must redrive well
    assert found.passed == {
        "aws_sqs_queue.redrive_complete",
        "aws_sqs_queue.separate_redrive_resource",
        "aws_sqs_queue.drained_dlq_exempt",
        "module.work_queue_ok.aws_sqs_queue.this",
    }
    assert found.failed == {
        "aws_sqs_queue.without_redrive",
        "aws_sqs_queue.dlq_not_longer_lived",
        "aws_sqs_queue.external_dlq",
        "aws_sqs_queue.dlq_retention_from_unset_variable",
        "module.work_queue_short_dlq.aws_sqs_queue.this",
    }
    assert f"{UNRESOLVED}aws_sqs_queue.unset_retention_dlq.message_retention_seconds" in detail_lines(
        found, "aws_sqs_queue.dlq_retention_from_unset_variable"
    )


def test_ckv_out_004_visibility_timeout_is_six_times_the_consumer_timeout(
    fixture_report: CheckovReport,
) -> None:
    # GIVEN queues consumed by functions of various timeouts, raw, via an alias and across modules
    found = outcomes(fixture_report, "CKV_OUT_004", "ckv_out_004_visibility_timeout")
    # THEN each queue is compared with the timeout of the function(s) that consume it
    assert found.passed == {
        "aws_sqs_queue.six_times_ok",
        "aws_sqs_queue.exactly_six_times_ok",
        "aws_sqs_queue.defaults_ok",
        "aws_sqs_queue.consumed_through_alias_ok",
        "aws_sqs_queue.object_default_timeout_ok",
        "module.email_queue.aws_sqs_queue.this",
    }
    assert found.failed == {
        "aws_sqs_queue.below_six_times",
        "aws_sqs_queue.default_visibility_too_short",
        "aws_sqs_queue.consumer_timeout_unset",
        "aws_sqs_queue.consumer_not_declared",
        "aws_sqs_queue.two_consumers_one_too_slow",
        "aws_sqs_queue.object_overridden_timeout",
        "module.scrape_queue.aws_sqs_queue.this",
    }


def test_ckv_out_004_matches_each_module_instance_with_its_own_consumer(
    fixture_report: CheckovReport,
) -> None:
    # GIVEN two instances each of a queue module and a worker module, wired by module outputs
    found = outcomes(fixture_report, "CKV_OUT_004", "ckv_out_004_visibility_timeout")
    # THEN the scrape queue is compared with the scrape worker, not the first instance checkov links
    assert "module.scrape_worker.aws_lambda_function.this.timeout (420 s)" in detail_lines(
        found, "module.scrape_queue.aws_sqs_queue.this"
    )
    assert f"{UNRESOLVED}aws_lambda_function.unset_timeout.timeout" in detail_lines(
        found, "aws_sqs_queue.consumer_timeout_unset"
    )


def test_ckv_out_005_async_lambda_invokers_and_the_invoked_function_handle_failures(
    fixture_report: CheckovReport,
) -> None:
    # GIVEN rule targets and schedules invoking functions with and without event invoke configs
    found = outcomes(fixture_report, "CKV_OUT_005", "ckv_out_005_async_invocation")
    # THEN delivery retry + DLQ and the function's async retries + destination are all required
    assert found.passed == {
        "aws_cloudwatch_event_target.reconciler_complete",
        "aws_cloudwatch_event_target.function_dlq_ok",
        "aws_scheduler_schedule.email_send_complete",
        "module.scheduled_job_ok.aws_cloudwatch_event_target.this",
    }
    assert found.failed == {
        "aws_cloudwatch_event_target.without_retry_policy",
        "aws_cloudwatch_event_target.without_dead_letter_config",
        "aws_cloudwatch_event_target.function_without_invoke_config",
        "aws_cloudwatch_event_target.implicit_async_retries",
        "aws_cloudwatch_event_target.retries_without_destination",
        "aws_cloudwatch_event_target.target_arn_from_unset_variable",
        "aws_scheduler_schedule.email_send_without_dead_letter_config",
        "aws_scheduler_schedule.literal_lambda_arn",
        "module.scheduled_job_unset_retries.aws_cloudwatch_event_target.this",
    }
    assert f"{UNRESOLVED}arn" in detail_lines(
        found, "aws_cloudwatch_event_target.target_arn_from_unset_variable"
    )
    assert (
        f"{UNRESOLVED}module.scheduled_job_unset_retries.aws_lambda_function_event_invoke_config.this"
        ".maximum_retry_attempts"
    ) in detail_lines(found, "module.scheduled_job_unset_retries.aws_cloudwatch_event_target.this")


def test_ckv_out_009_event_targets_other_than_lambda_keep_undeliverable_events_in_a_dlq(
    fixture_report: CheckovReport,
) -> None:
    # GIVEN rule targets that deliver to a queue, a topic, a literal ARN or an unresolved one, raw and
    # in a module whose dead_letter_config is a dynamic block, beside one that invokes Lambda
    found = outcomes(fixture_report, "CKV_OUT_009", "ckv_out_009_event_target_dlq")
    # THEN only the ones with a dead-letter queue pass, and the Lambda target is left to CKV_OUT_005
    assert found.passed == {
        "aws_cloudwatch_event_target.queue_with_dlq_ok",
        "module.feed_ok.aws_cloudwatch_event_target.this",
    }
    assert found.failed == {
        "aws_cloudwatch_event_target.queue_without_dlq",
        "aws_cloudwatch_event_target.topic_without_dlq",
        "aws_cloudwatch_event_target.literal_queue_arn_without_dlq",
        "aws_cloudwatch_event_target.target_arn_from_unset_variable",
        "module.feed_without_dlq.aws_cloudwatch_event_target.this",
    }
    assert "dead_letter_config is missing" in detail_lines(
        found, "aws_cloudwatch_event_target.queue_without_dlq"
    )
    assert f"{UNRESOLVED}arn" in detail_lines(
        found, "aws_cloudwatch_event_target.target_arn_from_unset_variable"
    )
    # AND the queue target CKV_OUT_005 leaves alone (it invokes no function) is this rule's
    targets_of_005 = outcomes(fixture_report, "CKV_OUT_009", "ckv_out_005_async_invocation")
    assert "aws_cloudwatch_event_target.queue_target" in targets_of_005.failed
    assert not {t for t in targets_of_005.passed | targets_of_005.failed if "reconciler" in t}


def test_ckv_out_006_stream_pipes_need_retry_limit_bisect_and_dlq(fixture_report: CheckovReport) -> None:
    # GIVEN pipes reading DynamoDB and Kinesis streams, and one reading a queue
    found = outcomes(fixture_report, "CKV_OUT_006", "ckv_out_006_stream_pipe")
    # THEN only stream pipes are judged and only the complete ones pass
    assert found.passed == {
        "aws_pipes_pipe.dispatch_complete",
        "aws_pipes_pipe.kinesis_complete",
        "module.dispatch_pipe_ok.aws_pipes_pipe.this",
    }
    assert found.failed == {
        "aws_pipes_pipe.without_stream_parameters",
        "aws_pipes_pipe.unlimited_retries",
        "aws_pipes_pipe.without_bisect",
        "aws_pipes_pipe.without_dead_letter_config",
        "aws_pipes_pipe.retries_from_unset_variable",
        "module.dispatch_pipe_unlimited.aws_pipes_pipe.this",
    }
    assert f"{UNRESOLVED}source_parameters.dynamodb_stream_parameters.maximum_retry_attempts" in detail_lines(
        found, "aws_pipes_pipe.retries_from_unset_variable"
    )


def test_ckv_out_007_every_dead_letter_queue_has_a_visible_messages_alarm(
    fixture_report: CheckovReport,
) -> None:
    # GIVEN queues named as DLQ/destination by a queue, mapping, invoke config, function, target and pipe
    found = outcomes(fixture_report, "CKV_OUT_007", "ckv_out_007_dlq_alarm")
    # THEN each needs an ApproximateNumberOfMessagesVisible alarm naming it; other queues are not judged
    assert found.passed == {
        "aws_sqs_queue.redrive_target_alarmed",
        "aws_sqs_queue.target_dlq_metric_query_alarmed",
        "aws_sqs_queue.function_dlq_literal_name_alarmed",
        "module.queue_with_dlq_ok.aws_sqs_queue.dlq",
    }
    assert found.failed == {
        "aws_sqs_queue.stream_failures_unalarmed",
        "aws_sqs_queue.async_failures_wrong_metric",
        "aws_sqs_queue.pipe_dlq_alarm_metric_unset",
        "module.queue_with_dlq_wrong_metric.aws_sqs_queue.dlq",
    }
    assert f"{UNRESOLVED}aws_cloudwatch_metric_alarm.pipe_dlq.metric_name" in detail_lines(
        found, "aws_sqs_queue.pipe_dlq_alarm_metric_unset"
    )


def test_ckv_out_008_dynamodb_mappings_filter_on_the_dynamodb_key_only(fixture_report: CheckovReport) -> None:
    # GIVEN DynamoDB mappings with literal, JSON-text and dynamic filters, and Kinesis/SQS mappings
    found = outcomes(fixture_report, "CKV_OUT_008", "ckv_out_008_dynamodb_filter_keys")
    # THEN only DynamoDB mappings are judged, and only those filtering on `dynamodb` alone pass
    assert found.passed == {
        f"{ESM}.dynamodb_key_only_ok",
        f"{ESM}.without_filters_ok",
        f"{ESM}.literal_arn_key_only_ok",
        f"module.consumer_dynamodb_patterns_ok.{ESM}.this",
    }
    assert found.failed == {
        f"{ESM}.event_name_filter",
        f"{ESM}.second_filter_on_event_source",
        f"{ESM}.literal_arn_event_name_filter",
        f"{ESM}.pattern_from_unset_variable",
        f"module.consumer_event_name_patterns.{ESM}.this",
    }
    assert "'eventName'" in detail_lines(found, f"{ESM}.event_name_filter")
    assert "'eventSource'" in detail_lines(found, f"{ESM}.second_filter_on_event_source")
    assert "'eventName'" in detail_lines(found, f"module.consumer_event_name_patterns.{ESM}.this")
    assert detail_lines(found, f"{ESM}.pattern_from_unset_variable").startswith(
        f"{UNRESOLVED}filter_criteria.filter.pattern"
    )
