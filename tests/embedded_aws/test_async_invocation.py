"""Lambda's asynchronous invocation: at-least-once delivery and throttling, on the virtual clock.

AWS page: https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html (the same
event may be received more than once; a throttled event is retried for up to 6 hours, 1 s doubling to
5 minutes between attempts). Reserved concurrency 0 sends events to the on-failure destination
without retries: AWS's notice of August 2021, quoted in
https://github.com/SummitRoute/aws_breaking_changes/issues/48.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from embedded_aws import faults as fault_injection
from embedded_aws.async_invoke import AsyncInvoker, throttle_retry_delay
from embedded_aws.clock import VirtualClock
from embedded_aws.runtime import FunctionRuntime
from tests.embedded_aws.conftest import Lab, wait_for
from tests.embedded_aws.held_function import HELD_TIMEOUT, Gate, held_function

pytestmark = pytest.mark.e2e

# Each copy records itself, then waits (up to 10 real seconds) until $EXPECTED copies have recorded:
# only copies that run at the same time all see each other.
MEETING_HANDLER = """
import fcntl, json, os, time

def _lines():
    with open(os.environ["RECORD_PATH"]) as handle:
        return [json.loads(line) for line in handle if line.strip()]

def handler(event, context):
    with open(os.environ["RECORD_PATH"], "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write(json.dumps({"pid": os.getpid(), "event": event}) + "\\n")
    expected = int(os.environ.get("EXPECTED", "1"))
    deadline = time.monotonic() + 10
    while len(_lines()) < expected and time.monotonic() < deadline:
        time.sleep(0.02)
    return {"saw": len(_lines())}
"""


@pytest.fixture
def invoker(lab: Lab, runtime: FunctionRuntime, clock: VirtualClock) -> Iterator[AsyncInvoker]:
    started = AsyncInvoker(runtime, clock, lab.endpoint, workers=4)
    started.start()
    yield started
    started.stop()


def _on_failure_queue(lab: Lab, function: str, **config: Any) -> str:
    url, arn, _ = lab.queue(f"{function}-failures")
    lab.lam.put_function_event_invoke_config(
        FunctionName=function, DestinationConfig={"OnFailure": {"Destination": arn}}, **config
    )
    return url


def _record(lab: Lab, url: str) -> dict[str, Any]:
    wait_for(lambda: lab.visible(url) >= 1)
    body: dict[str, Any] = json.loads(lab.sqs.receive_message(QueueUrl=url)["Messages"][0]["Body"])
    return body


@pytest.fixture
def gate(tmp_path: Path) -> Iterator[Gate]:
    opened = Gate(tmp_path)
    yield opened
    opened.open()  # never leave a worker waiting


def test_an_async_event_may_be_delivered_more_than_once_and_the_copies_run_concurrently(
    lab: Lab, invoker: AsyncInvoker
) -> None:
    # GIVEN a function and the fault "the next async event is delivered 3 times"
    fn = lab.function("twice", MEETING_HANDLER, timeout=HELD_TIMEOUT, env={"EXPECTED": "3"})
    with fault_injection.inject() as faults:
        rule = faults.duplicate_async("twice", deliveries=3)
        # WHEN one event is accepted
        request_id = invoker.submit(fn, {"run": 1})
        wait_for(lambda: len(invoker.journal.entries("async.succeeded")) == 3, timeout=30)
        # THEN the function received the same event 3 times, the copies running at the same time
        # (each waited until it saw all three)
        assert [i["event"] for i in lab.invocations()] == [{"run": 1}] * 3
        assert [e["payload"] for e in invoker.journal.entries("async.succeeded")] == [{"saw": 3}] * 3
        assert rule.fired == 1
        assert invoker.journal.entries("async.duplicated")[0]["request_id"] == request_id
        # AND the rule applied to one event only: the next one runs once
        invoker.submit(fn, {"run": 2})
        wait_for(lambda: len(invoker.journal.entries("async.succeeded")) == 4, timeout=30)
    assert [i["event"] for i in lab.invocations()].count({"run": 2}) == 1


def test_a_throttled_async_event_is_retried_after_growing_waits_until_it_runs(
    lab: Lab,
    invoker: AsyncInvoker,
    clock: VirtualClock,
    gate: Gate,
) -> None:
    # GIVEN a function with reserved concurrency 1, held busy by a first event
    fn = held_function(lab, "busy", gate, reserved=1)
    invoker.submit(fn, {"first": True})
    wait_for(lambda: len(lab.invocations()) == 1)
    # WHEN a second event is accepted
    invoker.submit(fn, {"second": True})
    wait_for(lambda: len(invoker.journal.entries("async.throttled")) >= 4)
    # THEN it is throttled, not failed: each try comes after the documented wait (1 s, 2 s, 4 s ...)
    throttled = invoker.journal.entries("async.throttled")
    times = [e["at"] for e in throttled]
    for n, (before, after) in enumerate(itertools.pairwise(times), start=1):
        assert after - before >= throttle_retry_delay(n)
    assert [throttle_retry_delay(n) for n in (1, 2, 3, 9, 10)] == [1.0, 2.0, 4.0, 256.0, 300.0]
    assert invoker.stats.function_errors == 0
    assert invoker.stats.discarded_records == 0
    # AND it runs once the first ends
    gate.open()
    wait_for(lambda: len(lab.invocations()) == 2, timeout=30)
    assert lab.invocations()[1]["event"] == {"second": True}


def test_a_throttled_async_event_past_its_maximum_age_goes_to_the_on_failure_destination(
    lab: Lab,
    invoker: AsyncInvoker,
    gate: Gate,
) -> None:
    # GIVEN reserved concurrency 1 held busy, events kept at most 60 s, an on-failure queue
    fn = held_function(lab, "aged", gate, reserved=1)
    failures = _on_failure_queue(lab, "aged", MaximumEventAgeInSeconds=60)
    invoker.submit(fn, {"first": True})
    wait_for(lambda: len(lab.invocations()) == 1)
    # WHEN a second event stays throttled for longer than 60 virtual seconds
    invoker.submit(fn, {"second": True})
    record = _record(lab, failures)
    # THEN its invocation record names the age, the 429 and no run of the function
    assert record["requestContext"]["condition"] == "EventAgeExceeded"
    assert record["requestContext"]["approximateInvokeCount"] == 0
    assert record["responseContext"]["statusCode"] == 429
    assert "functionError" not in record["responseContext"]
    assert record["requestPayload"] == {"second": True}
    assert len(lab.invocations()) == 1


def test_reserved_concurrency_zero_sends_async_events_to_the_on_failure_destination_without_retries(
    lab: Lab,
    invoker: AsyncInvoker,
    gate: Gate,
) -> None:
    # GIVEN a function with reserved concurrency 0 and an on-failure queue
    gate.open()
    fn = held_function(lab, "stopped", gate, reserved=0)
    failures = _on_failure_queue(lab, "stopped")
    # WHEN an event is accepted
    invoker.submit(fn, {"event": 1})
    record = _record(lab, failures)
    # THEN it goes to the on-failure destination after one throttle, never retried, never run
    assert record["requestContext"]["approximateInvokeCount"] == 0
    assert record["responseContext"]["statusCode"] == 429
    assert record["responsePayload"]["errorType"] == "TooManyRequestsException"
    assert invoker.stats.throttles == 1
    assert len(invoker.journal.entries("async.throttled")) == 1
    assert lab.invocations() == []
