"""The ledger's records as stored: one by key (strongly consistent), or every contact's record (a Scan).

The core reads stops (``contacts.stop_of``/``stops_of``); ``contacts show`` and ``contacts export``
need the whole record (last contacted, the soft bounces counted, the campaigns replied in, an ``ok``
record's history), so they read it here, through the task store's one reader
(``task_store.batch_get`` / ``rows`` with the ledger's table and key).

The ledger's table also holds the inbound processor's receipts (``inbound#<sha256>``, with a
``receipt_state`` and no address, ``inbound.receipts``): they are no contact, and ``records`` leaves
them (and any other kind of key) out with its filter on the key's prefix.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from outreach import config, contacts, task_store

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
    "replied_campaigns",
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


# The records of contacts: an address's and a domain's (not the inbound receipts beside them).
_CONTACTS = f"(begins_with({KEY}, :address) OR begins_with({KEY}, :domain))"


def records(*, stops_only: bool) -> Iterator[dict[str, Any]]:
    """Every address and domain record of the ledger (a consistent Scan, page by page, filtered on the
    key's prefix); with ``stops_only``, only those whose state stops sending (``state_rank`` above 0)."""
    values: dict[str, Any] = {":address": contacts.ADDRESS_PREFIX, ":domain": contacts.DOMAIN_PREFIX}
    expression = _CONTACTS
    if stops_only:
        expression = f"{_CONTACTS} AND state_rank > :ok"
        values[":ok"] = 0
    request: dict[str, Any] = {
        "ConsistentRead": True,
        "FilterExpression": expression,
        "ExpressionAttributeValues": task_store.to_avs(values),
    }
    for item in task_store.rows("scan", request, table=config.contacts_table()):
        yield plain(item)
