"""Rules of reading an inbound-queue record: only an SNS envelope of SES's Received notification for an
S3 action of the inbound bucket is read, every field bounded, and anything else names its field."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from outreach.errors import MalformedFieldError
from outreach.inbound.notification import MAX_RECIPIENTS, parse
from tests.functions.inbound.inbound_support import BUCKET, envelope, notification

AT = datetime(2027, 3, 2, 9, 30, 12, 345000, tzinfo=UTC)
SES_ID = "d6iitobk75ur44p8kdnnp7g2n800abcdefghijkl"


def _body(change: Callable[[dict[str, Any]], None] | None = None, **options: Any) -> str:
    received = notification(
        SES_ID, ["Reply+Abc.Def@reply.example.com", "x@reply.example.com"], at=AT, **options
    )
    if change is not None:
        change(received)
    return envelope(received)


def test_a_received_notification_names_its_message_and_object() -> None:
    found = parse(_body(), bucket=BUCKET)
    assert found.ses_message_id == SES_ID
    assert found.received_at == AT
    assert found.recipients == ("reply+abc.def@reply.example.com", "x@reply.example.com")
    assert (found.bucket, found.object_key) == (BUCKET, f"inbound/{SES_ID}")
    assert (found.spam_verdict, found.virus_verdict, found.has_virus) == ("PASS", "PASS", False)


def test_a_virus_verdict_of_fail_is_read() -> None:
    assert parse(_body(virus="FAIL"), bucket=BUCKET).has_virus


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(received: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node = received
        for name in parents:
            node = node[name]
        if value is KeyError:
            del node[last]
        else:
            node[last] = value

    return change


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (_set("notificationType", "Bounce"), "notificationType"),
        (_set("receipt.action.type", "Lambda"), "receipt.action.type"),
        (_set("receipt.action.bucketName", "someone-elses"), "receipt.action.bucketName"),
        (_set("receipt.action.objectKey", "other/key"), "receipt.action.objectKey"),
        (_set("receipt.action.objectKey", "inbound/../secret"), "receipt.action.objectKey"),
        (_set("receipt.action.objectKey", "inbound/a b"), "receipt.action.objectKey"),
        (_set("mail.messageId", KeyError), "mail.messageId"),
        (_set("mail.messageId", "id with spaces"), "mail.messageId"),
        (_set("mail.messageId", "x" * 300), "mail.messageId"),
        (_set("mail.timestamp", "yesterday"), "mail.timestamp"),
        (_set("receipt.recipients", []), "receipt.recipients"),
        (_set("receipt.recipients", ["no-at-sign"]), "receipt.recipients[0]"),
        (_set("receipt.recipients", ["a@b.example", "x" * 400 + "@b.example"]), "receipt.recipients[1]"),
        (_set("receipt.virusVerdict", {"status": "MAYBE"}), "receipt.virusVerdict.status"),
        (_set("mail", "text"), "mail"),
    ],
)
def test_a_notification_that_is_not_what_ses_writes_is_refused_naming_its_field(
    change: Callable[[dict[str, Any]], None], field: str
) -> None:
    with pytest.raises(MalformedFieldError) as refused:
        parse(_body(change), bucket=BUCKET)
    assert refused.value.field == field


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ("not json", "body"),
        ("[]", "body"),
        (json.dumps({"Type": "SubscriptionConfirmation", "Message": "{}"}), "Type"),
        (json.dumps({"Type": "Notification", "Message": "not json"}), "Message"),
        (json.dumps({"Type": "Notification"}), "Message"),
        ("x" * (300 * 1024), "body"),
    ],
)
def test_a_record_that_is_no_sns_envelope_is_refused_naming_its_field(body: str, field: str) -> None:
    with pytest.raises(MalformedFieldError) as refused:
        parse(body, bucket=BUCKET)
    assert refused.value.field == field


def test_recipients_are_bounded_and_each_is_read_once() -> None:
    many = [f"r{i}@reply.example.com" for i in range(MAX_RECIPIENTS + 50)]
    found = parse(_body(_set("receipt.recipients", [*many[:3], many[0].upper(), *many])), bucket=BUCKET)
    assert found.recipients[:3] == tuple(many[:3])
    assert len(found.recipients) <= MAX_RECIPIENTS
