"""Rules of the task store's email additions: every email row carries its normalised recipient, so the
``recipient-emails`` index finds the emails to an address in every campaign; an SES event is marked on
its task and counted for its step exactly once, however often it is delivered; a stop cancels only a
Pending, unclaimed email."""

from __future__ import annotations

from datetime import UTC, datetime

import boto3
import pytest

from outreach import config, task_store
from outreach.errors import InvalidJobInputError, TransitionRejectedError
from outreach.task_model import Status, Task
from outreach.task_store import EmailEvent
from outreach_dev import tasks_table_shape
from tests.support.aws import REGION, Resources
from tests.support.email import planned

AT = datetime(2027, 3, 2, 9, 0, tzinfo=UTC)


def _task(task_id: str) -> Task:
    task = task_store.get_task(task_id)
    assert task is not None
    return task


def test_the_recipient_index_is_the_one_terraform_declares() -> None:
    definition = tasks_table_shape.table_definition()
    (index,) = [i for i in definition["GlobalSecondaryIndexes"] if i["IndexName"] == "recipient-emails"]
    assert index["KeySchema"] == [{"AttributeName": "recipient_key", "KeyType": "HASH"}]
    assert index["Projection"] == {"ProjectionType": "KEYS_ONLY"}
    assert task_store.RECIPIENT_EMAILS_INDEX == "recipient-emails"


def test_every_email_row_carries_its_normalised_recipient_and_the_index_finds_them_in_every_campaign(
    resources: Resources,
) -> None:
    spring = [planned("Anna@Example.org", step) for step in (1, 2)] + [planned("bert@example.org")]
    autumn = [planned("anna@example.org", campaign="autumn")]
    task_store.create_email_tasks(spring)
    task_store.create_email_tasks(autumn)
    row = boto3.client("dynamodb", region_name=REGION).get_item(
        TableName=config.tasks_table(), Key={"task_id": {"S": spring[0].task_id}}
    )["Item"]
    assert row["recipient_key"] == {"S": "anna@example.org"}
    assert row["recipient"] == {"S": "Anna@Example.org"}
    found = task_store.email_tasks_to(" ANNA@example.ORG")
    assert [t.task_id for t in found] == sorted(e.task_id for e in [*spring[:2], *autumn])
    assert all(t.status is Status.PENDING for t in found)
    assert task_store.email_tasks_to("nobody@example.org") == []


def test_a_recipient_that_is_not_one_address_is_refused_before_anything_is_written(
    resources: Resources,
) -> None:
    with pytest.raises(InvalidJobInputError, match="recipient"):
        task_store.create_email_tasks([planned("anna@example.org"), planned("not an address")])
    assert task_store.job_counts("spring")["Pending"] == 0


def test_cancel_for_stop_cancels_only_a_pending_unclaimed_email(resources: Resources) -> None:
    email = planned("anna@example.org")
    task_store.create_email_tasks([email])
    pending = _task(email.task_id)
    claimed = task_store.claim_email(pending, owner="worker-1", lease_seconds=60)
    with pytest.raises(TransitionRejectedError):
        task_store.cancel_for_stop(pending, reason="contact_stopped: x")
    with pytest.raises(TransitionRejectedError):
        task_store.cancel_for_stop(claimed, reason="contact_stopped: x")
    assert _task(email.task_id).status is Status.RUNNING
    task_store.return_email_to_pending(claimed, error="throttled")
    task_store.cancel_for_stop(_task(email.task_id), reason="contact_stopped: x")
    cancelled = _task(email.task_id)
    assert (cancelled.status, cancelled.failure_reason) == (Status.CANCELLED, "contact_stopped: x")
    counts = task_store.job_counts("spring")
    assert (counts["Pending"], counts["Running"], counts["Cancelled"]) == (0, 0, 1)


