"""Reserved concurrency is a limit that throttles, read again while the emulator runs.

AWS pages: https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html (reserved
concurrency caps a function, 0 throttles every invocation), with-sqs.html and services-sqs-scaling.html
(a throttled batch returns to the queue after the visibility timeout; maximum concurrency above the
reserved concurrency gets throttled), services-dynamodb-errors.html (stream batches are retried).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from embedded_aws.applied_config import SqsMappingConfig, StreamMappingConfig
from embedded_aws.clock import VirtualClock
from embedded_aws.errors import ThrottledError
from embedded_aws.runtime import FunctionRuntime, InvocationResult
from embedded_aws.sqs_poller import SqsMappingPoller
from embedded_aws.stream_poller import StreamMappingPoller
from tests.embedded_aws.conftest import Lab, wait_for
from tests.embedded_aws.held_function import Gate, held_function

pytestmark = pytest.mark.e2e


@pytest.fixture
def gate(tmp_path: Path) -> Iterator[Gate]:
    opened = Gate(tmp_path)
    yield opened
    opened.open()  # never leave a worker waiting


@pytest.fixture
def quick_runtime(endpoint: str, clock: VirtualClock, tmp_path: Path) -> Iterator[FunctionRuntime]:
    """A runtime that reads a function's configuration again every half second."""
    runtime = FunctionRuntime(
        endpoint, clock, cache_dir=tmp_path / "fn", max_workers_per_function=8, spec_ttl_seconds=0.5
    )
    yield runtime
    runtime.close()


@pytest.fixture
def stoppers() -> Iterator[list[Any]]:
    started: list[Any] = []
    yield started
    for poller in started:
        poller.stop()


def _in_background(runtime: FunctionRuntime, function: str, event: Any) -> list[InvocationResult]:
    results: list[InvocationResult] = []
    threading.Thread(target=lambda: results.append(runtime.invoke(function, event)), daemon=True).start()
    return results


def _sqs_poller(lab: Lab, runtime: FunctionRuntime, clock: VirtualClock, **mapping: Any) -> SqsMappingPoller:
    config = SqsMappingConfig.from_mapping(lab.mapping(**mapping))
    return SqsMappingPoller(config, runtime, clock, lab.endpoint)


def _send(lab: Lab, url: str, count: int) -> None:
    for n in range(count):
        lab.sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"n": n}))


def test_an_invocation_beyond_the_reserved_concurrency_is_throttled_not_queued(
    lab: Lab, runtime: FunctionRuntime, gate: Gate
) -> None:
    # GIVEN a function with reserved concurrency 1 and one invocation of it running
    fn = held_function(lab, "reserved-one", gate, reserved=1)
    running = _in_background(runtime, fn, {"first": True})
    wait_for(lambda: len(lab.invocations()) == 1)
    # WHEN a second synchronous invocation arrives
    # THEN it is refused at once with Lambda's 429, and the function did not run
    with pytest.raises(ThrottledError) as refused:
        runtime.invoke(fn, {"second": True})
    assert refused.value.status_code == 429
    assert refused.value.error_type == "TooManyRequestsException"
    assert refused.value.reserved == 1
    assert len(lab.invocations()) == 1
    assert runtime.stats["reserved-one"].throttles == 1
    # AND once the first ends, the next invocation runs
    gate.open()
    wait_for(lambda: len(running) == 1)
    assert running[0].ok
    assert runtime.invoke(fn, {"third": True}).ok


def test_a_reserved_concurrency_change_during_a_run_is_seen_within_a_tick(
    lab: Lab, quick_runtime: FunctionRuntime
) -> None:
    # GIVEN a function without a reservation that has already run
    fn = lab.function("switched")
    assert quick_runtime.invoke(fn, {"Records": []}).ok

    def throttled() -> bool:
        try:
            quick_runtime.invoke(fn, {"Records": []})
        except ThrottledError as throttle:
            return throttle.reserved == 0
        return False

    # WHEN PutFunctionConcurrency sets it to 0 during the run
    lab.lam.put_function_concurrency(FunctionName="switched", ReservedConcurrentExecutions=0)
    # THEN invocations are throttled once the configuration is read again (every 0.5 s here)
    wait_for(throttled, timeout=10)
    ran = len(lab.invocations())
    # AND after DeleteFunctionConcurrency they run again, the throttled ones never having run
    lab.lam.delete_function_concurrency(FunctionName="switched")
    wait_for(lambda: not throttled(), timeout=10)
    assert len(lab.invocations()) == ran + 1


