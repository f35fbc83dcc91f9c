"""The worker while the configuration set's sending is paused: an email SES refuses as paused is moved
by the recheck interval inside its window (its schedule with it), counted, and goes out after the
resume, never lost; its grace period counts from the time it was first due, and past it the email ends
``Failed`` as ``too_late`` saying that sending was paused."""

from __future__ import annotations

import json
from datetime import timedelta

import boto3
import pytest

from embedded_aws.ses_v2 import sent_emails
from outreach import config, contacts, email_schedules, task_store
from outreach.contacts import first_contacts
from outreach.task_model import Status
from tests.functions.email_worker_support import invoke, stored_task
from tests.support.aws import REGION
from tests.support.email import CONFIGURATION_SET, FIRST_SEND, SCHEDULE_GROUP, planned

ADDRESS = "anna@example.org"


def _sending(enabled: bool) -> None:
    boto3.client("sesv2", region_name=REGION).put_configuration_set_sending_options(
        ConfigurationSetName=CONFIGURATION_SET, SendingEnabled=enabled
    )


def _fires_at(task_id: str) -> str:
    task = stored_task(task_id)
    assert task.email is not None
    found = boto3.client("scheduler", region_name=REGION).get_schedule(
        Name=task.email.schedule_name, GroupName=SCHEDULE_GROUP
    )
    return str(found["ScheduleExpression"])


def test_an_email_refused_as_paused_is_moved_by_the_recheck_interval_and_counted(
    ses: list[float], capsys: pytest.CaptureFixture[str]
) -> None:
    email = planned(ADDRESS)
    task_store.create_email_tasks([email])
    email_schedules.ensure_schedule(email, email_schedules.ScheduleTarget.from_env())
    _sending(False)

    assert invoke(email.task_id)["outcome"] == "Deferred"

    held = stored_task(email.task_id)
    assert held.status is Status.PENDING and held.email is not None
    recheck = config.email_paused_recheck_seconds()
    assert held.email.send_time == FIRST_SEND + timedelta(seconds=recheck)
    assert held.email.deferred_reason is not None
    assert held.email.deferred_reason.startswith("sending_paused:")
    assert _fires_at(email.task_id) == email_schedules.at_expression(held.email.send_time)
    assert sent_emails(REGION) == []
    emitted = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    assert any(line.get("EmailsHeldWhilePaused") == [1.0] for line in emitted)


def test_a_paused_first_step_goes_out_once_after_the_resume_on_the_slot_it_took(ses: list[float]) -> None:
    email = planned(ADDRESS)
    task_store.create_email_tasks([email])
    _sending(False)
    assert invoke(email.task_id)["outcome"] == "Deferred"

    _sending(True)
    held = stored_task(email.task_id)
    assert held.email is not None
    ses[0] = held.email.send_time.timestamp()
    assert invoke(email.task_id, "request-2")["outcome"] == "Sent"

    assert [sent.to for sent in sent_emails(REGION)] == [(ADDRESS,)]
    assert stored_task(email.task_id).status is Status.FINISHED
    record = contacts.reads.records([contacts.address_key(ADDRESS)])[contacts.address_key(ADDRESS)]
    assert list(first_contacts.FirstContacts.from_item(record).taken) == [email.task_id]


def test_a_paused_email_ends_too_late_once_its_next_try_is_past_the_grace_after_it_was_first_due(
    ses: list[float],
) -> None:
    email = planned(ADDRESS)
    task_store.create_email_tasks([email])
    _sending(False)
    grace = config.email_send_grace_seconds()
    recheck = config.email_paused_recheck_seconds()
    tries = 0
    while (task := stored_task(email.task_id)).status is Status.PENDING:
        assert task.email is not None
        ses[0] = task.email.send_time.timestamp()
        invoke(email.task_id, f"request-{tries}")
        tries += 1
        assert tries <= grace // recheck + 1, "a paused email was deferred past its grace period"

    failed = stored_task(email.task_id)
    assert failed.status is Status.FAILED
    assert failed.failure_reason is not None
    assert failed.failure_reason.startswith("too_late:")
    assert "sending_paused" in failed.failure_reason
    # Every try inside the grace period was made: the last deferral was at most the grace after due.
    assert tries == grace // recheck + 1
    assert sent_emails(REGION) == []
