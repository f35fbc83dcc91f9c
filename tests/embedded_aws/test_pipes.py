"""EventBridge Pipes semantics of the local pipe poller: filter, input template, retries, bisect, DLQ."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from embedded_aws import faults as fault_injection
from embedded_aws.applied_config import PipeConfig
from embedded_aws.base import client
from embedded_aws.clock import VirtualClock
from embedded_aws.pipes import PipePoller
from tests.embedded_aws.conftest import Lab, wait_for
from tests.embedded_aws.test_stream_mapping import BECOMES_PENDING

pytestmark = pytest.mark.e2e

TEMPLATE = '{"task_id": "<$.dynamodb.Keys.task_id.S>"}'


@pytest.fixture
def pipes() -> Iterator[list[PipePoller]]:
    started: list[PipePoller] = []
    yield started
    for poller in started:
        poller.stop()


def _pipe(
    lab: Lab,
    clock: VirtualClock,
    started: list[PipePoller],
    target: dict[str, Any] | None = None,
    **source: Any,
) -> tuple[PipePoller, str, str]:
    """A pipe tasks stream -> (filter) -> template -> queue; returns (poller, queue url, dlq url)."""
    stream = lab.table("tasks")
    url, arn, _ = lab.queue("scrape")
    dlq_url, dlq_arn, _ = lab.queue("pipe-dlq")
    pipes = client("pipes", lab.endpoint)
    pipes.create_pipe(
        Name="dispatch",
        RoleArn=lab.role,
        Source=stream,
        SourceParameters={
            "FilterCriteria": BECOMES_PENDING,
            "DynamoDBStreamParameters": {
                "StartingPosition": "TRIM_HORIZON",
                "BatchSize": 10,
                "DeadLetterConfig": {"Arn": dlq_arn},
                **source,
            },
        },
        Target=arn,
        TargetParameters={"InputTemplate": TEMPLATE, **(target or {})},
    )
    described = pipes.describe_pipe(Name="dispatch")
    poller = PipePoller(PipeConfig.from_pipe(described), clock, lab.endpoint)
    started.append(poller)
    return poller, url, dlq_url


def _bodies(lab: Lab, url: str) -> list[str]:
    seen: dict[str, str] = {}
    for _ in range(10):
        messages = lab.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=0).get(
            "Messages", []
        )
        new = {m["MessageId"]: m["Body"] for m in messages if m["MessageId"] not in seen}
        if not new:
            break
        seen.update(new)
    return sorted(seen.values())


def test_a_pipe_sends_only_filtered_records_shaped_by_its_input_template(
    lab: Lab, clock: VirtualClock, pipes: list[PipePoller]
) -> None:
    # GIVEN a pipe with the "scrape task becomes Pending" filter and the {"task_id"} template
    poller, url, _ = _pipe(lab, clock, pipes, MaximumRetryAttempts=1)
    lab.put("tasks", "t1", kind="scrape", status="Pending")
    lab.put("tasks", "e1", kind="email", status="Pending")  # dropped by the filter
    lab.put("tasks", "t2", kind="scrape", status="Running")  # dropped by the filter
    # WHEN the pipe runs
    poller.start()
    wait_for(lambda: poller.stats.records_done == 1 and poller.stats.records_filtered_out == 2)
    # THEN the queue holds exactly the template's rendering of the one matching record
    assert _bodies(lab, url) == [json.dumps({"task_id": "t1"})]


def test_a_pipe_sends_each_message_with_the_group_its_dynamic_path_names(
    lab: Lab, clock: VirtualClock, pipes: list[PipePoller]
) -> None:
    # GIVEN a pipe whose SQS target's MessageGroupId is the dynamic path of the record's job
    # (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-pipes-event-target.html)
    group = {"SqsQueueParameters": {"MessageGroupId": "$.dynamodb.NewImage.job_id.S"}}
    poller, url, _ = _pipe(lab, clock, pipes, target=group, MaximumRetryAttempts=1)
    lab.put("tasks", "t1", kind="scrape", status="Pending", job_id="big")
    lab.put("tasks", "t2", kind="scrape", status="Pending", job_id="small")
    # WHEN the pipe runs
    poller.start()
    wait_for(lambda: poller.stats.records_done == 2)
    # THEN each message names its own record's job as its group
    messages = lab.sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["MessageGroupId"]
    ).get("Messages", [])
    groups = {json.loads(m["Body"])["task_id"]: m["Attributes"].get("MessageGroupId") for m in messages}
    assert groups == {"t1": "big", "t2": "small"}


def test_a_failing_record_is_bisected_out_retried_and_described_in_the_pipe_dlq(
    lab: Lab, clock: VirtualClock, pipes: list[PipePoller]
) -> None:
    # GIVEN a pipe with automatic bisect, 2 retries and a DLQ, and a target that refuses one record
    poller, url, dlq_url = _pipe(
        lab, clock, pipes, MaximumRetryAttempts=2, OnPartialBatchItemFailure="AUTOMATIC_BISECT"
    )
    for name in ("t1", "t2", "bad", "t3"):
        lab.put("tasks", name, kind="scrape", status="Pending")
    with fault_injection.inject() as faults:
        refused = faults.stall_send('"bad"', clock, hold_seconds=0)
        # WHEN the pipe runs
        poller.start()
        wait_for(
            lambda: (
                poller.stats.discarded_records == 1
                and poller.stats.records_done == 3
                and lab.visible(dlq_url) == 1
            )
        )
    # THEN the other records reached the queue once each, the refused one never
    assert _bodies(lab, url) == sorted(json.dumps({"task_id": t}) for t in ("t1", "t2", "t3"))
    # AND the refused record was isolated by bisect and tried 1 + 2 times alone
    assert poller.stats.bisections >= 1
    assert refused.fired >= 3
    # AND the pipe's DLQ holds one message describing the batch of that record alone
    dead = [json.loads(body) for body in _bodies(lab, dlq_url)]
    assert len(dead) == 1
    assert dead[0]["context"]["condition"] == "RetryAttemptsExhausted"
    assert dead[0]["context"]["approximateInvokeCount"] == 3
    assert dead[0]["DDBStreamBatchInfo"]["batchSize"] == 1
