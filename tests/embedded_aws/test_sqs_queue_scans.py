"""The embedded AWS's queue scans read the clock once per scan and answer what per-message reads answer."""

from __future__ import annotations

import json
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


class _CountedMessages(list[Any]):
    """A queue's message list that counts the walks over it."""

    walks = 0

    def __iter__(self) -> Iterator[Any]:
        type(self).walks += 1
        return super().__iter__()


def test_a_send_walks_none_of_the_messages_already_in_the_queue(
    clock: VirtualClock, endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a queue holding 300 messages, its message list counting the walks over it
    sqs = client("sqs", endpoint, REGION)
    url = sqs.create_queue(QueueName="scan-walks")["QueueUrl"]
    for start in range(0, 300, 10):
        sqs.send_message_batch(
            QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": f"{start + i}"} for i in range(10)]
        )
    queue = _queue("scan-walks")
    monkeypatch.setattr(queue, "_messages", _CountedMessages(queue._messages))
    _CountedMessages.walks = 0
    # WHEN a batch of ten more is sent
    sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": "more"} for i in range(10)])
    # THEN no message already queued was looked at (SQS's sends do not slow as a queue fills)
    assert _CountedMessages.walks == 0
    assert len(queue._messages) == 310
    # AND the counts still walk the queue when they are asked for
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    assert attributes["Attributes"] == {"ApproximateNumberOfMessages": "310"}


def test_queue_attributes_read_when_asked_answer_what_moto_builds(clock: VirtualClock, endpoint: str) -> None:
    # GIVEN a FIFO queue with content-based deduplication and a redrive policy
    sqs = client("sqs", endpoint, REGION)
    dlq = sqs.create_queue(QueueName="scan-dlq.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    redrive = {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 3}
    url = sqs.create_queue(
        QueueName="scan-attrs.fifo",
        Attributes={
            "FifoQueue": "true",
            "ContentBasedDeduplication": "true",
            "RedrivePolicy": json.dumps(redrive),
        },
    )["QueueUrl"]
    # WHEN the same body is sent twice and every attribute is read
    for _ in range(2):
        sqs.send_message(QueueUrl=url, MessageBody="same", MessageGroupId="g")
    everything = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    # THEN the second send was deduplicated by content, as the attribute says
    assert everything["ContentBasedDeduplication"] == "true"
    assert everything["FifoQueue"] == "true"
    assert everything["ApproximateNumberOfMessages"] == "1"
    # AND the redrive policy reads back as the JSON it was set as
    assert json.loads(everything["RedrivePolicy"]) == redrive
    # AND a named attribute comes alone, an attribute the queue lacks not at all
    named = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["FifoQueue", "KmsMasterKeyId"])
    assert named["Attributes"] == {"FifoQueue": "true"}
