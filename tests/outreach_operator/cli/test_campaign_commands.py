"""``outreach campaign``: schedule (dry run and real), status and cancel, against moto."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import boto3
import pytest
from botocore.stub import Stubber

from embedded_aws.ses_account import set_ses_account
from embedded_aws.ses_v2 import sent_emails
from outreach import email_worker, task_store
from outreach.email_task import email_schedule_name, email_task_id
from outreach.results import store_result
from outreach.task_model import Status
from outreach_operator import task_actions
from outreach_operator.campaigns import message_caps
from outreach_operator.cli.campaigns import quota as campaign_quota
from outreach_operator.cli.targets import resolve
from tests.outreach_operator.cli.campaign_support import (
    CAMPAIGN,
    CAMPAIGN_ID,
    GROUP,
    RECIPIENTS,
    START,
    STATEMENTS,
)
from tests.outreach_operator.cli.campaign_support import campaign_file as _campaign
from tests.outreach_operator.cli.campaign_support import csv_file as _csv
from tests.outreach_operator.cli.campaign_support import email_items as _email_items
from tests.outreach_operator.cli.campaign_support import fire_due_schedules as _fire_due_schedules
from tests.outreach_operator.cli.campaign_support import schedule_example as _schedule
from tests.outreach_operator.cli.campaign_support import schedules as _schedules
from tests.outreach_operator.cli.conftest import OPERATOR, Run, as_json, finish_task
from tests.support.aws import REGION, Resources
from tests.support.lambda_context import FakeContext

# SES's GetAccount answers a ready account (14/s, 50,000 a day) unless a test sets another.
pytestmark = pytest.mark.usefixtures("ses_account")


def test_dry_run_shows_the_plan_per_day_and_step_and_writes_nothing(
    run: Run, resources: Resources, email_flags: list[str]
) -> None:
    report = as_json(_schedule(run, email_flags, "--dry-run"))
    assert report["emails"] == 6
    assert report["plan"] == [
        {"day": "2027-03-01", "step": 1, "emails": 3, "first": "09:00:00", "last": "09:00:06"},
        {"day": "2027-03-05", "step": 2, "emails": 3, "first": "09:00:00", "last": "09:01:03"},
    ]
    assert (report["would_create"], report["existing"]) == (6, 0)
    assert _email_items(resources) == []
    assert _schedules() == {}
    assert task_store.get_job(CAMPAIGN_ID) is None


def test_dry_run_without_json_prints_the_plan_table(run: Run, resources: Resources) -> None:
    result = run(
        "campaign", "schedule", "--campaign", str(CAMPAIGN), "--recipients", str(RECIPIENTS),
        "--start", START, "--dry-run",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "2027-03-05" in result.stdout
    assert "dry run: nothing written" in result.stdout


def test_schedule_writes_one_task_and_one_schedule_per_recipient_and_step(
    run: Run, resources: Resources, email_flags: list[str]
) -> None:
    report = as_json(_schedule(run, email_flags))
    assert (report["created"], report["existing"], report["schedules_created"]) == (6, 0, 6)
    task = task_store.get_task(email_task_id(CAMPAIGN_ID, "hello@contoso.example", 2))
    assert task is not None and task.email is not None
    assert (task.kind, task.job_id, task.status, task.email.step) == ("email", CAMPAIGN_ID, Status.PENDING, 2)
    assert task.email.send_at == "2027-03-05T08:01:00Z"
    assert task.email.message["subject"] == "Re: A question about Contoso"
    assert "Hello there," in task.email.message["text"]
    schedules = _schedules()
    assert schedules[email_schedule_name(task.task_id)] == {
        "expression": "at(2027-03-05T08:01:00)",
        "zone": "UTC",
        "input": {"task_id": task.task_id},
        "after": "DELETE",
        "retries": 2,
        "dlq": email_flags[-1],
    }
    assert len(schedules) == 6
    assert task_store.job_counts(CAMPAIGN_ID)[Status.PENDING.value] == 6
    job = task_store.get_job(CAMPAIGN_ID)
    assert job is not None and job["created_by"] == OPERATOR and job["task_count"] == 6
    assert str(job["source"]).startswith("campaign.yaml sha256:")


def test_scheduling_twice_creates_no_task_or_schedule_twice(
    run: Run, resources: Resources, email_flags: list[str]
) -> None:
    as_json(_schedule(run, email_flags))
    tasks, schedules = _email_items(resources), _schedules()
    # A later start plans other send times: the tasks written first keep theirs, and so do their schedules.
    again = as_json(_schedule(run, email_flags, start="2027-03-08T10:00:00"))
    assert (again["created"], again["existing"]) == (0, 6)
    assert (again["schedules_created"], again["schedules_existing"]) == (0, 6)
    assert _email_items(resources) == tasks
    assert _schedules() == schedules
    assert task_store.job_counts(CAMPAIGN_ID)[Status.PENDING.value] == 6


def test_a_missing_schedule_of_an_existing_task_is_made_at_the_stored_send_time(
    run: Run, resources: Resources, email_flags: list[str]
) -> None:
    as_json(_schedule(run, email_flags))
    name = email_schedule_name(email_task_id(CAMPAIGN_ID, "info@northwind.example", 1))
    before = _schedules()[name]
    boto3.client("scheduler", region_name=REGION).delete_schedule(Name=name, GroupName=GROUP)
    again = as_json(_schedule(run, email_flags, start="2027-04-01T10:00:00"))
    assert (again["schedules_created"], again["schedules_existing"]) == (1, 5)
    assert _schedules()[name] == before


def test_invalid_rows_are_reported_by_row_and_nothing_is_written(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path
) -> None:
    recipients = _csv(
        tmp_path,
        "email,company,website\nok@acme.example,Acme,https://acme.example/\nbroken,B,x\n"
        "nocompany@acme.example,,https://n.example/\n",
    )
    result = _schedule(run, email_flags, recipients=recipients)
    assert result.exit_code == 2, result.output
    report = json.loads(result.stdout)
    assert [(r["row"], r["reason"].split(":")[0]) for r in report["rejected"]] == [
        (3, "invalid e-mail address"),
        (4, "steps.0.subject"),
    ]
    assert report["rejected"][1]["reason"] == "steps.0.subject: 'company' is undefined"
    assert "2 rows cannot be scheduled" in result.stderr
    assert _email_items(resources) == []
    assert _schedules() == {}


def test_skip_invalid_schedules_only_the_valid_rows(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path
) -> None:
    recipients = _csv(
        tmp_path, "email,company,website\nok@acme.example,Acme,https://acme.example/\nbroken,B,x\n"
    )
    report = as_json(_schedule(run, email_flags, "--skip-invalid", recipients=recipients))
    assert (report["created"], report["schedules_created"], len(report["rejected"])) == (2, 2, 1)
    assert {item["recipient"]["S"] for item in _email_items(resources)} == {"ok@acme.example"}


def test_header_injection_through_a_placeholder_is_refused(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path
) -> None:
    recipients = _csv(
        tmp_path,
        'email,company,website\nok@acme.example,"Acme\r\nBcc: victim@example.org",https://a.example/\n',
    )
    result = _schedule(run, email_flags, recipients=recipients)
    assert result.exit_code == 2
    [rejected] = json.loads(result.stdout)["rejected"]
    assert rejected["reason"].startswith("steps.0.subject: control character")
    assert _email_items(resources) == []


def test_sender_outside_the_ses_identity_is_refused(
    run: Run, resources: Resources, email_flags: list[str]
) -> None:
    result = _schedule(run, [*email_flags, "--email-sender-identity", "other.example"])
    assert result.exit_code == 2
    assert "is not covered by the SES identity 'other.example'" in result.stderr
    assert as_json(_schedule(run, [*email_flags, "--email-sender-identity", "acme.example"], "--dry-run"))


def test_recipients_from_a_finished_scrape_job(
    run: Run, resources: Resources, email_flags: list[str]
) -> None:
    created = task_store.create_scrape_job("scan-1", ["https://acme.example/", "https://quiet.example/"])
    first, second = sorted(created.created)
    finish_task(first, title="Acme GmbH")
    quiet = task_store.get_task(second)
    assert quiet is not None
    claimed = task_store.claim(quiet, message_id="m-2", receive_count=1, lease_seconds=300)
    key = store_result(
        "scan-1", second, {"final_url": "https://quiet.example/", "title": "Quiet", "emails": []}
    )
    task_store.finish(claimed, result_key=key, summary={"title": "Quiet"})
    result = run(
        "campaign", "schedule", "--campaign", str(CAMPAIGN), "--from-job", "scan-1", "--start", START,
        "--skip-invalid", extra=["--json", *email_flags],
    )  # fmt: skip
    report = as_json(result)
    assert (report["recipients"], report["created"]) == ("job scan-1", 2)
    assert [(r["source"], r["reason"]) for r in report["rejected"]] == [(second, "no e-mail address")]
    task = task_store.get_task(email_task_id(CAMPAIGN_ID, "info@acme.example", 1))
    assert task is not None and task.email is not None
    assert task.email.message["subject"] == "A question about Acme GmbH"


def test_recipients_from_an_unfinished_scrape_job_are_refused(
    run: Run, resources: Resources, email_flags: list[str]
) -> None:
    task_store.create_scrape_job("scan-2", ["https://acme.example/"])
    result = run(
        "campaign", "schedule", "--campaign", str(CAMPAIGN), "--from-job", "scan-2", extra=email_flags
    )  # fmt: skip
    assert result.exit_code == 2
    assert "job scan-2 is not finished: 1 tasks are still open" in result.stderr


def test_status_counts_emails_per_step_and_status(
    run: Run, resources: Resources, email_flags: list[str]
) -> None:
    as_json(_schedule(run, email_flags))
    follow_up = task_store.get_task(email_task_id(CAMPAIGN_ID, "sales@fabrikam.example", 2))
    assert follow_up is not None
    task_actions.cancel(follow_up, reason="bounced: an earlier step bounced")
    status = as_json(run("campaign", "status", CAMPAIGN_ID, extra=["--json"]))
    assert [(s["step"], s["Pending"], s["Cancelled"]) for s in status["steps"]] == [(1, 3, 0), (2, 2, 1)]
    assert status["counts"]["Pending"] == 5 and status["counts"]["Cancelled"] == 1
    assert status["reasons"] == [{"status": "Cancelled", "reason": "bounced", "emails": 1}]
    assert status["next_send_at"] == "2027-03-01T08:00:00Z"
    assert status["created_by"] == OPERATOR


def test_status_of_an_unknown_campaign_is_bad_input(run: Run, resources: Resources) -> None:
    result = run("campaign", "status", "nope")
    assert result.exit_code == 2
    assert "no campaign 'nope'" in result.stderr


def test_cancel_cancels_pending_emails_and_leaves_their_self_deleting_schedules_by_default(
    run: Run, resources: Resources, email_flags: list[str]
) -> None:
    as_json(_schedule(run, email_flags))
    schedules = _schedules()
    report = as_json(run("campaign", "cancel", CAMPAIGN_ID, extra=["--json", *email_flags]))
    assert (len(report["cancelled"]), report["schedules_deleted"], report["schedules_left"]) == (6, 0, 6)
    assert _schedules() == schedules
    assert task_store.job_counts(CAMPAIGN_ID)["Pending"] == 0
    assert report["scheduler_rate"] is None  # no Scheduler call at all


def test_cancel_with_delete_schedules_deletes_them_at_the_quota_rate_but_not_a_claimed_send(
    run: Run, resources: Resources, email_flags: list[str]
) -> None:
    as_json(_schedule(run, email_flags))
    sending = task_store.get_task(email_task_id(CAMPAIGN_ID, "info@northwind.example", 1))
    assert sending is not None
    claimed = task_store.claim_email(sending, owner="worker-1", lease_seconds=300)
    report = as_json(
        run("campaign", "cancel", CAMPAIGN_ID, "--delete-schedules", extra=["--json", *email_flags])
    )
    assert (len(report["cancelled"]), report["schedules_deleted"]) == (5, 5)
    # No applied quota in the embedded AWS: eu-central-1's documented 1,000 a second, 80% of it taken.
    assert report["scheduler_rate"]["quota_per_second"] == 1000.0
    assert report["scheduler_rate"]["rate_per_second"] == 800.0
    assert [e["task_id"] for e in report["running_not_interrupted"]] == [claimed.task_id]
    assert list(_schedules()) == [email_schedule_name(claimed.task_id)]
    counts = task_store.job_counts(CAMPAIGN_ID)
    assert (counts["Cancelled"], counts["Running"], counts["Pending"]) == (5, 1, 0)
    cancelled = task_store.get_task(email_task_id(CAMPAIGN_ID, "hello@contoso.example", 2))
    assert cancelled is not None
    assert cancelled.failure_reason == f"campaign cancelled by operator (by {OPERATOR})"
    task_store.finish_email(claimed, ses_message_id="ses-1")
    assert task_store.job_counts(CAMPAIGN_ID)["Finished"] == 1


def test_cancel_dry_run_lists_the_emails_and_changes_nothing(
    run: Run, resources: Resources, email_flags: list[str]
) -> None:
    as_json(_schedule(run, email_flags))
    tasks, schedules = _email_items(resources), _schedules()
    report = as_json(run("campaign", "cancel", CAMPAIGN_ID, "--dry-run", extra=["--json"]))
    assert (len(report["pending"]), report["cancelled"]) == (6, [])
    assert _email_items(resources) == tasks
    assert _schedules() == schedules


def test_schedule_needs_the_schedule_target(run: Run, resources: Resources) -> None:
    result = run(
        "campaign", "schedule", "--campaign", str(CAMPAIGN), "--recipients", str(RECIPIENTS), "--start", START
    )  # fmt: skip
    assert result.exit_code == 2
    assert "pass --email-schedule-group" in result.stderr


def test_schedule_target_comes_from_the_roots_email_outputs() -> None:
    outputs = {
        "pipeline": {"tasks_table_name": "dev-tasks"},
        "email_schedule_group": "dev-email",
        "email_worker_arn": "arn:aws:lambda:eu-central-1:1:function:dev-email-worker",
        "email_scheduler_role_arn": "arn:aws:iam::1:role/dev-email-scheduler",
        "email_dlq_arn": "arn:aws:sqs:eu-central-1:1:dev-email-dlq",
        "email_sender_identity": "acme.example",
    }
    targets = resolve("dev", {"email_schedule_group": "override"}, read_outputs=lambda env, state: outputs)
    assert (targets.email_schedule_group, targets.email_worker_arn, targets.email_sender_identity) == (
        "override",
        "arn:aws:lambda:eu-central-1:1:function:dev-email-worker",
        "acme.example",
    )
    assert (targets.email_scheduler_role_arn, targets.email_dlq_arn) == (
        "arn:aws:iam::1:role/dev-email-scheduler",
        "arn:aws:sqs:eu-central-1:1:dev-email-dlq",
    )


def test_a_start_in_the_past_is_refused(run: Run, resources: Resources, email_flags: list[str]) -> None:
    result = _schedule(run, email_flags, start="2020-01-06T09:00:00")
    assert result.exit_code == 2
    assert "--start 2020-01-06T09:00:00 is in the past" in result.stderr
    assert _email_items(resources) == []


# ---- what the worker makes of a scheduled campaign ---------------------------------------------


def test_scheduled_first_step_is_sent_as_rendered_and_counted_by_status(
    run: Run, resources: Resources, email_flags: list[str], ses: list[float]
) -> None:
    as_json(_schedule(run, email_flags))
    ses[0] = datetime(2027, 3, 1, 9, 5, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()
    fired = _fire_due_schedules(ses[0])
    assert len(fired) == 3
    sent = sorted(sent_emails(REGION), key=lambda e: e.to)
    assert [(e.to, e.subject) for e in sent] == [
        (("hello@contoso.example",), "A question about Contoso"),
        (("info@northwind.example",), "A question about Northwind Traders"),
        (("sales@fabrikam.example",), "A question about Fabrikam"),
    ]
    assert sent[1].sender == "Acme Partnerships <partners@mail.acme.example>"
    assert sent[1].text.startswith("Hello Anna,")
    assert sent[1].headers["List-Unsubscribe"] == (
        "<mailto:unsubscribe@mail.acme.example?subject=unsubscribe%20info%40northwind.example>"
    )
    status = as_json(run("campaign", "status", CAMPAIGN_ID, extra=["--json"]))
    assert [(s["step"], s["Finished"], s["Pending"]) for s in status["steps"]] == [(1, 3, 0), (2, 0, 3)]
    # Each invocation delivered again (Scheduler's and Lambda's retries) sends nothing more.
    for event in fired:
        email_worker.lambda_handler(event, FakeContext(aws_request_id="again"))
    assert len(sent_emails(REGION)) == 3


# ---- what DynamoDB and SES accept ---------------------------------------------------------------


def test_a_recipient_with_a_unicode_domain_is_scheduled_to_its_punycode_address(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path
) -> None:
    recipients = _csv(tmp_path, "email,company,website\ninfo@Bücher.example,Bücher,https://b.example/\n")
    report = as_json(_schedule(run, email_flags, recipients=recipients))
    assert report["created"] == 2
    task = task_store.get_task(email_task_id(CAMPAIGN_ID, "info@xn--bcher-kva.example", 1))
    assert task is not None and task.email is not None
    assert (task.email.recipient, task.email.message["to"]) == ("info@xn--bcher-kva.example",) * 2
    assert task.email.message["subject"] == "A question about Bücher"


def test_a_non_ascii_local_part_is_refused_at_dry_run_naming_the_row(
    run: Run, resources: Resources, tmp_path: Path
) -> None:
    recipients = _csv(tmp_path, "email,company,website\nok@acme.example,A,x\njörg@acme.example,J,y\n")
    result = _schedule(run, [], "--dry-run", recipients=recipients)
    assert result.exit_code == 2, result.output
    [rejected] = json.loads(result.stdout)["rejected"]
    assert (rejected["row"], rejected["value"]) == (3, "jörg@acme.example")
    assert rejected["reason"].startswith("the part before the @ ('jörg') has non-ASCII characters")


def test_a_campaign_of_60_kb_messages_to_200_recipients_schedules_without_a_transaction_error(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path
) -> None:
    body = "Hello {{ company }},\n" + "we would like to show you how we work.\n" * 1600 + STATEMENTS
    assert len(body) > 60 * 1024
    steps = [
        {"subject": "About {{ company }}", "text": body},
        {"after_days": 4, "subject": "Re", "text": body},
    ]
    campaign = _campaign(tmp_path, steps=steps, max_per_minute=200)
    rows = "".join(f"r{n}@acme.example,Company {n},https://{n}.example/\n" for n in range(200))
    recipients = _csv(tmp_path, "email,company,website\n" + rows)
    report = as_json(_schedule(run, email_flags, campaign=campaign, recipients=recipients))
    assert (report["created"], report["existing"], report["schedules_created"]) == (400, 0, 400)
    assert task_store.job_counts(CAMPAIGN_ID)[Status.PENDING.value] == 400
    task = task_store.get_task(email_task_id(CAMPAIGN_ID, "r199@acme.example", 2))
    assert task is not None and task.email is not None and len(task.email.message["text"]) > 60 * 1024


def test_a_recipient_whose_task_row_is_over_400_kb_is_refused_at_dry_run_naming_the_row(
    run: Run, resources: Resources, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The message caps keep every message under the row limit (next test); lifted here so that the
    # row's own check, the backstop behind them, is what refuses.
    monkeypatch.setattr(message_caps, "TEXT_BYTES", 1024 * 1024)
    monkeypatch.setattr(message_caps, "MESSAGE_BYTES", 1024 * 1024)
    notes = "{{ notes }}" * 5
    steps = [
        {"subject": "About {{ company }}", "text": "Hi" + STATEMENTS},
        {"after_days": 4, "subject": "Re", "text": notes + STATEMENTS},
    ]
    campaign = _campaign(tmp_path, steps=steps)
    long_notes = "n" * 90_000  # five times in the follow-up: 450 KB
    recipients = _csv(
        tmp_path, f"email,company,notes\nok@acme.example,Acme,short\nbig@acme.example,Big,{long_notes}\n"
    )
    result = _schedule(run, [], "--dry-run", campaign=campaign, recipients=recipients)
    assert result.exit_code == 2, result.output
    report = json.loads(result.stdout)
    [rejected] = report["rejected"]
    assert (rejected["row"], rejected["value"]) == (3, "big@acme.example")
    size = int(rejected["reason"].split(" would be ")[1].split(" bytes")[0].replace(",", ""))
    assert size > 450_000
    assert rejected["reason"] == (
        f"steps.1: the task row would be {size:,} bytes, DynamoDB's item limit is 400 KB (a row may "
        f"have {task_store.MAX_ROW_BYTES:,} bytes, {task_store.ROW_GROWTH_BYTES:,} are kept for what "
        "sending adds)"
    )
    assert "1 rows cannot be scheduled" in result.stderr


def test_a_recipient_whose_text_is_over_128_kib_is_refused_at_dry_run_naming_the_row_and_field(
    run: Run, resources: Resources, tmp_path: Path
) -> None:
    steps = [
        {"subject": "About {{ company }}", "text": "Hi" + STATEMENTS},
        {"after_days": 4, "subject": "Re", "text": "{{ notes }}" * 5 + STATEMENTS},
    ]
    campaign = _campaign(tmp_path, steps=steps)
    recipients = _csv(
        tmp_path, f"email,company,notes\nok@acme.example,Acme,short\nbig@acme.example,Big,{'n' * 90_000}\n"
    )
    result = _schedule(run, [], "--dry-run", campaign=campaign, recipients=recipients)
    assert result.exit_code == 2, result.output
    [rejected] = json.loads(result.stdout)["rejected"]
    assert (rejected["row"], rejected["value"], rejected["reason"]) == (
        3,
        "big@acme.example",
        "steps.1.text: the output passed 131,072 characters, the most this field may have",
    )


def test_a_recipients_line_over_256_ki_characters_is_refused_naming_it(
    run: Run, resources: Resources, tmp_path: Path
) -> None:
    recipients = _csv(
        tmp_path, "email,company\nok@acme.example,Acme\nbig@acme.example," + "n" * 2_000_000 + "\n"
    )
    result = _schedule(run, [], "--dry-run", recipients=recipients)
    assert result.exit_code == 2, result.output
    assert (
        f"{recipients}: line 3 is longer than 262,144 characters, the most a line may have" in result.stderr
    )


def test_a_recipients_header_with_two_columns_for_one_placeholder_is_refused_naming_both(
    run: Run, resources: Resources, tmp_path: Path
) -> None:
    recipients = _csv(tmp_path, "email,company,EMAIL\nfirst@acme.example,Acme,second@evil.example\n")
    result = _schedule(run, [], "--dry-run", recipients=recipients)
    assert result.exit_code == 2, result.output
    assert "columns 1 ('email') and 3 ('EMAIL') are both the placeholder 'email'" in result.stderr


def test_a_plan_above_the_accounts_sending_rate_is_refused_with_the_numbers(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path
) -> None:
    campaign = _campaign(tmp_path, max_per_minute=900)
    for dry_run in (["--dry-run"], []):
        result = _schedule(run, email_flags, *dry_run, campaign=campaign)
        assert result.exit_code == 2, result.output
        assert (
            "max_per_minute 900 is 15.0 emails/s; the account's SES sending rate in eu-central-1 is "
            "14.0/s (GetAccount MaxSendRate)"
        ) in result.stderr
    assert _email_items(resources) == []
    assert _schedules() == {}
    assert task_store.get_job(CAMPAIGN_ID) is None
    set_ses_account(REGION, max_send_rate=15.0)
    assert as_json(_schedule(run, email_flags, campaign=campaign))["created"] == 6


def test_a_plan_above_the_accounts_24_hour_quota_is_refused_with_the_numbers(
    run: Run, resources: Resources, email_flags: list[str]
) -> None:
    set_ses_account(REGION, max_24_hour_send=2.0)
    result = _schedule(run, email_flags)
    assert result.exit_code == 2, result.output
    assert (
        "3 emails are due in the 24 h up to 2027-03-01T09:00:06+01:00: 3; the account's SES 24-hour "
        "quota in eu-central-1 is 2 (GetAccount Max24HourSend)"
    ) in result.stderr
    assert _email_items(resources) == []
    set_ses_account(REGION, max_24_hour_send=3.0)
    assert as_json(_schedule(run, email_flags))["created"] == 6


def test_the_emails_sent_in_the_last_24_hours_count_against_the_first_days_quota(
    run: Run, resources: Resources, email_flags: list[str], ses: list[float]
) -> None:
    for n in range(2):
        boto3.client("sesv2", region_name=REGION).send_email(
            FromEmailAddress="partners@mail.acme.example",
            Destination={"ToAddresses": [f"earlier{n}@example.org"]},
            Content={"Simple": {"Subject": {"Data": "s"}, "Body": {"Text": {"Data": "t"}}}},
        )
    set_ses_account(REGION, max_24_hour_send=4.0)
    result = _schedule(run, email_flags, "--dry-run")
    assert result.exit_code == 2, result.output
    assert (
        "3 emails are due in the 24 h up to 2027-03-01T09:00:06+01:00 plus 2 sent in the last 24 h: 5; "
        "the account's SES 24-hour quota in eu-central-1 is 4 (GetAccount Max24HourSend)"
    ) in result.stderr
    set_ses_account(REGION, max_24_hour_send=5.0)
    quota = as_json(_schedule(run, email_flags, "--dry-run"))["ses_quota"]
    assert (quota["checked"], quota["sent_last_24_hours"], quota["busiest_24_hours"]["emails"]) == (
        True,
        2,
        3,
    )


@pytest.fixture
def get_account_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """GetAccount refused, as for credentials without ses:GetAccount."""
    client = boto3.client("sesv2", region_name=REGION)
    stubber = Stubber(client)
    for _ in range(2):
        stubber.add_client_error("get_account", "AccessDeniedException", "not authorized to ses:GetAccount")
    stubber.activate()
    monkeypatch.setattr(campaign_quota, "account_client", lambda: client)


def test_a_dry_run_whose_ses_quota_cannot_be_read_says_quota_not_checked(
    run: Run, resources: Resources, get_account_refused: None
) -> None:
    report = as_json(_schedule(run, [], "--dry-run"))
    assert report["ses_quota"]["checked"] is False
    assert report["ses_quota"]["reason"].startswith("quota not checked: sesv2 GetAccount failed: ")
    assert "AccessDeniedException" in report["ses_quota"]["reason"]
    human = run(
        "campaign", "schedule", "--campaign", str(CAMPAIGN), "--recipients", str(RECIPIENTS),
        "--start", START, "--dry-run",
    )  # fmt: skip
    assert human.exit_code == 0, human.output
    assert "SES quota not checked" in human.stdout


def test_a_schedule_whose_ses_quota_cannot_be_read_fails_and_writes_nothing(
    run: Run, resources: Resources, email_flags: list[str], get_account_refused: None
) -> None:
    result = _schedule(run, email_flags)
    assert result.exit_code == 1, result.output
    assert "cannot read the account's SES sending quota (sesv2 GetAccount)" in result.stderr
    assert "nothing written" in result.stderr
    assert _email_items(resources) == []
    assert _schedules() == {}
    assert task_store.get_job(CAMPAIGN_ID) is None
