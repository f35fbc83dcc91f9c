"""What the contact ledger's tests share: event times, and a record read back as stored."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import boto3

from outreach import config, contacts
from outreach.task_store import from_item
from tests.support.aws import REGION

T0 = datetime(2027, 3, 2, 8, 0, tzinfo=UTC)


def at(minutes: int) -> datetime:
    """An event time ``minutes`` after ``T0``."""
    return T0 + timedelta(minutes=minutes)


def record(key: str) -> dict[str, Any] | None:
    """The ledger's record of ``key`` as stored (a strongly consistent read), or ``None``."""
    item = boto3.client("dynamodb", region_name=REGION).get_item(
        TableName=config.contacts_table(), Key={contacts.KEY: {"S": key}}, ConsistentRead=True
    )
    return None if "Item" not in item else from_item(item["Item"])
