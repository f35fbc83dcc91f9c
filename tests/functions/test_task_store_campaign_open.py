"""The sparse ``campaign-open`` index holds exactly a campaign's open email tasks, by status and send time:
written at creation, moved with every status change, left once an email is sent, cancelled or failed."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import boto3
import pytest

from outreach import task_store
from outreach.task_model import Status, Task
from tests.support.aws import REGION, Resources
from tests.support.email import FIRST_SEND, planned

LATER = "2027-03-10T08:30:00Z"
RECIPIENTS = [f"person{i}@example.org" for i in range(6)]


def _index(table: str) -> dict[str, tuple[str, str, str]]:
    """Every entry of the ``campaign-open`` index: task id -> (job, status, send time)."""
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    entries: list[dict[str, Any]] = []
    request: dict[str, Any] = {"TableName": table, "IndexName": "campaign-open"}
    while True:
        page = dynamodb.scan(**request)
        entries.extend(page["Items"])
        if "LastEvaluatedKey" not in page:
            break
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    return {e["task_id"]["S"]: (e["job_id"]["S"], e["status"]["S"], e["send_at"]["S"]) for e in entries}


def _stored(task_id: str) -> Task:
    task = task_store.get_task(task_id)
    assert task is not None
    return task


@pytest.fixture
def emails(resources: Resources) -> list[Task]:
    created = task_store.create_email_tasks([planned(address) for address in RECIPIENTS])
    task_store.create_scrape_job("scan-1", ["https://example.com"])
    return [_stored(task_id) for task_id in sorted(created.created)]


def test_an_email_leaving_pending_sent_cancelled_or_failed_leaves_the_campaign_open_index(
    resources: Resources, emails: list[Task]
) -> None:
    # GIVEN a campaign of six Pending emails (and a scrape job, whose task is never in the index)
    assert _index(resources.table) == {
        t.task_id: ("spring", "Pending", t.email.send_at) for t in emails if t.email
    }
    sent, cancelled, failed, running, deferred, waiting = emails
    # WHEN one is sent, one cancelled, one failed, one claimed, and one claimed then deferred
    claimed = task_store.claim_email(sent, owner="w-1", lease_seconds=300)
    task_store.finish_email(claimed, ses_message_id="ses-1")
    task_store.cancel_for_stop(cancelled, reason="contact_stopped: unsubscribed")
    task_store.fail_stale(failed, reason="too_late: the window closed")
    task_store.claim_email(running, owner="w-2", lease_seconds=300)
    held = task_store.claim_email(deferred, owner="w-3", lease_seconds=300)
    task_store.defer_email(held, send_at=LATER, reason="first_contact_limit: 1 of 1 today")
    # THEN the index holds the open ones only, each under its status and current send time
    assert waiting.email is not None and running.email is not None
    assert _index(resources.table) == {
        running.task_id: ("spring", "Running", running.email.send_at),
        deferred.task_id: ("spring", "Pending", LATER),
        waiting.task_id: ("spring", "Pending", waiting.email.send_at),
    }
    # AND the campaign's readers find them by status
    pending = {email.task_id for email in task_store.open_emails("spring", Status.PENDING)}
    assert pending == {deferred.task_id, waiting.task_id}
    assert [email.task_id for email in task_store.open_emails("spring", Status.RUNNING)] == [running.task_id]
    assert task_store.next_send_at("spring") == waiting.email.send_at


def test_the_next_send_time_is_one_row_a_shard_whatever_another_campaign_holds(
    resources: Resources, emails: list[Task]
) -> None:
    # GIVEN the campaign's next send time, read alone
    alone = task_store.IndexRead()
    first = task_store.next_send_at("spring", cost=alone)
    assert first == min(t.email.send_at for t in emails if t.email)
    # WHEN another campaign of many Pending emails, due earlier, is created beside it
    earlier = FIRST_SEND - timedelta(days=1)
    task_store.create_email_tasks(
        [replace(planned(f"other{i}@example.org", campaign="autumn"), send_at=earlier) for i in range(60)]
    )
    beside = task_store.IndexRead()
    # THEN the same time is read from as many rows, at most one a shard
    assert task_store.next_send_at("spring", cost=beside) == first
    assert beside.items == alone.items <= len(emails)
    assert task_store.next_send_at("nobody") is None


def test_a_row_carries_the_campaign_key_only_while_it_is_an_open_email(
    resources: Resources, emails: list[Task]
) -> None:
    rows = {row["task_id"]: row for row in task_store.batch_get([t.task_id for t in emails])}
    assert all(str(row["campaign_open_key"]).startswith("spring#Pending#") for row in rows.values())
    scrape = [row for row in task_store.rows("scan", {}) if row.get("kind") == "scrape"]
    assert len(scrape) == 1 and "campaign_open_key" not in scrape[0]
    task_store.cancel_for_stop(emails[0], reason="contact_stopped: bounced")
    (row,) = task_store.batch_get([emails[0].task_id])
    assert "campaign_open_key" not in row and "open_key" not in row
