"""``outreach task``: show a task, and the operator's requeue with who and why."""

from __future__ import annotations

from outreach import task_store
from outreach.task_ids import normalise_url, scrape_task_id
from tests.support.aws import Resources
from tests.unit.cli.conftest import OPERATOR, Run, as_json, aws_state, claim_task, fail_task, finish_task

URLS = ["https://a.example", "https://b.example", "https://c.example"]
IDS = [scrape_task_id("jt", normalise_url(u)) for u in URLS]


def test_task_show_prints_every_attribute_of_the_row(run: Run, resources: Resources) -> None:
    task_store.create_scrape_job("jt", URLS)
    fail_task(IDS[0], "http_status: 404")
    row = as_json(run("--json", "task", "show", IDS[0]))
    assert (row["status"], row["failure_reason"], row["url"]) == (
        "Failed",
        "http_status: 404",
        "https://a.example/",
    )
    assert "expires_at" in row
    assert run("task", "show", "scrape#jt#nope").exit_code == 2


def test_requeue_puts_terminal_tasks_back_to_pending_recording_who_and_why(
    run: Run, resources: Resources
) -> None:
    # GIVEN a failed and a finished task
    task_store.create_scrape_job("jt", URLS)
    fail_task(IDS[0], "http_status: 503")
    finish_task(IDS[1])
    # WHEN the operator requeues both with a reason
    report = as_json(run("--json", "task", "requeue", IDS[0], IDS[1], "--reason", "site is back"))
    # THEN both are Pending again, open, without result or expiry, with who and why; the counters moved
    assert sorted(report["requeued"]) == sorted(IDS[:2])
    for task_id, was in ((IDS[0], "Failed"), (IDS[1], "Finished")):
        row = as_json(run("--json", "task", "show", task_id))
        assert (row["status"], row["override_by"], row["override_reason"], row["override_from"]) == (
            "Pending",
            OPERATOR,
            "site is back",
            was,
        )
        assert row["open_key"] == "scrape#Pending"
        assert not {"expires_at", "result_key", "summary", "failure_reason"} & set(row)
    assert task_store.job_counts("jt") == {
        "Pending": 3,
        "Running": 0,
        "Finished": 0,
        "Failed": 0,
        "Cancelled": 0,
    }


def test_requeue_leaves_a_task_held_by_a_live_delivery_unless_forced(run: Run, resources: Resources) -> None:
    task_store.create_scrape_job("jt", URLS)
    claim_task(IDS[2], lease_seconds=3600)
    refused = run("--json", "task", "requeue", IDS[2], "--reason", "stuck?")
    assert refused.exit_code == 2
    task = task_store.get_task(IDS[2])
    assert task is not None and task.status.value == "Running"
    forced = as_json(run("--json", "task", "requeue", IDS[2], "--reason", "worker is gone", "--force"))
    assert forced["requeued"] == [IDS[2]]


def test_requeue_dry_run_changes_nothing(run: Run, resources: Resources) -> None:
    task_store.create_scrape_job("jt", URLS)
    fail_task(IDS[0], "http_status: 503")
    before = aws_state(resources)
    report = as_json(run("--json", "task", "requeue", IDS[0], "--reason", "check", "--dry-run"))
    assert (report["requeue"], report["requeued"]) == ([{"task_id": IDS[0], "from": "Failed"}], [])
    assert aws_state(resources) == before
