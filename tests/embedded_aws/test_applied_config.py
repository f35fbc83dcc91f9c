"""The typed applied configuration: read once from the API entries, with the services' defaults."""

from __future__ import annotations

import json
from typing import Any

from embedded_aws.applied_config import (
    UNLIMITED,
    PipeConfig,
    SqsMappingConfig,
    StreamMappingConfig,
    StreamReadSettings,
    mapping_config,
)

QUEUE = "arn:aws:sqs:us-east-1:123456789012:scrape"
STREAM = "arn:aws:dynamodb:us-east-1:123456789012:table/tasks/stream/2026-01-01T00:00:00.000"
FUNCTION = "arn:aws:lambda:us-east-1:123456789012:function:scraper"
PENDING = {"dynamodb": {"NewImage": {"status": {"S": ["Pending"]}}}}


def _sqs_mapping(**fields: Any) -> dict[str, Any]:
    return {"UUID": "u-1", "FunctionArn": FUNCTION, "EventSourceArn": QUEUE, "State": "Enabled", **fields}


def _stream_mapping(**fields: Any) -> dict[str, Any]:
    return {"UUID": "u-2", "FunctionArn": FUNCTION, "EventSourceArn": STREAM, **fields}


def test_a_stream_mapping_without_limits_retries_without_end_and_uses_lambdas_defaults() -> None:
    config = StreamMappingConfig.from_mapping(_stream_mapping())
    assert config.read == StreamReadSettings(
        starting_position="TRIM_HORIZON",
        batch_size=100,
        window=0.0,
        filters=(),
        bisect=False,
        maximum_retry_attempts=UNLIMITED,
        maximum_record_age=UNLIMITED,
    )
    assert not config.report_failures
    assert config.on_failure is None


def test_a_stream_mapping_keeps_its_applied_settings_and_parses_its_filters_once() -> None:
    config = StreamMappingConfig.from_mapping(
        _stream_mapping(
            StartingPosition="LATEST",
            BatchSize=10,
            MaximumBatchingWindowInSeconds=5,
            FilterCriteria={"Filters": [{"Pattern": json.dumps(PENDING)}]},
            BisectBatchOnFunctionError=True,
            MaximumRetryAttempts=3,
            MaximumRecordAgeInSeconds=3600,
            FunctionResponseTypes=["ReportBatchItemFailures"],
            DestinationConfig={"OnFailure": {"Destination": "arn:aws:s3:::failures"}},
        )
    )
    assert config.read == StreamReadSettings("LATEST", 10, 5.0, (PENDING,), True, 3, 3600)
    assert config.report_failures
    assert config.on_failure == "arn:aws:s3:::failures"


def test_an_sqs_mapping_defaults_to_batches_of_ten_and_no_concurrency_cap() -> None:
    config = SqsMappingConfig.from_mapping(_sqs_mapping())
    assert (config.batch_size, config.window, config.maximum_concurrency) == (10, 0.0, None)
    assert not config.report_failures


def test_a_pipe_starts_at_latest_and_bisects_only_with_automatic_bisect() -> None:
    pipe = {
        "Name": "dispatch",
        "Arn": "arn:aws:pipes:us-east-1:123456789012:pipe/dispatch",
        "Source": STREAM,
        "Target": QUEUE,
        "SourceParameters": {"DynamoDBStreamParameters": {"MaximumRetryAttempts": 2}},
    }
    config = PipeConfig.from_pipe(pipe)
    assert config.read.starting_position == "LATEST"
    assert (config.read.maximum_retry_attempts, config.read.maximum_record_age) == (2, UNLIMITED)
    assert not config.read.bisect
    assert (config.template, config.dead_letter) == (None, None)
    bisecting = {"DynamoDBStreamParameters": {"OnPartialBatchItemFailure": "AUTOMATIC_BISECT"}}
    assert PipeConfig.from_pipe({**pipe, "SourceParameters": bisecting}).read.bisect


def test_a_mapping_that_changed_only_its_state_fields_is_the_same_configuration() -> None:
    before = mapping_config(_sqs_mapping(LastModified="t1", StateTransitionReason="USER_INITIATED"))
    after = mapping_config(_sqs_mapping(LastModified="t2", State="Updating", LastProcessingResult="OK"))
    assert before == after


def test_a_changed_setting_is_a_different_configuration() -> None:
    applied = mapping_config(_sqs_mapping(ScalingConfig={"MaximumConcurrency": 16}))
    lowered = mapping_config(_sqs_mapping(ScalingConfig={"MaximumConcurrency": 4}))
    without_reports = mapping_config(_sqs_mapping(FunctionResponseTypes=[]))
    with_reports = mapping_config(_sqs_mapping(FunctionResponseTypes=["ReportBatchItemFailures"]))
    assert applied != lowered
    assert without_reports != with_reports


def test_a_mapping_is_typed_by_its_source_and_other_sources_are_not_run() -> None:
    assert isinstance(mapping_config(_sqs_mapping()), SqsMappingConfig)
    assert isinstance(mapping_config(_stream_mapping()), StreamMappingConfig)
    kinesis = "arn:aws:kinesis:us-east-1:123456789012:stream/events"
    assert mapping_config(_sqs_mapping(EventSourceArn=kinesis)) is None
