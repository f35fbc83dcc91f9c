"""Rules of the bench's call counter: every call inside the counting block, none outside, units per item."""

from __future__ import annotations

import boto3

from outreach import clients
from outreach_dev.bench.call_counter import call_count
from outreach_dev.bench.sandbox import REGION, sandbox


def test_calls_made_inside_the_counting_block_are_counted_and_those_outside_are_not() -> None:
    with sandbox("test-count") as box:
        sqs = clients.sqs()
        with call_count() as count:
            sqs.send_message(QueueUrl=box.queue_url, MessageBody="before")
            with count.counting():
                sqs.send_message(QueueUrl=box.queue_url, MessageBody="one")
                sqs.send_message_batch(
                    QueueUrl=box.queue_url,
                    Entries=[{"Id": str(i), "MessageBody": "x"} for i in range(3)],
                )
            boto3.client("sqs", region_name=REGION).get_queue_url(QueueName="test-count-scrape")
    assert dict(count.calls) == {"sqs:SendMessage": 1, "sqs:SendMessageBatch": 1}
    assert count.service_total("sqs") == 2


def test_a_transaction_is_one_call_and_two_write_units_per_item_it_writes() -> None:
    with sandbox("test-units") as box, call_count() as count, count.counting():
        clients.dynamodb().transact_write_items(
            TransactItems=[
                {"Put": {"TableName": box.table, "Item": {"task_id": {"S": f"t-{i}"}}}} for i in range(3)
            ]
        )
    assert dict(count.calls) == {"dynamodb:TransactWriteItems": 1}
    assert count.items_written == 3
    assert count.write_units == 6.0
