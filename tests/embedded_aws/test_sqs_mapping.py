"""SQS event source mapping semantics of the local poller, each rule proven in isolation."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from embedded_aws.applied_config import SqsMappingConfig
from embedded_aws.clock import VirtualClock
from embedded_aws.runtime import FunctionRuntime
from embedded_aws.sqs_poller import SqsMappingPoller
from tests.embedded_aws.conftest import Lab, wait_for

pytestmark = pytest.mark.e2e


@pytest.fixture
def pollers() -> Iterator[list[SqsMappingPoller]]:
    started: list[SqsMappingPoller] = []
    yield started
    for poller in started:
        poller.stop()


def _start(
    lab: Lab,
    runtime: FunctionRuntime,
    clock: VirtualClock,
    pollers: list[SqsMappingPoller],
    **mapping: object,
) -> SqsMappingPoller:
    config = SqsMappingConfig.from_mapping(lab.mapping(**mapping))
    poller = SqsMappingPoller(config, runtime, clock, lab.endpoint)
    poller.start()
    pollers.append(poller)
    return poller


def _send(lab: Lab, url: str, bodies: list[dict[str, object]]) -> None:
    for index, body in enumerate(bodies):
        lab.sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"n": index, **body}))


def _numbers(invocation: dict[str, Any]) -> list[int]:
    return sorted(int(body["n"]) for body in invocation["bodies"])


def test_batches_never_exceed_batch_size_and_the_window_gathers_a_full_batch(
    lab: Lab, runtime: FunctionRuntime, clock: VirtualClock, pollers: list[SqsMappingPoller]
) -> None:
    # GIVEN a mapping with batch size 5 and a 60 s batching window, and 12 messages
    fn = lab.function("batcher")
    url, arn, _ = lab.queue("batching")
    _send(lab, url, [{} for _ in range(12)])
    # WHEN the poller runs
    poller = _start(
        lab,
        runtime,
        clock,
        pollers,
        FunctionName=fn,
        EventSourceArn=arn,
        BatchSize=5,
        MaximumBatchingWindowInSeconds=60,
        ScalingConfig={"MaximumConcurrency": 2},
    )
    wait_for(lambda: sum(len(i["ids"]) for i in lab.invocations()) == 12)
    # THEN every message is delivered once, in batches of at most 5, and full batches were formed
    sizes = sorted(len(i["ids"]) for i in lab.invocations())
    assert max(sizes) == 5
    assert sizes.count(5) >= 2
    assert poller.stats.max_batch == 5
    wait_for(lambda: lab.visible(url) == 0)


def test_in_flight_invocations_never_exceed_maximum_concurrency(
    lab: Lab, runtime: FunctionRuntime, clock: VirtualClock, pollers: list[SqsMappingPoller]
) -> None:
    # GIVEN maximum concurrency 2, batch size 1 and 8 slow messages
    fn = lab.function("limited", env={"SLEEP": "0.3"})
    url, arn, _ = lab.queue("limited", visibility=600)
    _send(lab, url, [{} for _ in range(8)])
    # WHEN the poller drains the queue
    poller = _start(
        lab,
        runtime,
        clock,
        pollers,
        FunctionName=fn,
        EventSourceArn=arn,
        BatchSize=1,
        ScalingConfig={"MaximumConcurrency": 2},
    )
    wait_for(lambda: len(lab.invocations()) == 8)
    # THEN at no instant were more than 2 invocations running (measured inside the handler) ...
    spans = [(i["start"], i["end"]) for i in lab.invocations()]
    overlap = max(sum(1 for s, e in spans if s <= start < e) for start, _ in spans)
    assert overlap == 2
    # ... and the poller's own count agrees
    assert poller.stats.max_in_flight == 2
    assert runtime.stats["limited"].max_in_flight == 2


def test_with_report_batch_item_failures_only_reported_messages_return(
    lab: Lab, runtime: FunctionRuntime, clock: VirtualClock, pollers: list[SqsMappingPoller]
) -> None:
    # GIVEN ReportBatchItemFailures and a batch in which one message is reported as failed
    fn = lab.function("partial")
    url, arn, _ = lab.queue("partial", visibility=600)
    _send(lab, url, [{}, {"report": True}, {}])
    # WHEN the poller has delivered the three (SQS may hand them over in more than one receive) and
    # the visibility timeout passes twice
    _start(
        lab,
        runtime,
        clock,
        pollers,
        FunctionName=fn,
        EventSourceArn=arn,
        BatchSize=10,
        MaximumBatchingWindowInSeconds=5,
        FunctionResponseTypes=["ReportBatchItemFailures"],
    )
    wait_for(lambda: sorted(n for i in lab.invocations() for n in _numbers(i)) == [0, 1, 2])
    for _ in range(2):
        # The handled messages are deleted after the handler returns, by another thread: wait until
        # the queue holds only the reported one before time passes, or they come back undeleted.
        wait_for(lambda: lab.visible(url) == 1)
        delivered = len(lab.invocations())
        clock.advance(600)
        wait_for(lambda: len(lab.invocations()) > delivered)  # noqa: B023 - evaluated inside the loop
    # THEN the handled messages were delivered once, and the reported one again, alone, each time
    numbers = [_numbers(i) for i in lab.invocations()]
    assert [n for batch in numbers for n in batch].count(0) == 1, numbers
    assert [n for batch in numbers for n in batch].count(2) == 1, numbers
    assert numbers[-2:] == [[1], [1]], numbers


def test_without_report_batch_item_failures_reported_failures_are_deleted_with_the_batch(
    lab: Lab, runtime: FunctionRuntime, clock: VirtualClock, pollers: list[SqsMappingPoller]
) -> None:
    # GIVEN a mapping WITHOUT ReportBatchItemFailures and a handler that reports one failure
    fn = lab.function("lossy")
    url, arn, _ = lab.queue("lossy", visibility=600)
    _send(lab, url, [{}, {"report": True}, {}])
    # WHEN the batch is delivered
    poller = _start(
        lab,
        runtime,
        clock,
        pollers,
        FunctionName=fn,
        EventSourceArn=arn,
        BatchSize=10,
        MaximumBatchingWindowInSeconds=5,
    )
    wait_for(lambda: poller.stats.records_done == 3)
    clock.advance(1200)
    time.sleep(1.5)
    # THEN the reported message is gone: never delivered again, not in the queue (the seeds' bug).
    # (SQS may hand the three messages over in more than one receive, so count deliveries per message.)
    delivered = sorted(b["n"] for i in lab.invocations() for b in i["bodies"])
    assert delivered == [0, 1, 2]
    assert lab.visible(url) == 0
    assert poller.stats.ignored_reported_failures == 1


def test_an_exception_returns_the_whole_batch_only_after_the_visibility_timeout(
    lab: Lab, runtime: FunctionRuntime, clock: VirtualClock, pollers: list[SqsMappingPoller]
) -> None:
    # GIVEN a visibility timeout of 600 virtual seconds (10 real seconds) and two messages, one of
    # which makes its batch raise. SQS may hand them over in one receive or in two (a receive returns
    # "up to" MaxNumberOfMessages), so the rule is stated per batch: the batch that raised comes back
    # whole, and a batch that succeeded never comes back.
    fn = lab.function("raiser")
    url, arn, _ = lab.queue("raiser", visibility=600)
    _send(lab, url, [{"raise": True}, {}])
    _start(
        lab,
        runtime,
        clock,
        pollers,
        FunctionName=fn,
        EventSourceArn=arn,
        BatchSize=10,
        MaximumBatchingWindowInSeconds=5,
        FunctionResponseTypes=["ReportBatchItemFailures"],
    )
    wait_for(lambda: sorted(b["n"] for i in lab.invocations() for b in i["bodies"]) == [0, 1])
    first_receive = clock.now()
    [failed_batch] = [_numbers(i) for i in lab.invocations() if 0 in _numbers(i)]
    deliveries = len(lab.invocations())
    # WHEN virtual time has not yet reached the visibility timeout
    time.sleep(1.0)
    # THEN nothing was redelivered ...
    assert len(lab.invocations()) == deliveries
    # ... and once the clock passes it, every message of the batch that raised comes back, and only
    # those (a batch that succeeded was deleted)
    clock.advance(600)

    def redelivered() -> list[int]:
        return sorted(n for i in lab.invocations()[deliveries:] for n in _numbers(i))

    wait_for(lambda: redelivered() == failed_batch)
    assert clock.now() - first_receive >= 600
    time.sleep(1.0)
    assert redelivered() == failed_batch


def test_a_message_moves_to_the_dlq_after_max_receive_count(
    lab: Lab, runtime: FunctionRuntime, clock: VirtualClock, pollers: list[SqsMappingPoller]
) -> None:
    # GIVEN a redrive policy with maxReceiveCount 3 and a message that always fails
    fn = lab.function("poison")
    url, arn, dlq_url = lab.queue("poison", visibility=30, dlq_after=3)
    assert dlq_url is not None
    _send(lab, url, [{"raise": True}])
    # WHEN the poller keeps receiving it
    _start(lab, runtime, clock, pollers, FunctionName=fn, EventSourceArn=arn, BatchSize=1)
    wait_for(lambda: lab.visible(dlq_url) == 1, timeout=30)
    # THEN it was delivered exactly 3 times and then sits in the DLQ
    assert len(lab.invocations()) == 3
    assert lab.visible(url) == 0


def test_change_message_visibility_by_the_handler_is_honoured(
    lab: Lab, runtime: FunctionRuntime, clock: VirtualClock, pollers: list[SqsMappingPoller]
) -> None:
    # GIVEN a 12-hour queue visibility and a handler that sets 60 s on the message it reports failed
    source = """
