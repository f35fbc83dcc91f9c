"""The embedded AWS's queue scans read the clock once per scan and answer what per-message reads answer."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from moto.sqs import models

from embedded_aws.base import client
from embedded_aws.clock import VirtualClock

REGION = "eu-central-1"


def _queue(name: str) -> Any:
    """moto's model of the queue ``name`` in the embedded server's (in-process) backend."""
    return models.sqs_backends["123456789012"][REGION].get_queue(name)


@pytest.fixture
def clock_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many times moto's SQS models read the clock since the test started counting."""
    reads = [0]
    original: Callable[[Any], float] = vars(models)["unix_time_millis"]

    def counted(dt: Any = None) -> float:
        reads[0] += 1
        return original(dt)

    monkeypatch.setattr(models, "unix_time_millis", counted)
    yield reads


def test_visible_delayed_and_in_flight_messages_are_told_apart_as_moto_tells_them(
    clock: VirtualClock, endpoint: str
) -> None:
    # GIVEN a queue with 4 visible messages, 3 received (in flight) and 2 delayed
    sqs = client("sqs", endpoint, REGION)
    url = sqs.create_queue(QueueName="scan-mix", Attributes={"VisibilityTimeout": "600"})["QueueUrl"]
    for n in range(7):
        sqs.send_message(QueueUrl=url, MessageBody=f"m{n}")
    for n in range(2):
        sqs.send_message(QueueUrl=url, MessageBody=f"late{n}", DelaySeconds=900)
    received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=3)["Messages"]
    assert len(received) == 3
    queue = _queue("scan-mix")
    # THEN every count equals the per-message answer of moto's own Message properties
    assert [m.body for m in queue.messages] == [
        m.body for m in queue._messages if m.visible and not m.delayed
    ]
    assert len(queue.messages) == queue.approximate_number_of_messages == 4
    in_flight = sum(not m.visible for m in queue._messages)
    assert queue.approximate_number_of_messages_not_visible == in_flight == 3
    delayed = sum(m.delayed for m in queue._messages)
    assert queue.approximate_number_of_messages_delayed == delayed == 2
    # AND the API reports the same figures
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attributes["ApproximateNumberOfMessages"] == "4"
    assert attributes["ApproximateNumberOfMessagesNotVisible"] == "3"
    assert attributes["ApproximateNumberOfMessagesDelayed"] == "2"
    # AND WHEN the visibility timeout and the delay pass, all nine are visible again
    clock.advance(901)
    assert queue.approximate_number_of_messages == 9
    assert queue.approximate_number_of_messages_not_visible == 0
    assert queue.approximate_number_of_messages_delayed == 0


def test_sending_to_a_full_queue_reads_the_clock_as_often_as_sending_to_an_empty_one(
    clock: VirtualClock, endpoint: str, clock_reads: list[int]
) -> None:
    # GIVEN a queue holding 5 messages and one holding 500
    sqs = client("sqs", endpoint, REGION)
    urls = {}
    for name, held in (("scan-small", 5), ("scan-large", 500)):
        urls[name] = sqs.create_queue(QueueName=name)["QueueUrl"]
        for start in range(0, held, 10):
            entries = [{"Id": str(i), "MessageBody": f"{start + i}"} for i in range(min(10, held - start))]
            sqs.send_message_batch(QueueUrl=urls[name], Entries=entries)
    reads = {}
    # WHEN one more message is sent to each
    for name, url in urls.items():
        clock_reads[0] = 0
        sqs.send_message(QueueUrl=url, MessageBody="one more")
        reads[name] = clock_reads[0]
    # THEN the send reads the clock the same handful of times whatever the queue holds
    assert reads["scan-large"] == reads["scan-small"] <= 10
