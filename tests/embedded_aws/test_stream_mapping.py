"""DynamoDB stream event source mapping semantics of the local poller."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from embedded_aws.applied_config import StreamMappingConfig
from embedded_aws.clock import VirtualClock
from embedded_aws.runtime import FunctionRuntime
from embedded_aws.stream_poller import StreamMappingPoller
from tests.embedded_aws.conftest import Lab, wait_for

pytestmark = pytest.mark.e2e

BECOMES_PENDING = {
    "Filters": [
        {
            "Pattern": json.dumps(
                {
                    "dynamodb": {
                        "NewImage": {"kind": {"S": ["scrape"]}, "status": {"S": ["Pending"]}},
                        "OldImage": {"status": {"S": [{"exists": False}]}},
                    },
                }
            )
        },
        {
            "Pattern": json.dumps(
                {
                    "dynamodb": {
                        "NewImage": {"kind": {"S": ["scrape"]}, "status": {"S": ["Pending"]}},
                        "OldImage": {"status": {"S": [{"anything-but": ["Pending"]}]}},
                    },
                }
            )
        },
    ]
}


@pytest.fixture
def pollers() -> Iterator[list[StreamMappingPoller]]:
    started: list[StreamMappingPoller] = []
    yield started
    for poller in started:
        poller.stop()


def _start(
    lab: Lab,
    runtime: FunctionRuntime,
    clock: VirtualClock,
    pollers: list[StreamMappingPoller],
    **mapping: Any,
) -> StreamMappingPoller:
    config = StreamMappingConfig.from_mapping(lab.mapping(**mapping))
    poller = StreamMappingPoller(config, runtime, clock, lab.endpoint)
    poller.start()
    pollers.append(poller)
    return poller


def _delivered(lab: Lab) -> list[str]:
    return [b["task_id"] for i in lab.invocations() for b in i["bodies"]]


def test_filter_passes_only_tasks_that_become_pending_in_shard_order(
    lab: Lab, runtime: FunctionRuntime, clock: VirtualClock, pollers: list[StreamMappingPoller]
) -> None:
    # GIVEN the project's "scrape task becomes Pending" filter and a mix of writes
    fn = lab.function("dispatcher")
    stream = lab.table("tasks")
    lab.put("tasks", "t1", kind="scrape", status="Pending")  # INSERT Pending: passes
    lab.put("tasks", "e1", kind="email", status="Pending")  # email: dropped
    lab.put("tasks", "t2", kind="scrape", status="Running")  # INSERT Running: dropped
    lab.put("tasks", "t2", kind="scrape", status="Pending")  # Running -> Pending: passes
    lab.put("tasks", "t1", kind="scrape", status="Pending", note="x")  # stays Pending: dropped
    lab.put("tasks", "t3", kind="scrape", status="Pending")  # passes
    # WHEN the mapping reads the stream from the trim horizon
    poller = _start(
        lab,
        runtime,
        clock,
        pollers,
        FunctionName=fn,
        EventSourceArn=stream,
        StartingPosition="TRIM_HORIZON",
        BatchSize=2,
        FilterCriteria=BECOMES_PENDING,
    )
    wait_for(lambda: len(_delivered(lab)) == 3)
    # THEN exactly the three transitions arrive, in stream order, at most 2 per batch
    assert _delivered(lab) == ["t1", "t2", "t3"]
    assert poller.stats.records_filtered_out == 3
    assert poller.stats.max_batch <= 2


def test_latest_starting_position_skips_records_written_before_the_mapping(
    lab: Lab, runtime: FunctionRuntime, clock: VirtualClock, pollers: list[StreamMappingPoller]
) -> None:
    # GIVEN a record written before the mapping starts
    fn = lab.function("latest")
    stream = lab.table("latest")
    lab.put("latest", "old", kind="scrape", status="Pending")
    # WHEN a LATEST mapping starts and a new record arrives
    poller = _start(
        lab,
        runtime,
        clock,
        pollers,
        FunctionName=fn,
        EventSourceArn=stream,
        StartingPosition="LATEST",
        BatchSize=10,
    )
    wait_for(lambda: bool(poller.consumers))
    wait_for(
        lambda: poller.stats.records_in == 0 and next(iter(poller.consumers.values()))._iterator is not None
    )
    lab.put("latest", "new", kind="scrape", status="Pending")
    wait_for(lambda: len(_delivered(lab)) == 1)
    # THEN only the new record is delivered
    assert _delivered(lab) == ["new"]


def test_partial_failure_checkpoints_before_the_lowest_reported_sequence_number(
    lab: Lab, runtime: FunctionRuntime, clock: VirtualClock, pollers: list[StreamMappingPoller]
) -> None:
    # GIVEN records 201, 202, 203 in one batch where the handler reports 202 once
    source = """