import json, os, boto3
from app_record import record
sqs = boto3.client("sqs")
def handler(event, context):
    record(event)
    r = event["Records"][0]
    url = sqs.get_queue_url(QueueName=r["eventSourceARN"].split(":")[-1])["QueueUrl"]
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=r["receiptHandle"], VisibilityTimeout=60)
    return {"batchItemFailures": [{"itemIdentifier": r["messageId"]}]}
"""
    helper = (
        "import json, os\n"
        "def record(event):\n"
        "    with open(os.environ['RECORD_PATH'], 'a') as h:\n"
        "        h.write(json.dumps({'ids': [r['messageId'] for r in event['Records']]}) + '\\n')\n"
    )
    fn = lab.function("backoff", source, extra={"app_record.py": helper})
    url, arn, _ = lab.queue("backoff", visibility=43200)
    _send(lab, url, [{}])
    _start(
        lab,
        runtime,
        clock,
        pollers,
        FunctionName=fn,
        EventSourceArn=arn,
        BatchSize=1,
        FunctionResponseTypes=["ReportBatchItemFailures"],
    )
    # WHEN the handler has run once
    wait_for(lambda: len(lab.invocations()) == 1)
    # THEN the message comes back after the handler's 60 s, not the queue's 12 hours
    wait_for(lambda: len(lab.invocations()) == 2, timeout=10)


def test_an_invalid_partial_response_fails_the_whole_batch(
    lab: Lab, runtime: FunctionRuntime, clock: VirtualClock, pollers: list[SqsMappingPoller]
) -> None:
    # GIVEN a handler that reports an itemIdentifier that is not in the batch
    source = """
import json, os
def handler(event, context):
    with open(os.environ["RECORD_PATH"], "a") as h:
        h.write(json.dumps({"ids": [r["messageId"] for r in event["Records"]]}) + "\\n")
    return {"batchItemFailures": [{"itemIdentifier": "not-a-message-id"}]}
"""
    fn = lab.function("invalid", source)
    url, arn, _ = lab.queue("invalid", visibility=600)
    _send(lab, url, [{}, {}])
    _start(
        lab,
        runtime,
        clock,
        pollers,
        FunctionName=fn,
        EventSourceArn=arn,
        BatchSize=10,
        MaximumBatchingWindowInSeconds=5,
        FunctionResponseTypes=["ReportBatchItemFailures"],
    )
    # WHEN it has been delivered twice
    wait_for(lambda: len(lab.invocations()) >= 1)
    clock.advance(600)
    wait_for(lambda: len(lab.invocations()) >= 2)
    # THEN both messages came back each time (nothing was deleted)
    assert all(len(i["ids"]) == 2 for i in lab.invocations()[:2])
