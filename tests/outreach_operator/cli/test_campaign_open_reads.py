"""``campaign status`` and ``campaign cancel`` read only their own campaign's open emails: another
campaign of many Pending emails beside it changes neither what they read nor what they do."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from outreach import task_store
from outreach.email_task import email_task_id
from tests.outreach_operator.cli.campaign_support import CAMPAIGN, CAMPAIGN_ID, csv_file
from tests.outreach_operator.cli.campaign_support import email_items as _email_items
from tests.outreach_operator.cli.campaign_support import schedule_example as _schedule
from tests.outreach_operator.cli.conftest import Run, as_json, hook_clients, unhook_clients
from tests.support.aws import Resources

OTHER_ID = "autumn-outreach-2027"
# The other campaign's recipients (x 2 steps): ten times the example campaign's six emails.
OTHER_RECIPIENTS = 30
pytestmark = pytest.mark.usefixtures("ses_account")


@pytest.fixture
def items_read() -> Iterator[list[int]]:
    """The items each Query read from here on (its ``ScannedCount``, before any filter)."""
    read: list[int] = []

    def record(parsed: dict[str, Any], **_: Any) -> None:
        read.append(int(parsed.get("ScannedCount", 0)))

    hook_clients("after-call.dynamodb.Query", record, "test-items-read")
    yield read
    unhook_clients("after-call.dynamodb.Query", "test-items-read")


def _schedule_other_campaign(run: Run, email_flags: list[str], tmp_path: Path) -> None:
    """Another campaign of ``OTHER_RECIPIENTS`` x 2 Pending emails, scheduled beside the example one."""
    other = tmp_path / "other.yaml"
    other.write_text(CAMPAIGN.read_text(encoding="utf-8").replace(CAMPAIGN_ID, OTHER_ID), encoding="utf-8")
    rows = "".join(
        f"info@company-{i}.example,Company {i},https://company-{i}.example/,\n"
        for i in range(OTHER_RECIPIENTS)
    )
    recipients = csv_file(tmp_path, "email,company,website,contact_name\n" + rows)
    as_json(_schedule(run, email_flags, campaign=other, recipients=recipients))
    assert task_store.job_counts(OTHER_ID)["Pending"] == 2 * OTHER_RECIPIENTS


def test_the_next_send_time_is_read_from_the_campaigns_own_index_rows_only(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path, items_read: list[int]
) -> None:
    # GIVEN the example campaign's status, read with the campaign alone
    as_json(_schedule(run, email_flags))
    items_read.clear()
    alone = as_json(run("campaign", "status", CAMPAIGN_ID, extra=["--json"]))
    read_alone = sum(items_read)
    assert alone["next_send_at"] == "2027-03-01T08:00:00Z"
    # WHEN another campaign of ten times as many Pending emails is scheduled beside it
    _schedule_other_campaign(run, email_flags, tmp_path)
    items_read.clear()
    beside = as_json(run("campaign", "status", CAMPAIGN_ID, extra=["--json"]))
    # THEN status says the same and read as many items: the other campaign's emails are never read
    assert (beside["next_send_at"], beside["counts"]) == (alone["next_send_at"], alone["counts"])
    assert sum(items_read) == read_alone
    assert read_alone <= alone["counts"]["Pending"]


def test_cancel_reads_and_cancels_only_its_campaigns_pending_emails_with_another_campaign_beside(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path, items_read: list[int]
) -> None:
    # GIVEN the example campaign (six emails, one being sent) beside a campaign of sixty
    as_json(_schedule(run, email_flags))
    _schedule_other_campaign(run, email_flags, tmp_path)
    sending = task_store.get_task(email_task_id(CAMPAIGN_ID, "info@northwind.example", 1))
    assert sending is not None
    claimed = task_store.claim_email(sending, owner="worker-1", lease_seconds=300)
    other_before = [i for i in _email_items(resources) if i["job_id"]["S"] == OTHER_ID]
    # WHEN the example campaign is cancelled
    items_read.clear()
    report = as_json(run("campaign", "cancel", CAMPAIGN_ID, extra=["--json", *email_flags]))
    # THEN its five Pending emails are cancelled, the claimed one is left to its worker
    mine = [i for i in _email_items(resources) if i["job_id"]["S"] == CAMPAIGN_ID]
    pending = sorted(i["task_id"]["S"] for i in mine if i["task_id"]["S"] != claimed.task_id)
    assert sorted(report["cancelled"]) == pending
    assert [e["task_id"] for e in report["running_not_interrupted"]] == [claimed.task_id]
    # AND the command read exactly its own six open emails, none of the other campaign's
    assert sum(items_read) == len(mine) == 6
    # AND the other campaign is untouched
    assert [i for i in _email_items(resources) if i["job_id"]["S"] == OTHER_ID] == other_before
    assert task_store.job_counts(OTHER_ID)["Pending"] == 2 * OTHER_RECIPIENTS
