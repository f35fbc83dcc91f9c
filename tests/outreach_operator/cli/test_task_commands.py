"""``outreach task``: show a task, and the operator's requeue with who and why."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from outreach import config, errors, task_store
from outreach.task_ids import normalise_url, scrape_task_id
from outreach.task_model import Kind, Status, Task, open_key, shard_of
from outreach_operator import task_actions
from tests.outreach_operator.cli.conftest import (
    OPERATOR,
    Run,
    as_json,
    aws_state,
    claim_task,
    fail_task,
    finish_task,
)
from tests.support.aws import Resources
from tests.support.email import planned

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
    shards = config.open_index_shards()
    for task_id, was in ((IDS[0], "Failed"), (IDS[1], "Finished")):
        row = as_json(run("--json", "task", "show", task_id))
        assert (row["status"], row["override_by"], row["override_reason"], row["override_from"]) == (
            "Pending",
            OPERATOR,
            "site is back",
            was,
        )
        # The shard its id falls in, as at creation
        assert row["open_key"] == open_key(Kind.SCRAPE.value, Status.PENDING, shard_of(task_id, shards))
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


def _emails(*recipients: str) -> list[str]:
    """Pending email tasks of campaign ``spring``, one per recipient (step 1)."""
    planned_emails = [planned(r) for r in recipients]
    task_store.create_email_tasks(planned_emails)
    return [e.task_id for e in planned_emails]


def _claimed_email(task_id: str, *, lease_seconds: int = 3600) -> Task:
    task = task_store.get_task(task_id)
    assert task is not None
    return task_store.claim_email(task, owner="invocation-1", lease_seconds=lease_seconds)


def test_an_email_task_that_was_sent_or_is_being_sent_is_never_requeued_even_forced(
    run: Run, resources: Resources
) -> None:
    # GIVEN an email SES accepted (Finished) and one a worker is sending now (Running, live lease)
    sent, sending = _emails("a@example.org", "b@example.org")
    task_store.finish_email(_claimed_email(sent), ses_message_id="ses-1")
    _claimed_email(sending)
    before = aws_state(resources)
    # WHEN the operator requeues both, forced
    result = run("--json", "task", "requeue", sent, sending, "--reason", "resend", "--force")
    # THEN both are refused (exit 2), each saying why, and nothing changed
    assert result.exit_code == 2, result.output
    why = {r["task_id"]: r["why"] for r in json.loads(result.stdout)["refused"]}
    assert "was sent (Finished)" in why[sent]
    assert "may be being sent" in why[sending] and "--force or not" in why[sending]
    assert aws_state(resources) == before


def test_an_email_whose_delivery_is_unknown_is_never_requeued_and_one_proven_unsent_is(
    run: Run, resources: Resources
) -> None:
    # GIVEN an email the reconciler settled as delivery_unknown (it may have gone out) and one that
    # failed too late (never sent)
    unknown, late = _emails("a@example.org", "b@example.org")
    task_store.fail_stale(
        _claimed_email(unknown, lease_seconds=-1), reason="delivery_unknown: the worker never recorded it"
    )
    pending = task_store.get_task(late)
    assert pending is not None
    task_store.fail_stale(pending, reason="too_late: 7200 s after send_at")
    # WHEN both are requeued
    report = as_json(run("--json", "task", "requeue", unknown, late, "--reason", "retry the campaign"))
    # THEN only the one proven unsent is Pending again; the other is refused with why
    assert report["requeued"] == [late]
    [refused] = report["refused"]
    assert refused["task_id"] == unknown and refused["why"].startswith("delivery_unknown")
    row = task_store.get_task(unknown)
    assert row is not None and row.status.value == "Failed"


def test_the_task_store_refuses_an_email_requeue_that_may_send_twice_whatever_the_caller_passes(
    resources: Resources,
) -> None:
    # GIVEN an email whose delivery is unknown
    [task_id] = _emails("a@example.org")
    task_store.fail_stale(_claimed_email(task_id, lease_seconds=-1), reason="delivery_unknown: lost")
    stored = task_store.get_task(task_id)
    assert stored is not None
    # THEN the store refuses it, naming why
    with pytest.raises(errors.OperatorRefusedError, match="delivery_unknown"):
        task_actions.operator_requeue(stored, by=OPERATOR, reason="x")
    # AND a caller passing a doctored copy (another reason, or the kind of a scrape task) is refused
    # by the write's condition: the row as stored decides
    for doctored in (
        replace(stored, failure_reason="too_late: x"),
        replace(stored, kind="scrape", email=None),
    ):
        with pytest.raises(errors.TransitionRejectedError):
            task_actions.operator_requeue(doctored, by=OPERATOR, reason="x")
    row = task_store.get_task(task_id)
    assert row is not None and (row.status.value, row.failure_reason) == ("Failed", "delivery_unknown: lost")