def test_reserved_concurrency_zero_stops_the_sqs_mapping_and_the_messages_stay_in_the_queue(
    lab: Lab, quick_runtime: FunctionRuntime, clock: VirtualClock, gate: Gate, stoppers: list[Any]
) -> None:
    # GIVEN a function with reserved concurrency 0, its queue (30 s visibility, DLQ after 100 receives:
    # throttled receives count, so a loaded machine that looks late must not find them dead-lettered)
    # holding 3 messages, and a mapping on it
    gate.open()
    fn = held_function(lab, "paused", gate, reserved=0)
    url, arn, dlq_url = lab.queue("paused", visibility=30, dlq_after=100)
    _send(lab, url, 3)
    poller = _sqs_poller(
        lab,
        quick_runtime,
        clock,
        FunctionName=fn,
        EventSourceArn=arn,
        BatchSize=1,
        ScalingConfig={"MaximumConcurrency": 2},
    )
    stoppers.append(poller)
    # WHEN the mapping polls
    poller.start()
    wait_for(lambda: poller.stats.throttles >= 3)
    # THEN the function never ran and every message is still in the queue, none dead-lettered
    assert lab.invocations() == []
    assert poller.stats.invocations == 0
    assert lab.visible(url) == 3
    assert dlq_url is not None and lab.visible(dlq_url) == 0
    # AND when the reservation is removed every message is delivered once, its throttled receives
    # having counted (ApproximateReceiveCount above 1)
    lab.lam.delete_function_concurrency(FunctionName="paused")
    wait_for(lambda: lab.visible(url) == 0 and len(lab.invocations()) == 3)
    assert sorted(i["ids"][0] for i in lab.invocations()) == sorted({i["ids"][0] for i in lab.invocations()})
    assert all(i["receives"][0] >= 2 for i in lab.invocations())


def test_reserved_concurrency_zero_sends_messages_to_the_dlq_after_max_receive_count(
    lab: Lab, runtime: FunctionRuntime, clock: VirtualClock, gate: Gate, stoppers: list[Any]
) -> None:
    # GIVEN reserved concurrency 0 and a queue that dead-letters after 2 receives
    gate.open()
    fn = held_function(lab, "paused-dlq", gate, reserved=0)
    url, arn, dlq_url = lab.queue("paused-dlq", visibility=30, dlq_after=2)
    _send(lab, url, 2)
    poller = _sqs_poller(lab, runtime, clock, FunctionName=fn, EventSourceArn=arn, BatchSize=1)
    stoppers.append(poller)
    # WHEN the mapping keeps being throttled
    poller.start()
    # THEN SQS moves both messages to the DLQ (throttled receives count), the function never ran
    assert dlq_url is not None
    wait_for(lambda: lab.visible(dlq_url) == 2, timeout=30)
    assert lab.invocations() == []
    assert lab.visible(url) == 0


def test_a_mapping_whose_maximum_concurrency_exceeds_the_reserved_concurrency_is_throttled(
    lab: Lab, runtime: FunctionRuntime, clock: VirtualClock, gate: Gate, stoppers: list[Any]
) -> None:
    # GIVEN reserved concurrency 1, a mapping with maximum concurrency 3, batch size 1, 3 messages
    fn = held_function(lab, "over-mapped", gate, reserved=1)
    url, arn, _ = lab.queue("over-mapped", visibility=60)
    _send(lab, url, 3)
    poller = _sqs_poller(
        lab,
        runtime,
        clock,
        FunctionName=fn,
        EventSourceArn=arn,
        BatchSize=1,
        ScalingConfig={"MaximumConcurrency": 3},
    )
    stoppers.append(poller)
    # WHEN the mapping polls while the first invocation holds the one reserved slot
    poller.start()
    wait_for(lambda: len(lab.invocations()) == 1 and poller.stats.throttles >= 1)
    # THEN the other batches were throttled, not run beside it
    assert runtime.stats["over-mapped"].max_in_flight == 1
    gate.open()
    # AND every message is delivered once in the end, the throttled ones after their visibility
    # timeout (a second receive)
    wait_for(lambda: lab.visible(url) == 0 and len(lab.invocations()) == 3)
    assert len({i["ids"][0] for i in lab.invocations()}) == 3
    assert max(max(i["receives"]) for i in lab.invocations()) >= 2
    assert runtime.stats["over-mapped"].max_in_flight == 1


def test_a_throttled_stream_batch_is_retried_until_it_runs_without_using_up_its_retries(
    lab: Lab, quick_runtime: FunctionRuntime, clock: VirtualClock, gate: Gate, stoppers: list[Any]
) -> None:
    # GIVEN a stream mapping allowing no retries and a function with reserved concurrency 0
    gate.open()
    fn = held_function(lab, "stream-paused", gate, reserved=0)
    stream = lab.table("paused-tasks")
    lab.put("paused-tasks", "t1", status="Pending")
    config = StreamMappingConfig.from_mapping(
        lab.mapping(
            FunctionName=fn, EventSourceArn=stream, StartingPosition="TRIM_HORIZON", MaximumRetryAttempts=0
        )
    )
    poller = StreamMappingPoller(config, quick_runtime, clock, lab.endpoint)
    stoppers.append(poller)
    # WHEN the shard is read while the function is throttled
    poller.start()
    wait_for(lambda: poller.stats.throttles >= 2)
    # THEN nothing ran and nothing was discarded
    assert lab.invocations() == []
    assert poller.stats.discarded_batches == 0
    # AND once the reservation is removed the batch runs once
    lab.lam.delete_function_concurrency(FunctionName="stream-paused")
    wait_for(lambda: poller.stats.records_done == 1)
    assert len(lab.invocations()) == 1
    assert poller.stats.discarded_batches == 0
