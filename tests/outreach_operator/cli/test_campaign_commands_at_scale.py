"""``campaign cancel`` and ``campaign status`` at a campaign's size: tasks cancelled in batches with each
task's condition kept, schedules deleted many at once with throttling retried, status read without a Scan.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from outreach import task_store
from outreach.email_task import email_schedule_name
from tests.outreach_operator.cli.campaign_support import CAMPAIGN_ID, csv_file
from tests.outreach_operator.cli.campaign_support import email_items as _email_items
from tests.outreach_operator.cli.campaign_support import schedule_example as _schedule
from tests.outreach_operator.cli.campaign_support import schedules as _schedules
from tests.outreach_operator.cli.conftest import Run, as_json, hook_clients, unhook_clients
from tests.support.aws import Resources

# 60 recipients x 2 steps: 120 emails, more than one transaction's 99 tasks across the 10 shards.
RECIPIENTS = 60
pytestmark = pytest.mark.usefixtures("ses_account")


@pytest.fixture
def many(tmp_path: Path) -> Path:
    rows = "".join(
        f"info@company-{i}.example,Company {i},https://company-{i}.example/,\n" for i in range(RECIPIENTS)
    )
    return csv_file(tmp_path, "email,company,website,contact_name\n" + rows)


def test_cancel_writes_tasks_in_batches_leaves_an_email_claimed_mid_batch_and_counts_exactly(
    run: Run, resources: Resources, email_flags: list[str], many: Path, calls: list[str]
) -> None:
    as_json(_schedule(run, email_flags, recipients=many))
    items = _email_items(resources)
    assert len(items) == 2 * RECIPIENTS
    victim = task_store.get_task(items[7]["task_id"]["S"])
    assert victim is not None
    claimed: list[str] = []

    def claim_before_the_first_cancel(**_: Any) -> None:
        # A worker claims one email after the command read it as Pending, before its batch is written.
        if not claimed and victim is not None:
            claimed.append(victim.task_id)  # first: the claim's own transaction passes here too
            task_store.claim_email(victim, owner="worker-1", lease_seconds=300)

    hook_clients("before-call.dynamodb.TransactWriteItems", claim_before_the_first_cancel, "test-claim")
    calls.clear()
    try:
        report = as_json(
            run("campaign", "cancel", CAMPAIGN_ID, "--delete-schedules", extra=["--json", *email_flags])
        )
    finally:
        unhook_clients("before-call.dynamodb.TransactWriteItems", "test-claim")
    assert claimed == [victim.task_id]
    assert report["moved_on"] == [victim.task_id]
    everyone = sorted(item["task_id"]["S"] for item in items)
    assert sorted(report["cancelled"]) == [t for t in everyone if t != victim.task_id]
    assert report["schedules_deleted"] == 2 * RECIPIENTS - 1
    assert list(_schedules()) == [email_schedule_name(victim.task_id)]
    statuses = {item["task_id"]["S"]: item["status"]["S"] for item in _email_items(resources)}
    assert statuses.pop(victim.task_id) == "Running"
    assert set(statuses.values()) == {"Cancelled"}
    counts = task_store.job_counts(CAMPAIGN_ID)
    assert (counts["Cancelled"], counts["Running"], counts["Pending"]) == (2 * RECIPIENTS - 1, 1, 0)
    # Batches: one transaction per counter shard (10), one more for the batch that lost the claimed
    # email, and the worker's claim; never one per email.
    transactions = calls.count("dynamodb:TransactWriteItems")
    assert transactions == task_store.COUNTER_SHARDS + 2, transactions
    assert calls.count("scheduler:DeleteSchedule") == 2 * RECIPIENTS - 1
    steps = task_store.step_counts(CAMPAIGN_ID)
    assert steps.uncounted == 0
    assert steps.statuses[1].get("Pending", 0) == steps.statuses[2].get("Pending", 0) == 0
    assert steps.statuses[1].get("Running", 0) + steps.statuses[2].get("Running", 0) == 1


def test_cancel_retries_a_throttled_schedule_delete_and_deletes_every_schedule(
    run: Run, resources: Resources, email_flags: list[str], many: Path
) -> None:
    as_json(_schedule(run, email_flags, recipients=many))
    refused: list[str] = []
    lock = threading.Lock()

    def throttle_three_schedules_twice_each(params: dict[str, Any], **_: Any) -> None:
        # The pool's threads call this at once: one decision at a time.
        name = str(params["Name"])
        with lock:
            refuse = (len(set(refused)) < 3 or name in refused) and refused.count(name) < 2
            if refuse:
                refused.append(name)
        if refuse:
            raise ClientError(
                {"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, "DeleteSchedule"
            )

    event = "before-parameter-build.scheduler.DeleteSchedule"
    hook_clients(event, throttle_three_schedules_twice_each, "test-throttle")
    try:
        report = as_json(
            run("campaign", "cancel", CAMPAIGN_ID, "--delete-schedules", extra=["--json", *email_flags])
        )
    finally:
        unhook_clients(event, "test-throttle")
    assert (len(set(refused)), len(refused)) == (3, 6)
    assert report["schedules_deleted"] == 2 * RECIPIENTS
    assert _schedules() == {}
    assert task_store.job_counts(CAMPAIGN_ID)["Cancelled"] == 2 * RECIPIENTS


def test_status_reads_no_scan_and_counts_each_step_from_the_counters(
    run: Run, resources: Resources, email_flags: list[str], many: Path, calls: list[str]
) -> None:
    as_json(_schedule(run, email_flags, recipients=many))
    items = _email_items(resources)
    first = task_store.get_task(next(i["task_id"]["S"] for i in items if i["step"]["N"] == "1"))
    assert first is not None
    task_store.cancel_for_stop(first, reason="contact_stopped: blocked since now (test)")
    calls.clear()
    status = as_json(run("campaign", "status", CAMPAIGN_ID, extra=["--json"]))
    assert "dynamodb:Scan" not in calls
    steps = {entry["step"]: entry for entry in status["steps"]}
    assert (steps[1]["planned"], steps[1]["Pending"], steps[1]["Cancelled"]) == (
        RECIPIENTS,
        RECIPIENTS - 1,
        1,
    )
    assert (steps[2]["planned"], steps[2]["Pending"]) == (RECIPIENTS, RECIPIENTS)
    assert steps[1]["cancelled_by_reason"] == {"contact_stopped": 1}
    assert status["reasons"] == [{"status": "Cancelled", "reason": "contact_stopped", "emails": 1}]
    earliest = min(i["send_at"]["S"] for i in items if i["task_id"]["S"] != first.task_id)
    assert status["next_send_at"] == earliest
    assert status["uncounted"] == 0
