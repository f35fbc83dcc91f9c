"""The applied configuration of event source mappings and pipes, typed and frozen, as the pollers run it.

Each shape is built once from an API response (``ListEventSourceMappings`` for a mapping,
``DescribePipe`` for a pipe) and passed whole; the pollers read its fields and parse nothing.
Defaults are the services' own when a field is absent
(https://docs.aws.amazon.com/lambda/latest/api/API_EventSourceMappingConfiguration.html,
https://docs.aws.amazon.com/eventbridge/latest/pipes-reference/API_PipeSourceDynamoDBStreamParameters.html):
a batch of 100 stream records or 10 messages, no batching window, and -1 (unlimited) for the retry
and record-age limits of a stream source. Two shapes are equal when the pollers would run them the
same way, which is what the discovery loop compares to decide on a restart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from embedded_aws.patterns import compile_filters

UNLIMITED = -1
REPORT_BATCH_ITEM_FAILURES = "ReportBatchItemFailures"


def _limit(value: Any) -> int:
    """A retry or age limit; absent means unlimited."""
    return UNLIMITED if value is None else int(value)


def _filters(criteria: Mapping[str, Any] | None) -> tuple[dict[str, Any], ...]:
    return tuple(compile_filters(criteria))


def _reports_batch_item_failures(mapping: Mapping[str, Any]) -> bool:
    return REPORT_BATCH_ITEM_FAILURES in (mapping.get("FunctionResponseTypes") or [])


@dataclass(frozen=True)
class StreamReadSettings:
    """How a shard of a DynamoDB stream is read, batched, filtered and retried."""

    starting_position: str
    batch_size: int
    window: float
    filters: tuple[dict[str, Any], ...]
    bisect: bool
    maximum_retry_attempts: int
    maximum_record_age: int


@dataclass(frozen=True)
class StreamMappingConfig:
    """A Lambda event source mapping on a DynamoDB stream."""

    uuid: str
    function: str
    stream_arn: str
    read: StreamReadSettings
    report_failures: bool
    on_failure: str | None

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any]) -> StreamMappingConfig:
        destination = ((mapping.get("DestinationConfig") or {}).get("OnFailure") or {}).get("Destination")
        return cls(
            uuid=mapping["UUID"],
            function=mapping["FunctionArn"],
            stream_arn=mapping["EventSourceArn"],
            read=StreamReadSettings(
                starting_position=mapping.get("StartingPosition") or "TRIM_HORIZON",
                batch_size=int(mapping.get("BatchSize") or 100),
                window=float(mapping.get("MaximumBatchingWindowInSeconds") or 0),
                filters=_filters(mapping.get("FilterCriteria")),
                bisect=bool(mapping.get("BisectBatchOnFunctionError")),
                maximum_retry_attempts=_limit(mapping.get("MaximumRetryAttempts")),
                maximum_record_age=_limit(mapping.get("MaximumRecordAgeInSeconds")),
            ),
            report_failures=_reports_batch_item_failures(mapping),
            on_failure=destination or None,
        )


@dataclass(frozen=True)
class SqsMappingConfig:
    """A Lambda event source mapping on an SQS queue."""

    uuid: str
    function: str
    queue_arn: str
    batch_size: int
    window: float
    filters: tuple[dict[str, Any], ...]
    report_failures: bool
    maximum_concurrency: int | None

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any]) -> SqsMappingConfig:
        configured = (mapping.get("ScalingConfig") or {}).get("MaximumConcurrency")
        return cls(
            uuid=mapping["UUID"],
            function=mapping["FunctionArn"],
            queue_arn=mapping["EventSourceArn"],
            batch_size=int(mapping.get("BatchSize") or 10),
            window=float(mapping.get("MaximumBatchingWindowInSeconds") or 0),
            filters=_filters(mapping.get("FilterCriteria")),
            report_failures=_reports_batch_item_failures(mapping),
            maximum_concurrency=int(configured) if configured else None,
        )


@dataclass(frozen=True)
class PipeConfig:
    """An EventBridge pipe from a DynamoDB stream to an SQS queue."""

    name: str
    arn: str
    stream_arn: str
    read: StreamReadSettings
    target: str
    template: str | None
    dead_letter: str | None
    # TargetParameters.SqsQueueParameters.MessageGroupId: a value, or a dynamic path ("$.a.b").
    message_group: str | None = None

    @classmethod
    def from_pipe(cls, pipe: Mapping[str, Any]) -> PipeConfig:
        source = pipe.get("SourceParameters") or {}
        parameters = source.get("DynamoDBStreamParameters") or {}
        return cls(
            name=pipe["Name"],
            arn=pipe["Arn"],
            stream_arn=pipe["Source"],
            read=StreamReadSettings(
                starting_position=parameters.get("StartingPosition") or "LATEST",
                batch_size=int(parameters.get("BatchSize") or 100),
                window=float(parameters.get("MaximumBatchingWindowInSeconds") or 0),
                filters=_filters(source.get("FilterCriteria")),
                bisect=parameters.get("OnPartialBatchItemFailure") == "AUTOMATIC_BISECT",
                maximum_retry_attempts=_limit(parameters.get("MaximumRetryAttempts")),
                maximum_record_age=_limit(parameters.get("MaximumRecordAgeInSeconds")),
            ),
            target=pipe["Target"],
            template=(pipe.get("TargetParameters") or {}).get("InputTemplate"),
            dead_letter=(parameters.get("DeadLetterConfig") or {}).get("Arn"),
            message_group=((pipe.get("TargetParameters") or {}).get("SqsQueueParameters") or {}).get(
                "MessageGroupId"
            ),
        )


AppliedConfig = SqsMappingConfig | StreamMappingConfig | PipeConfig


def mapping_config(mapping: Mapping[str, Any]) -> SqsMappingConfig | StreamMappingConfig | None:
    """The typed shape of a mapping by its source (queue or DynamoDB stream); None for other sources."""
    source = str(mapping.get("EventSourceArn", ""))
    if ":sqs:" in source:
        return SqsMappingConfig.from_mapping(mapping)
    if ":dynamodb:" in source and "/stream/" in source:
        return StreamMappingConfig.from_mapping(mapping)
    return None
