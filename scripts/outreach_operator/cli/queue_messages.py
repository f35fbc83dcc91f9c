"""Reading a dead-letter queue without consuming it: receive, look, and hand the messages back.

A received message is invisible for the visibility timeout given here; the command either deletes it
(it was handled) or makes it visible again at once (ChangeMessageVisibility 0), so a message a
command did not handle stays in the queue for the next look.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from outreach import clients

_RECEIVE_MAX = 10


def receive(queue_url: str, limit: int, *, hold_seconds: int = 120) -> list[dict[str, Any]]:
    """Up to ``limit`` distinct messages with all attributes, held invisible for ``hold_seconds``."""
    seen: dict[str, dict[str, Any]] = {}
    while len(seen) < limit:
        batch = (
            clients.sqs()
            .receive_message(
                QueueUrl=queue_url,
                MaxNumberOfMessages=min(_RECEIVE_MAX, limit - len(seen)),
                VisibilityTimeout=hold_seconds,
                WaitTimeSeconds=0,
                MessageAttributeNames=["All"],
                AttributeNames=["All"],
            )
            .get("Messages", [])
        )
        fresh = [m for m in batch if m["MessageId"] not in seen]
        if not fresh:
            break
        for message in fresh:
            seen[message["MessageId"]] = dict(message)
    return list(seen.values())


def release(queue_url: str, messages: Sequence[dict[str, Any]]) -> None:
    """Make received messages visible again at once."""
    for start in range(0, len(messages), _RECEIVE_MAX):
        chunk = messages[start : start + _RECEIVE_MAX]
        if not chunk:
            continue
        response = clients.sqs().change_message_visibility_batch(
            QueueUrl=queue_url,
            Entries=[
                {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0}
                for i, m in enumerate(chunk)
            ],
        )
        if response.get("Failed"):
            raise RuntimeError(
                f"could not hand back {len(response['Failed'])} messages: {response['Failed']}"
            )


def delete(queue_url: str, message: dict[str, Any]) -> None:
    clients.sqs().delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])


def attribute(message: dict[str, Any], name: str) -> str | None:
    """A message attribute's string value, if the message carries it."""
    value = (message.get("MessageAttributes") or {}).get(name)
    if not isinstance(value, dict):
        return None
    text = value.get("StringValue")
    return str(text) if text is not None else None


def queue_arn(queue_url: str) -> str:
    attributes = clients.sqs().get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])
    return str(attributes["Attributes"]["QueueArn"])


def depth(queue_url: str) -> dict[str, int]:
    attributes = clients.sqs().get_queue_attributes(
        QueueUrl=queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return {
        "visible": int(attributes.get("ApproximateNumberOfMessages", 0)),
        "in_flight": int(attributes.get("ApproximateNumberOfMessagesNotVisible", 0)),
    }