def test_an_event_is_marked_and_counted_once_however_often_it_is_delivered(resources: Resources) -> None:
    emails = [planned(f"p{i}@example.org", step) for i in range(4) for step in (1, 2)]
    task_store.create_email_tasks(emails)
    deliveries = [
        (emails[0], EmailEvent.DELIVERED),
        (emails[0], EmailEvent.DELIVERED),
        (emails[0], EmailEvent.COMPLAINED),
        (emails[2], EmailEvent.DELIVERED),
        (emails[2], EmailEvent.BOUNCED_SOFT),
        (emails[2], EmailEvent.BOUNCED_SOFT),
        (emails[4], EmailEvent.BOUNCED_HARD),
        (emails[1], EmailEvent.DELIVERED),
        (emails[1], EmailEvent.UNSUBSCRIBED),
        (emails[1], EmailEvent.UNSUBSCRIBED),
    ]
    first_time = [task_store.record_email_event(_task(e.task_id), kind, AT) for e, kind in deliveries]
    # Every event delivered once more, a day later: nothing is marked or counted again.
    again = [
        task_store.record_email_event(_task(e.task_id), kind, AT.replace(day=3)) for e, kind in deliveries
    ]
    assert first_time == [True, False, True, True, True, False, True, True, True, False]
    assert not any(again)
    counts = task_store.email_event_counts("spring")
    zero = dict.fromkeys((kind.value for kind in EmailEvent), 0)
    assert counts == {
        1: {**zero, "delivered": 2, "complained": 1, "bounced_soft": 1, "bounced_hard": 1},
        2: {**zero, "delivered": 1, "unsubscribed": 1},
    }
    row = boto3.client("dynamodb", region_name=REGION).get_item(
        TableName=config.tasks_table(), Key={"task_id": {"S": emails[0].task_id}}
    )["Item"]
    assert (row["delivered_at"], row["complained_at"]) == ({"S": "2027-03-02T09:00:00Z"},) * 2
    # The marks leave status, counters of statuses and updated_at alone.
    assert row["status"] == {"S": "Pending"}
    assert task_store.job_counts("spring")["Pending"] == len(emails)
    assert _task(emails[0].task_id).updated_at == _task(emails[0].task_id).created_at


def test_an_event_about_a_task_that_is_gone_counts_nothing(resources: Resources) -> None:
    email = planned("anna@example.org")
    task_store.create_email_tasks([email])
    task = _task(email.task_id)
    boto3.client("dynamodb", region_name=REGION).delete_item(
        TableName=config.tasks_table(), Key={"task_id": {"S": email.task_id}}
    )
    assert not task_store.record_email_event(task, EmailEvent.DELIVERED, AT)
    assert task_store.email_event_counts("spring") == {}


@pytest.mark.parametrize(
    ("kind", "attribute", "counter"),
    [
        (EmailEvent.REPLIED, "replied_at", "events_s2_replied"),
        (EmailEvent.AUTO_REPLIED, "auto_replied_at", "events_s2_auto_replied"),
        (EmailEvent.FORWARDED, "forwarded_at", "events_s2_forwarded"),
    ],
)
def test_what_came_back_by_mail_is_marked_and_counted_for_its_step_once_like_an_ses_event(
    resources: Resources, kind: EmailEvent, attribute: str, counter: str
) -> None:
    emails = [planned("anna@example.org", step) for step in (1, 2)]
    task_store.create_email_tasks(emails)
    second = _task(emails[1].task_id)
    assert (kind.attribute, task_store.event_counter(2, kind)) == (attribute, counter)
    assert task_store.record_email_event(second, kind, AT)
    assert not task_store.record_email_event(second, kind, AT.replace(day=3))
    zero = dict.fromkeys((event.value for event in EmailEvent), 0)
    assert task_store.email_event_counts("spring") == {2: {**zero, kind.value: 1}}
    row = boto3.client("dynamodb", region_name=REGION).get_item(
        TableName=config.tasks_table(), Key={"task_id": {"S": emails[1].task_id}}
    )["Item"]
    assert row[attribute] == {"S": "2027-03-02T09:00:00Z"}
    shards = boto3.client("dynamodb", region_name=REGION).scan(
        TableName=config.tasks_table(),
        FilterExpression="kind = :k",
        ExpressionAttributeValues={":k": {"S": "job_counter"}},
    )["Items"]
    assert sum(int(item[counter]["N"]) for item in shards if counter in item) == 1
