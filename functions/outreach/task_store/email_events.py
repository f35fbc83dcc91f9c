"""What came back about a sent email, marked on its task and counted per campaign step, exactly once.

The events are SES's (delivered, bounced, complained, ...: the SES-events consumer, and the inbound
processor for a delivery report or an unsubscribe by mail) and the inbound processor's own: a person
replied to the email (``replied``), an automatic reply came (``auto_replied``), a message answering it
was forwarded and SES accepted the forward (``forwarded``). Each is counted once per email: a second
reply to the same email is recorded in the ledger (``contacts.record_reply``) but not counted again.

An event mark is the counter discipline of the job counters applied to events: one TransactWriteItems
sets ``<kind>_at`` on the task only if it is not set yet (the status is left as it is) and adds one to
``events_s<step>_<kind>`` on the task's counter shard. A duplicate event fails the task's condition,
so the whole transaction is refused and nothing is counted twice.
https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html
"""

from __future__ import annotations

import re
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, cast

from botocore.exceptions import ClientError

from outreach import clients, config
from outreach.email_task import utc_iso
from outreach.task_model import Task
from outreach.task_store.counters import COUNTER_SHARDS, counter_key, counter_shard, counter_update
from outreach.task_store.items import batch_get, is_condition_failure, to_av

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef


class EmailEvent(StrEnum):
    """The events marked on an email task (SES's SEND event is the task's own ``Finished``); the last
    three are the inbound processor's."""

    DELIVERED = "delivered"
    BOUNCED_HARD = "bounced_hard"
    BOUNCED_SOFT = "bounced_soft"
    COMPLAINED = "complained"
    UNSUBSCRIBED = "unsubscribed"
    REJECTED = "rejected"
    DELAYED = "delayed"
    RENDERING_FAILED = "rendering_failed"
    REPLIED = "replied"
    AUTO_REPLIED = "auto_replied"
    FORWARDED = "forwarded"

    @property
    def attribute(self) -> str:
        """The task attribute that holds the event's time (``delivered_at``)."""
        return f"{self.value}_at"


_COUNTER = re.compile(r"events_s([1-9][0-9]*)_([a-z_]+)")


def event_counter(step: int, kind: EmailEvent) -> str:
    """The counter of a campaign step's events of one kind, on each counter shard."""
    return f"events_s{step}_{EmailEvent(kind).value}"


def record_email_event(task: Task, kind: EmailEvent, at: datetime) -> bool:
    """Mark ``kind`` on the email task at ``at`` and count it for its step; ``False`` when the task holds
    this mark already (a duplicate event) or is gone: then nothing is counted."""
    if task.email is None:
        raise ValueError(f"{task.task_id} is not an email task")
    event = EmailEvent(kind)
    table = config.tasks_table()
    mark = cast(
        "TransactWriteItemTypeDef",
        {
            "Update": {
                "TableName": table,
                "Key": {"task_id": to_av(task.task_id)},
                "UpdateExpression": "SET #mark = :at",
                "ConditionExpression": "attribute_exists(task_id) AND attribute_not_exists(#mark)",
                "ExpressionAttributeNames": {"#mark": event.attribute},
                "ExpressionAttributeValues": {":at": to_av(utc_iso(at))},
            }
        },
    )
    count = counter_update(
        table, task.job_id, counter_shard(task.task_id), {event_counter(task.email.step, event): 1}
    )
    try:
        clients.dynamodb().transact_write_items(TransactItems=[mark, count])
    except ClientError as exc:
        if is_condition_failure(exc):
            return False
        raise
    return True


def email_event_counts(campaign_id: str) -> dict[int, dict[str, int]]:
    """Events per step and kind of a campaign (every kind, 0 where none came), summed over its counter
    shards; steps without any event are left out."""
    totals: dict[int, dict[str, int]] = {}
    kinds = {event.value for event in EmailEvent}
    for row in batch_get([counter_key(campaign_id, shard) for shard in range(COUNTER_SHARDS)]):
        for name, value in row.items():
            found = _COUNTER.fullmatch(name)
            if found is None or found.group(2) not in kinds:
                continue
            step = totals.setdefault(int(found.group(1)), dict.fromkeys(sorted(kinds), 0))
            step[found.group(2)] += int(value)
    return dict(sorted(totals.items()))
