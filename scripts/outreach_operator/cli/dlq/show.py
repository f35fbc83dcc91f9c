"""``dlq show scrape``: the scrape DLQ's messages with their reason, receive count and task status."""

from __future__ import annotations

import json
from typing import Any

from outreach import task_store
from outreach_operator.cli import queue_messages as queue
from outreach_operator.cli.output import Session, table


def show_scrape_dlq(s: Session, limit: int) -> None:
    """Up to ``limit`` messages of the scrape DLQ, described and handed back (left in place)."""
    url = s.targets.require("scrape_dlq_url", "--dlq-url")
    messages = queue.receive(url, limit, hold_seconds=30)
    try:
        rows = [describe_scrape_message(m) for m in messages]
    finally:
        queue.release(url, messages)
    columns = ["message_id", "reason", "receive_count", "task_id", "task_status"]
    s.emit(
        rows,
        lambda c: c.print(
            table(f"{len(rows)} messages in the scrape DLQ", columns, [[r[k] for k in columns] for r in rows])
        ),
    )


def describe_scrape_message(message: dict[str, Any]) -> dict[str, Any]:
    task_id = _task_id(message.get("Body", ""))
    task = task_store.get_task(task_id) if task_id else None
    receives = queue.attribute(message, "receive_count") or message.get("Attributes", {}).get(
        "ApproximateReceiveCount"
    )
    return {
        "message_id": message["MessageId"],
        "reason": queue.attribute(message, "reason") or "receives exhausted (maxReceiveCount)",
        "receive_count": int(receives) if receives else None,
        "task_id": task_id,
        "task_status": task.status.value if task else None,
        "body": message.get("Body", "")[:200],
    }


def _task_id(body: str) -> str | None:
    try:
        payload = json.loads(body)
    except json.JSONDecodeError:  # an unreadable body is shown as it is
        return None
    value = payload.get("task_id") if isinstance(payload, dict) else None
    return value if isinstance(value, str) else None
