"""Rules of the email reconciler: missing schedules recreated, overdue emails sent once or failed too
late, a claimed email whose outcome was lost settled as delivery_unknown and never sent again."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from embedded_aws.ses_v2 import sent_emails
from outreach import clock, config, email_schedules, email_worker, task_store
from outreach.errors import ReconcilerRunError
from outreach.reconcilers import email as reconciler
from outreach.reconcilers.sweep import RunReport
from outreach.task_model import Status, Task
from outreach_dev import function_env
from tests.support.aws import REGION, Resources
from tests.support.email import (
    CONFIGURATION_SET,
    FIRST_SEND,
    SCHEDULE_GROUP,
    create_schedule_group,
    create_ses_resources,
    planned,
)
from tests.support.lambda_context import FakeContext

GROUP = SCHEDULE_GROUP


@pytest.fixture
def target(resources: Resources, monkeypatch: pytest.MonkeyPatch) -> Iterator[email_schedules.ScheduleTarget]:
    create_ses_resources()
    monkeypatch.setenv("EMAIL_CONFIGURATION_SET", CONFIGURATION_SET)
    # The reconciler finds its schedule target only through its environment, as in Lambda.
    create_schedule_group(monkeypatch)
    yield email_schedules.ScheduleTarget.from_env()
    clock.set_time_source(None)


def _at(now: float) -> None:
    clock.set_time_source(lambda: now)


def _run(target: email_schedules.ScheduleTarget, max_actions: int | None = None) -> RunReport:
    budget = [max_actions]

    def remaining() -> float:
        if budget[0] is None:
            return 60.0
        budget[0] -= 1
        return 1.0 if budget[0] >= 0 else 0.0

    return reconciler.reconcile(config.EmailReconcilerSettings.from_env(), target, remaining)


def _task(task_id: str) -> Task:
    task = task_store.get_task(task_id)
    assert task is not None
    return task


def _schedule_expression(target: email_schedules.ScheduleTarget, name: str) -> str:
    scheduler = boto3.client("scheduler", region_name=REGION)
    return str(scheduler.get_schedule(Name=name, GroupName=target.group)["ScheduleExpression"])


def test_a_missing_schedule_is_recreated(target: email_schedules.ScheduleTarget) -> None:
    email = planned("a@example.org")
    _at(FIRST_SEND.timestamp() - 86_400)
    task_store.create_email_tasks([email])
    # The schedule was never created (the command stopped after writing the tasks).
    _at(FIRST_SEND.timestamp() - 3_000)
    report = _run(target)
    assert report.actions["rescheduled"] == 1
    assert _schedule_expression(target, email.schedule_name) == "at(2027-03-02T08:30:00)"
    assert _run(target).actions["rescheduled"] == 0
    assert _task(email.task_id).status is Status.PENDING


def test_a_task_with_its_schedule_is_left_to_it(target: email_schedules.ScheduleTarget) -> None:
    email = planned("a@example.org")
    _at(FIRST_SEND.timestamp() - 86_400)
    task_store.create_email_tasks([email])
    email_schedules.ensure_schedule(email, target)
    _at(FIRST_SEND.timestamp() - 3_600)
    report = _run(target)
    assert report.actions["scheduled"] == 1
    assert report.actions["rescheduled"] == 0


def test_an_overdue_email_within_the_grace_period_is_sent_now(target: email_schedules.ScheduleTarget) -> None:
    email = planned("a@example.org")
    _at(FIRST_SEND.timestamp() - 86_400)
    task_store.create_email_tasks([email])
    _at(FIRST_SEND.timestamp() + 1_200)
    report = _run(target)
    assert report.actions["sent_now"] == 1
    # A minute after the run, in UTC: 09:50 + 1 min in Berlin is 08:51 UTC.
    assert _schedule_expression(target, email.schedule_name) == "at(2027-03-02T08:51:00)"
    assert _run(target).actions["sent_now"] == 0


def test_an_email_overdue_beyond_the_grace_period_fails_too_late(
    target: email_schedules.ScheduleTarget,
) -> None:
    email = planned("a@example.org")
    _at(FIRST_SEND.timestamp() - 86_400)
    task_store.create_email_tasks([email])
    email_schedules.ensure_schedule(email, target)
    _at(FIRST_SEND.timestamp() + 3_601)
    report = _run(target)
    assert report.actions["too_late"] == 1
    failed = _task(email.task_id)
    assert failed.status is Status.FAILED
    assert (failed.failure_reason or "").startswith("too_late: 3601 s after send_at 2027-03-02T08:30:00Z")
    assert not email_schedules.schedule_exists(email.schedule_name, target)
    assert task_store.job_counts("spring")["Failed"] == 1


def test_a_crash_after_send_leaves_running_and_the_reconciler_marks_it_delivery_unknown_without_sending(
    target: email_schedules.ScheduleTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    email = planned("a@example.org")
    _at(FIRST_SEND.timestamp() - 86_400)
    task_store.create_email_tasks([email])
    _at(FIRST_SEND.timestamp())

    def crash(task: Task, *, ses_message_id: str) -> None:
        raise RuntimeError("worker died after the send")

    with monkeypatch.context() as patched:
        patched.setattr(task_store, "finish_email", crash)
        with pytest.raises(RuntimeError):
            email_worker.lambda_handler({"task_id": email.task_id}, FakeContext(timeout_seconds=60))
    assert _task(email.task_id).status is Status.RUNNING
    assert len(sent_emails(REGION)) == 1
    # The reconciler's threshold as Terraform sets it: the worker's timeout, the lease margin, a minute.
    running_after = int(function_env.settings("email_reconciler")["RECONCILE_RUNNING_AFTER_SECONDS"])
    _at(FIRST_SEND.timestamp() + running_after - 1)
    assert _run(target).actions["delivery_unknown"] == 0  # not stale yet, and its lease may be live
    _at(FIRST_SEND.timestamp() + running_after + 1)
    report = _run(target)
    assert report.actions["delivery_unknown"] == 1
    settled = _task(email.task_id)
    assert settled.status is Status.FAILED
    assert (settled.failure_reason or "").startswith("delivery_unknown")
    assert email_worker.lambda_handler({"task_id": email.task_id}, FakeContext())["outcome"] == (
        "AlreadyTerminal"
    )
    assert len(sent_emails(REGION)) == 1
    assert not email_schedules.schedule_exists(email.schedule_name, target)


def test_a_running_task_with_a_live_lease_is_left_alone(target: email_schedules.ScheduleTarget) -> None:
    email = planned("a@example.org")
    _at(FIRST_SEND.timestamp())
    task_store.create_email_tasks([email])
    task_store.claim_email(_task(email.task_id), owner="slow-worker", lease_seconds=2_000)
    _at(FIRST_SEND.timestamp() + 1_000)
    report = _run(target)
    assert report.actions["left_alone"] == 1
    assert _task(email.task_id).status is Status.RUNNING


def test_two_overlapping_runs_act_once_on_a_task(target: email_schedules.ScheduleTarget) -> None:
    email = planned("a@example.org")
    _at(FIRST_SEND.timestamp() - 86_400)
    task_store.create_email_tasks([email])
    stale = _task(email.task_id)
    _at(FIRST_SEND.timestamp() - 3_600)
    first = reconciler.PendingEmails(target, 3_600, clock.now())
    second = reconciler.PendingEmails(target, 3_600, clock.now())
    assert first.act(stale) is reconciler.Action.RESCHEDULED
    # The second run read the task before the first acted, and checks after its schedule was deleted
    # again (it fired): its mark fails on the changed task, so it creates nothing.
    email_schedules.delete_schedule(email.schedule_name, target)
    assert second.act(stale) is reconciler.Action.LEFT_ALONE


def test_a_run_stops_at_its_deadline_and_the_next_continues(target: email_schedules.ScheduleTarget) -> None:
    emails = [planned(f"r{i}@example.org") for i in range(5)]
    _at(FIRST_SEND.timestamp() - 86_400)
    task_store.create_email_tasks(emails)
    _at(FIRST_SEND.timestamp() - 3_600)
    first = _run(target, max_actions=2)
    assert first.stopped_early
    assert first.actions["rescheduled"] == 2
    assert _run(target).actions["rescheduled"] == 3


def test_the_handler_reads_its_target_from_the_environment(target: email_schedules.ScheduleTarget) -> None:
    email = planned("a@example.org")
    _at(FIRST_SEND.timestamp() - 86_400)
    task_store.create_email_tasks([email])
    _at(FIRST_SEND.timestamp() - 3_600)
    result = reconciler.lambda_handler({}, FakeContext())
    assert result["actions"]["rescheduled"] == 1
    assert result["examined"] == 1


def _corrupt(task_id: str, expression: str, values: dict[str, Any]) -> None:
    boto3.client("dynamodb", region_name=REGION).update_item(
        TableName=config.tasks_table(),
        Key={"task_id": {"S": task_id}},
        UpdateExpression=expression,
        ExpressionAttributeValues=values,
    )


def test_a_malformed_row_does_not_stop_the_run_from_scheduling_the_good_task_behind_it(
    target: email_schedules.ScheduleTarget,
) -> None:
    bad, good = planned("bad@example.org"), planned("good@example.org")
    _at(FIRST_SEND.timestamp() - 86_400)
    task_store.create_email_tasks([bad])
    _at(FIRST_SEND.timestamp() - 86_000)
    task_store.create_email_tasks([good])  # changed later: behind the bad one in the index
    _corrupt(bad.task_id, "SET send_at = :v", {":v": {"S": "2027-03-02 09:30 Berlin"}})
    _at(FIRST_SEND.timestamp() - 3_000)
    report = _run(target)
    assert report.malformed == 1
    assert report.failed_task_ids == [bad.task_id]
    assert report.actions["rescheduled"] == 1
    assert email_schedules.schedule_exists(good.schedule_name, target)
    # The bad row does not stay open: it is failed, naming the field, and counted.
    stored = boto3.client("dynamodb", region_name=REGION).get_item(
        TableName=config.tasks_table(), Key={"task_id": {"S": bad.task_id}}
    )["Item"]
    assert stored["status"] == {"S": "Failed"}
    assert stored["failure_reason"]["S"].startswith("malformed_task_row: not a task row: send_at:")
    assert "open_key" not in stored
    counts = task_store.job_counts("spring")
    assert (counts["Pending"], counts["Failed"]) == (1, 1)
    # The handler tells a person after doing the rest: the run raises once everything else is done.
    _corrupt(good.task_id, "SET step = :v", {":v": {"N": "1.5"}})
    _at(FIRST_SEND.timestamp() - 2_000)
    with pytest.raises(ReconcilerRunError, match="1 malformed rows"):
        reconciler.lambda_handler({}, FakeContext())


def test_an_action_that_raises_harms_only_its_task(
    target: email_schedules.ScheduleTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = planned("first@example.org"), planned("second@example.org")
    _at(FIRST_SEND.timestamp() - 86_400)
    task_store.create_email_tasks([first])
    _at(FIRST_SEND.timestamp() - 86_000)
    task_store.create_email_tasks([second])
    real = email_schedules.schedule_exists

    def flaky(name: str, where: email_schedules.ScheduleTarget) -> bool:
        if name == first.schedule_name:
            raise RuntimeError("GetSchedule answered 500")
        return real(name, where)

    monkeypatch.setattr(email_schedules, "schedule_exists", flaky)
    _at(FIRST_SEND.timestamp() - 3_000)
    report = _run(target)
    assert report.errors == 1
    assert report.failed_task_ids == [first.task_id]
    assert report.actions["rescheduled"] == 1
    assert _task(first.task_id).status is Status.PENDING


def test_a_backlog_due_beyond_the_horizon_costs_no_schedule_lookup(
    target: email_schedules.ScheduleTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    later = [replace(planned(f"r{i}@example.org"), send_at=FIRST_SEND + timedelta(days=5)) for i in range(20)]
    due = planned("due@example.org")
    _at(FIRST_SEND.timestamp() - 86_400)
    task_store.create_email_tasks([*later, due])
    looked_up: list[str] = []
    real = email_schedules.schedule_exists

    def counted(name: str, where: email_schedules.ScheduleTarget) -> bool:
        looked_up.append(name)
        return real(name, where)

    monkeypatch.setattr(email_schedules, "schedule_exists", counted)
    _at(FIRST_SEND.timestamp() - 1_800)
    report = _run(target)
    assert report.actions["not_due"] == 20
    assert report.actions["rescheduled"] == 1
    assert looked_up == [due.schedule_name]


def test_catch_up_sends_are_spread_at_the_campaigns_rate_from_the_moment_each_is_created(
    target: email_schedules.ScheduleTarget,
) -> None:
    emails = [replace(planned(f"r{i}@example.org"), max_per_minute=2) for i in range(5)]
    _at(FIRST_SEND.timestamp() - 86_400)
    task_store.create_email_tasks(emails)
    now = FIRST_SEND.timestamp() + 600
    _at(now)
    report = _run(target)
    assert report.actions["sent_now"] == 5
    fires = sorted(
        datetime.strptime(_schedule_expression(target, e.schedule_name), "at(%Y-%m-%dT%H:%M:%S)")
        .replace(tzinfo=UTC)
        .timestamp()
        - now
        for e in emails
    )
    # Two a minute, from a minute after the call on: never in the past, never all in one minute.
    assert fires == [60, 90, 120, 150, 180]


def test_a_catch_up_that_would_go_out_after_the_grace_period_is_too_late_instead(
    target: email_schedules.ScheduleTarget,
) -> None:
    emails = [replace(planned(f"r{i}@example.org"), max_per_minute=1) for i in range(3)]
    _at(FIRST_SEND.timestamp() - 86_400)
    task_store.create_email_tasks(emails)
    _at(FIRST_SEND.timestamp() + 3_600 - 150)  # 2.5 minutes of grace left
    report = _run(target)
    assert report.actions["sent_now"] == 2
    assert report.actions["too_late"] == 1
