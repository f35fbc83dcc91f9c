"""The contact ledger around a command: what it stores, and stops recorded as the pipeline would."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import boto3

from outreach import contacts
from tests.outreach_operator.cli.conftest import CONTACTS_TABLE
from tests.support.aws import REGION

AT = datetime(2027, 2, 20, 10, 0, tzinfo=UTC)


def ledger_items() -> list[str]:
    """Every item of the ledger as stored (sorted JSON), for before/after comparisons."""
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    items = dynamodb.scan(TableName=CONTACTS_TABLE, ConsistentRead=True)["Items"]
    return sorted(json.dumps(item, sort_keys=True) for item in items)


def ledger_record(key: str) -> dict[str, Any] | None:
    """One record as plain values (a consistent GetItem)."""
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    found = dynamodb.get_item(TableName=CONTACTS_TABLE, Key={"contact_key": {"S": key}}, ConsistentRead=True)
    if "Item" not in found:
        return None
    return {name: next(iter(value.values())) for name, value in found["Item"].items()}


def record_address_stop(
    address: str, state: contacts.State, source: contacts.Source, why: str = "an SES event"
) -> None:
    """``address`` stopped as the event consumer or the unsubscribe endpoint would record it."""
    assert contacts.record_stop(
        contacts.address_key(address),
        state,
        at=AT,
        why=why,
        source=source,
        campaign_id="spring-outreach-2027",
    )


def record_domain_block(domain: str, why: str = "the whole company asked") -> None:
    assert contacts.record_stop(
        contacts.domain_key(domain), contacts.State.BLOCKED, at=AT, why=why, source=contacts.Source.OPERATOR
    )
