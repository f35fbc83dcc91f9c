"""A cancel reads of each open email only the fields it needs, each checked, the wrong one named."""

from __future__ import annotations

from typing import Any

import pytest

from outreach import clients, task_store
from outreach.errors import MalformedFieldError
from outreach.task_model import Status
from outreach.task_store.open_emails import OPEN_EMAIL_ATTRIBUTES, OpenEmail
from tests.support.aws import Resources
from tests.support.email import planned

RECIPIENTS = [f"person{i}@example.org" for i in range(4)]


@pytest.fixture
def created(resources: Resources) -> list[str]:
    return sorted(task_store.create_email_tasks([planned(address) for address in RECIPIENTS]).created)


def test_an_open_email_is_read_with_the_fields_its_cancel_needs_and_never_its_message(
    resources: Resources, created: list[str]
) -> None:
    answered: list[dict[str, Any]] = []

    def kept(parsed: dict[str, Any], **_: Any) -> None:
        answered.extend(parsed.get("Items", []))

    events = clients.dynamodb().meta.events
    events.register("after-call.dynamodb.Query", kept)
    try:
        emails = list(task_store.open_emails("spring", Status.PENDING))
    finally:
        events.unregister("after-call.dynamodb.Query", kept)
    assert sorted(email.task_id for email in emails) == created
    assert answered and all(set(item) <= set(OPEN_EMAIL_ATTRIBUTES) for item in answered)
    assert not any("message" in item or "rules" in item for item in answered)
    stored = task_store.get_task(created[0])
    assert stored is not None and stored.email is not None
    (first,) = [email for email in emails if email.task_id == created[0]]
    assert (first.recipient, first.send_at, first.schedule_name, first.step, first.updated_at) == (
        stored.email.recipient, stored.email.send_at, stored.email.schedule_name, stored.email.step,
        stored.updated_at,
    )  # fmt: skip
    assert (first.open_shard, first.lease_owner, first.failure_reason) == (stored.open_shard, None, None)


WRONG = {
    "recipient": ("recipient", "two@example.org, three@example.org"),
    "send_at": ("send_at", "tomorrow"),
    "schedule_name": ("schedule_name", "someone-elses"),
    "step": ("step", 0),
    "status": ("status", "Waiting"),
    "updated_at": ("updated_at", None),
}


@pytest.mark.parametrize("field,value", WRONG.values(), ids=WRONG.keys())
def test_an_open_email_with_a_field_the_task_store_never_writes_is_refused_naming_it(
    resources: Resources, created: list[str], field: str, value: Any
) -> None:
    (row,) = task_store.batch_get([created[0]])
    projected = {name: row[name] for name in OPEN_EMAIL_ATTRIBUTES if name in row}
    if value is None:
        del projected[field]
    else:
        projected[field] = value
    with pytest.raises(MalformedFieldError) as refused:
        OpenEmail.from_item(projected)
    assert refused.value.field == field
    assert created[0] in str(refused.value)