import json, os
def handler(event, context):
    ids = [r["dynamodb"]["Keys"]["task_id"]["S"] for r in event["Records"]]
    path = os.environ["RECORD_PATH"]
    seen = open(path).read()
    with open(path, "a") as h:
        h.write(json.dumps({"bodies": [{"task_id": i} for i in ids]}) + "\\n")
    for r, i in zip(event["Records"], ids):
        if i == "202" and '"202"' not in seen:
            return {"batchItemFailures": [{"itemIdentifier": r["dynamodb"]["SequenceNumber"]}]}
    return {"batchItemFailures": []}
"""
    fn = lab.function("checkpoint", source)
    stream = lab.table("seq")
    for task in ("201", "202", "203"):
        lab.put("seq", task, kind="scrape", status="Pending")
    # WHEN the mapping with ReportBatchItemFailures delivers them
    poller = _start(
        lab,
        runtime,
        clock,
        pollers,
        FunctionName=fn,
        EventSourceArn=stream,
        StartingPosition="TRIM_HORIZON",
        BatchSize=10,
        MaximumBatchingWindowInSeconds=1,
        FunctionResponseTypes=["ReportBatchItemFailures"],
        MaximumRetryAttempts=2,
    )
    wait_for(lambda: len(lab.invocations()) == 2)
    # THEN the retry starts at 202: 201 is not delivered again, 203 is
    batches = [[b["task_id"] for b in i["bodies"]] for i in lab.invocations()]
    assert batches == [["201", "202", "203"], ["202", "203"]]
    assert poller.stats.reported_failures == 1


def test_bisect_isolates_a_poison_record_and_sends_it_to_the_s3_failure_bucket(
    lab: Lab, runtime: FunctionRuntime, clock: VirtualClock, pollers: list[StreamMappingPoller]
) -> None:
    # GIVEN 8 records of which one always makes the handler raise, bisect on, 2 retries, S3 on failure
    fn = lab.function("bisect")
    stream = lab.table("bisect")
    lab.s3.create_bucket(Bucket="failures")
    for index in range(8):
        extra = {"raise": "yes"} if index == 5 else {}
        lab.put("bisect", f"t{index}", kind="scrape", status="Pending", **extra)
    # WHEN the mapping processes the batch
    poller = _start(
        lab,
        runtime,
        clock,
        pollers,
        FunctionName=fn,
        EventSourceArn=stream,
        StartingPosition="TRIM_HORIZON",
        BatchSize=8,
        MaximumBatchingWindowInSeconds=1,
        BisectBatchOnFunctionError=True,
        MaximumRetryAttempts=2,
        DestinationConfig={"OnFailure": {"Destination": "arn:aws:s3:::failures"}},
    )
    wait_for(
        lambda: (
            poller.stats.discarded_batches == 1
            and poller.stats.records_done == 7
            and bool(lab.s3.list_objects_v2(Bucket="failures").get("Contents"))
        )
    )
    # THEN every other record was delivered successfully, the poison one 1 + 2 retries times alone
    succeeded = {
        b["task_id"]
        for i in lab.invocations()
        if not any(b.get("raise") for b in i["bodies"])
        for b in i["bodies"]
    }
    assert succeeded == {f"t{i}" for i in range(8)} - {"t5"}
    alone = [i for i in lab.invocations() if [b["task_id"] for b in i["bodies"]] == ["t5"]]
    assert len(alone) == 3
    # ... and the S3 object has AWS's shape: request context, condition, batch info and the payload
    keys = [o["Key"] for o in lab.s3.list_objects_v2(Bucket="failures").get("Contents", [])]
    assert len(keys) == 1
    assert keys[0].startswith(f"aws/lambda/{poller.config.uuid}/")
    record = json.loads(lab.s3.get_object(Bucket="failures", Key=keys[0])["Body"].read())
    assert record["requestContext"]["condition"] == "RetryAttemptsExhausted"
    assert record["requestContext"]["functionArn"] == fn
    assert record["requestContext"]["approximateInvokeCount"] == 3
    info = record["DDBStreamBatchInfo"]
    assert info["batchSize"] == 1
    assert info["streamArn"] == stream
    assert info["startSequenceNumber"] == info["endSequenceNumber"]
    assert {"shardId", "approximateArrivalOfFirstRecord", "approximateArrivalOfLastRecord"} <= info.keys()
    payload = json.loads(record["payload"])
    assert payload["Records"][0]["dynamodb"]["Keys"]["task_id"]["S"] == "t5"


def test_without_bisect_a_failing_batch_is_retried_whole_and_discarded_after_the_retry_limit(
    lab: Lab, runtime: FunctionRuntime, clock: VirtualClock, pollers: list[StreamMappingPoller]
) -> None:
    # GIVEN 3 records, one poison, no bisect, MaximumRetryAttempts 1, an SQS on-failure destination
    fn = lab.function("nobisect")
    stream = lab.table("nobisect")
    url, arn, _ = lab.queue("stream-failures")
    for index in range(3):
        extra = {"raise": "yes"} if index == 1 else {}
        lab.put("nobisect", f"t{index}", kind="scrape", status="Pending", **extra)
    poller = _start(
        lab,
        runtime,
        clock,
        pollers,
        FunctionName=fn,
        EventSourceArn=stream,
        StartingPosition="TRIM_HORIZON",
        BatchSize=3,
        MaximumBatchingWindowInSeconds=1,
        MaximumRetryAttempts=1,
        DestinationConfig={"OnFailure": {"Destination": arn}},
    )
    # WHEN the retries run out
    wait_for(lambda: poller.stats.discarded_records == 3 and lab.visible(url) == 1)
    # THEN the whole batch was tried twice and the destination got metadata without the records
    assert len(lab.invocations()) == 2
    message = lab.sqs.receive_message(QueueUrl=url)["Messages"][0]
    record = json.loads(message["Body"])
    assert record["DDBStreamBatchInfo"]["batchSize"] == 3
    assert "payload" not in record


def test_records_older_than_the_maximum_record_age_are_discarded_without_invocation(
    lab: Lab, runtime: FunctionRuntime, clock: VirtualClock, pollers: list[StreamMappingPoller]
) -> None:
    # GIVEN a record written, then two virtual hours pass before the mapping (max age 1 hour) starts
    fn = lab.function("aged")
    stream = lab.table("aged")
    lab.s3.create_bucket(Bucket="aged-failures")
    lab.put("aged", "t-old", kind="scrape", status="Pending")
    clock.advance(7200)
    lab.put("aged", "t-new", kind="scrape", status="Pending")
    poller = _start(
        lab,
        runtime,
        clock,
        pollers,
        FunctionName=fn,
        EventSourceArn=stream,
        StartingPosition="TRIM_HORIZON",
        BatchSize=1,
        MaximumRecordAgeInSeconds=3600,
        DestinationConfig={"OnFailure": {"Destination": "arn:aws:s3:::aged-failures"}},
    )
    wait_for(
        lambda: (
            len(lab.invocations()) == 1
            and poller.stats.discarded_records == 1
            and bool(lab.s3.list_objects_v2(Bucket="aged-failures").get("Contents"))
        )
    )
    # THEN only the fresh record was delivered; the old one went to the bucket as RecordAgeExceeded
    assert _delivered(lab) == ["t-new"]
    key = lab.s3.list_objects_v2(Bucket="aged-failures")["Contents"][0]["Key"]
    record = json.loads(lab.s3.get_object(Bucket="aged-failures", Key=key)["Body"].read())
    assert record["requestContext"]["condition"] == "RecordAgeExceeded"
