"""The ledger's records as stored: one by key (strongly consistent), or every record (a Scan).

The core reads stops (``contacts.stop_of``/``stops_of``); ``contacts show`` and ``contacts export``
need the whole record (last contacted, the soft bounces counted, an ``ok`` record's history), so they
read it here, through the task store's one reader (``task_store.batch_get`` / ``rows`` with the
ledger's table and key).
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from outreach import config, task_store

KEY = "contact_key"

# What a record shows, in this order (attributes the ledger may hold; issue 26 adds inbound mail's).
FIELDS = (
    "contact_key",
    "kind",
    "state",
    "state_rank",
    "since",
    "why",
    "source",
    "campaign_id",
    "soft_bounce_messages",
    "last_contacted_at",
    "last_campaign_id",
    "replied_at",
    "away_until",
    "updated_at",
)


def plain(item: dict[str, Any]) -> dict[str, Any]:
    """A stored record as JSON-ready values: numbers as int, a string set as its count and sorted ids."""
    shown: dict[str, Any] = {}
    for name, value in item.items():
        if isinstance(value, Decimal):
            shown[name] = int(value) if value == value.to_integral_value() else float(value)
        elif isinstance(value, set):
            shown[name] = sorted(str(v) for v in value)
        else:
            shown[name] = value
    return shown


def record(key: str) -> dict[str, Any] | None:
    """The record of ``key`` as stored (a strongly consistent read), or ``None`` if there is none."""
    found = task_store.batch_get([key], table=config.contacts_table(), key_name=KEY)
    return plain(found[0]) if found else None


def records(*, stops_only: bool) -> Iterator[dict[str, Any]]:
    """Every record of the ledger (a consistent Scan, page by page); with ``stops_only``, only those
    whose state stops sending (``state_rank`` above 0)."""
    request: dict[str, Any] = {"ConsistentRead": True}
    if stops_only:
        request.update(
            FilterExpression="state_rank > :ok",
            ExpressionAttributeValues=task_store.to_avs({":ok": 0}),
        )
    for item in task_store.rows("scan", request, table=config.contacts_table()):
        yield plain(item)
