"""SQS fair queues on the embedded AWS's standard queues: quiet tenants first, noisy ones by fewest in flight.

AWS: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-fair-queues-detailed.html
(how detection works, how message delivery order changes, when a noisy neighbor becomes quiet).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from embedded_aws.clock import VirtualClock, install_in_moto
from embedded_aws.sqs_fair_queues import share_standard_queues_fairly
from embedded_aws.sqs_queue_scans import scan_queues_with_one_clock_read
from tests.support.aws import REGION


@pytest.fixture
def frozen() -> Iterator[VirtualClock]:
    """moto's clock, moving only when advanced."""
    virtual = VirtualClock(1e-12)
    install_in_moto(virtual)
    yield virtual
    install_in_moto(None)
    virtual.close()


@pytest.fixture
def queue(aws_env: None, frozen: VirtualClock) -> Iterator[tuple[Any, str]]:
    scan_queues_with_one_clock_read()
    share_standard_queues_fairly()
    with mock_aws():
        sqs = boto3.client("sqs", region_name=REGION)
        yield sqs, sqs.create_queue(QueueName="scrape")["QueueUrl"]


def _send(sqs: Any, url: str, tenant: str, count: int) -> None:
    for n in range(count):
        sqs.send_message(
            QueueUrl=url, MessageBody=json.dumps({"task": f"{tenant}-{n}"}), MessageGroupId=tenant
        )


def _receive(sqs: Any, url: str, count: int = 1, visibility: int = 600) -> list[str]:
    """The tenants of ``count`` messages received one by one (each stays in flight)."""
    tenants = []
    for _ in range(count):
        (message,) = sqs.receive_message(
            QueueUrl=url, MaxNumberOfMessages=1, VisibilityTimeout=visibility, AttributeNames=["All"]
        )["Messages"]
        tenants.append(message["Attributes"]["MessageGroupId"])
    return tenants


def test_quiet_tenants_messages_come_before_the_older_messages_of_a_tenant_with_30_in_flight(
    queue: tuple[Any, str],
) -> None:
    sqs, url = queue
    # GIVEN a tenant with 30 messages in flight (all of the queue's, at least 30: noisy) and 10 waiting
    _send(sqs, url, "big", 40)
    assert _receive(sqs, url, 30) == ["big"] * 30
    # AND a quiet tenant's two messages sent after them
    _send(sqs, url, "small", 2)
    # WHEN consumers receive THEN the quiet tenant's messages come first, then the noisy one's as usual
    assert _receive(sqs, url, 3) == ["small", "small", "big"]


def test_among_noisy_tenants_the_one_with_fewest_in_flight_comes_first(queue: tuple[Any, str]) -> None:
    sqs, url = queue
    # GIVEN tenant a with 35 in flight and tenant b, sent later, with 31 in flight: both noisy
    _send(sqs, url, "a", 45)
    assert _receive(sqs, url, 35) == ["a"] * 35
    _send(sqs, url, "b", 45)
    assert _receive(sqs, url, 31) == ["b"] * 31
    # WHEN consumers receive THEN b's messages come first while b has fewer in flight than a
    assert _receive(sqs, url, 4) == ["b", "b", "b", "b"]
    assert _receive(sqs, url, 1) == ["a"]


def test_a_noisy_tenant_that_sent_nothing_for_5_minutes_is_quiet_again(
    queue: tuple[Any, str], frozen: VirtualClock
) -> None:
    sqs, url = queue
    # GIVEN a noisy tenant (30 in flight for 30 s, then visible again) and a quiet one, sent after it
    _send(sqs, url, "big", 40)
    assert _receive(sqs, url, 30, visibility=30) == ["big"] * 30
    _send(sqs, url, "small", 2)
    # WHEN its shares have dropped (nothing in flight, its processing out of the recent window) but its
    # backlog is not drained and it sent a message less than 5 minutes ago
    frozen.advance(91)
    # THEN it is still noisy: the quiet tenant's message comes first
    assert _receive(sqs, url, 1) == ["small"]
    # AND once it has sent nothing for 5 minutes it is quiet again: its older messages come first
    frozen.advance(300 - 91 + 1)
    assert _receive(sqs, url, 1) == ["big"]


class _Consumers:
    """``slots`` consumers, each holding a message for ``seconds``, then deleting it and receiving the
    next; the group of every message received, in order."""

    def __init__(self, sqs: Any, url: str, frozen: VirtualClock, slots: int, seconds: float) -> None:
        self.sqs, self.url, self.frozen, self.slots, self.seconds = sqs, url, frozen, slots, seconds
        self.held: list[tuple[float, str]] = []  # (ends, receipt handle)
        self.received: list[str] = []

    def run(self, seconds: float) -> None:
        """One second at a time for ``seconds``: delete what ended, fill the free slots."""
        for _ in range(int(seconds)):
            now = self.frozen.now()
            for _, handle in [h for h in self.held if h[0] <= now]:
                self.sqs.delete_message(QueueUrl=self.url, ReceiptHandle=handle)
            self.held = [h for h in self.held if h[0] > now]
            while len(self.held) < self.slots:
                messages = self.sqs.receive_message(
                    QueueUrl=self.url, MaxNumberOfMessages=1, VisibilityTimeout=600, AttributeNames=["All"]
                ).get("Messages", [])
                if not messages:
                    break
                self.held.append((now + self.seconds, messages[0]["ReceiptHandle"]))
                self.received.append(messages[0]["Attributes"]["MessageGroupId"])
            self.frozen.advance(1)


def test_a_job_spread_over_many_tenants_takes_the_slots_a_job_of_few_tenants_frees(
    queue: tuple[Any, str], frozen: VirtualClock
) -> None:
    sqs, url = queue
    # GIVEN a big job spread over 3 tenants (outreach.scrape_tenants: 343 sites) on 16 consumers whose
    # invocations end one after another (10 s each, started a second apart), its messages waiting behind
    for n in range(300):
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"n": n}), MessageGroupId=f"big#{n % 3}")
    consumers = _Consumers(sqs, url, frozen, 0, 10)
    for slots in range(1, 17):
        consumers.slots = slots
        consumers.run(1)
    consumers.run(30)
    # AND a small job of 34 messages over 30 tenants (34 sites) sent then
    for n in range(34):
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"n": n}), MessageGroupId=f"small#{n % 30}")
    # WHEN the consumers go on
    before = len(consumers.received)
    consumers.run(40)
    # THEN every slot freed goes to the small job until none of its messages waits, then to the big one
    after = [group.split("#")[0] for group in consumers.received[before:]]
    assert after[:34] == ["small"] * 34
    assert set(after[34:]) == {"big"}
