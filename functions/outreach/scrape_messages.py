"""A scrape task's SQS message: its body names the task, its message group names the task's tenant.

The scrape queue is a standard queue shared by every job running at once. SQS fair queues treat the
``MessageGroupId`` of a message on a standard queue as its tenant: when one tenant holds a
disproportionate share of the in-flight messages, messages of the other tenants are returned first,
so a small job started while a large one runs is not queued behind all of it ("Amazon SQS fair
queues", https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-fair-queues.html
and https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-fair-queues-detailed.html).
On a standard queue the group id orders nothing and deduplicates nothing: delivery stays at least once
and unordered, which the scraper already handles.

Every sender of a scrape message builds it here, so the body and the group are defined once. The
group is the tenant the task's row names (``task_model.Task.tenant``, :mod:`outreach.scrape_tenants`:
one of the few to many tenants its job is spread over, or the job itself for a row that names none),
a valid ``MessageGroupId`` (up to 128 characters, alphanumerics and punctuation;
https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from mypy_boto3_sqs.type_defs import SendMessageBatchRequestEntryTypeDef


class ScrapeMessage(TypedDict):
    """The parameters of SendMessage a scrape message sets."""

    MessageBody: str
    MessageGroupId: str


def scrape_message(task_id: str, tenant: str) -> ScrapeMessage:
    """The ``MessageBody`` and ``MessageGroupId`` of the message for one scrape task in ``tenant``."""
    return {"MessageBody": json.dumps({"task_id": task_id}), "MessageGroupId": tenant}


def scrape_batch_entry(entry_id: str, task_id: str, tenant: str) -> SendMessageBatchRequestEntryTypeDef:
    """The same message as one SendMessageBatch entry named ``entry_id``."""
    message = scrape_message(task_id, tenant)
    return {
        "Id": entry_id,
        "MessageBody": message["MessageBody"],
        "MessageGroupId": message["MessageGroupId"],
    }
