"""``campaign schedule`` and ``status`` with the contact ledger: stopped addresses left out, the default
one-click unsubscribe link, and what SES said of each step."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

import boto3
import pytest
from click.testing import CliRunner

from embedded_aws.kms_hmac_keys import support_hmac_keys
from embedded_aws.ses_v2 import sent_emails
from outreach import contacts, task_store
from outreach.email_task import EmailMessage, email_task_id
from outreach.errors import InvalidTokenError
from outreach.task_model import Task
from outreach.unsubscribe import token
from outreach_operator.campaigns.unsubscribe_uri import target_problem
from outreach_operator.cli.app import cli
from tests.outreach_operator.cli.campaign_support import (
    CAMPAIGN,
    CAMPAIGN_ID,
    RECIPIENTS,
    START,
    campaign_file,
    email_items,
    fire_due_schedules,
    schedules,
)
from tests.outreach_operator.cli.campaign_support import schedule_example as schedule
from tests.outreach_operator.cli.conftest import Run, as_json, target_flags
from tests.outreach_operator.cli.ledger_support import record_address_stop, record_domain_block
from tests.support.aws import REGION, Resources

pytestmark = pytest.mark.usefixtures("ses_account")

UNSUBSCRIBE_URL = "https://abcdefghij0123456789.lambda-url.eu-central-1.on.aws/"
NORTHWIND = "info@northwind.example"
CONTOSO = "hello@contoso.example"
FABRIKAM = "sales@fabrikam.example"


def _hmac_key() -> str:
    support_hmac_keys()
    kms = boto3.client("kms", region_name=REGION)
    return str(kms.create_key(KeySpec="HMAC_256", KeyUsage="GENERATE_VERIFY_MAC")["KeyMetadata"]["Arn"])


def _without_unsubscribe(tmp_path: Path) -> Path:
    path = campaign_file(tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["unsubscribe"]
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _task(address: str, step: int) -> Task:
    task = task_store.get_task(email_task_id(CAMPAIGN_ID, address, step))
    assert task is not None
    return task


def _message(address: str, step: int) -> EmailMessage:
    email = _task(address, step).email
    assert email is not None
    return EmailMessage.from_item(email.message)


# ---- planning leaves stopped addresses out ---------------------------------------------------


@pytest.mark.parametrize("dry_run", [True, False])
def test_planning_leaves_stopped_addresses_out_and_lists_why(
    run: Run, resources: Resources, email_flags: list[str], dry_run: bool
) -> None:
    record_address_stop(CONTOSO, contacts.State.UNSUBSCRIBED, contacts.Source.UNSUBSCRIBE, why="one-click")
    record_domain_block("fabrikam.example", why="their lawyer wrote")
    report = as_json(schedule(run, email_flags, *(["--dry-run"] * dry_run)))
    assert (report["emails"], report["recipients_scheduled"]) == (2, 1)
    assert report["stops"] == {"checked": True, "stopped": 2}
    assert [
        (s["row"], s["address"], s["contact_key"], s["state"], s["since"], s["why"], s["stopped_by"])
        for s in report["stopped"]
    ] == [
        (
            3,
            CONTOSO,
            f"address#{CONTOSO}",
            "unsubscribed",
            "2027-02-20T10:00:00Z",
            "one-click",
            "unsubscribe",
        ),
        (
            4,
            FABRIKAM,
            "domain#fabrikam.example",
            "blocked",
            "2027-02-20T10:00:00Z",
            "their lawyer wrote",
            "operator",
        ),
    ]
    written = {item["recipient"]["S"] for item in email_items(resources)}
    assert written == (set() if dry_run else {NORTHWIND})
    assert len(schedules()) == (0 if dry_run else 2)


def test_a_schedule_whose_recipients_are_all_stopped_writes_nothing_and_says_why(
    run: Run, resources: Resources, email_flags: list[str]
) -> None:
    for address in (NORTHWIND, CONTOSO, FABRIKAM):
        record_address_stop(address, contacts.State.COMPLAINED, contacts.Source.SES)
    result = schedule(run, email_flags)
    assert result.exit_code == 2
    assert "no recipient to schedule (3 left out: the contact ledger stops them)" in result.stderr
    assert len(json.loads(result.stdout)["stopped"]) == 3
    assert email_items(resources) == [] and task_store.get_job(CAMPAIGN_ID) is None


def test_a_dry_run_without_the_contact_ledger_says_stops_were_not_checked(resources: Resources) -> None:
    result = CliRunner().invoke(
        cli,
        [*target_flags(resources), "--json", "campaign", "schedule", "--campaign", str(CAMPAIGN),
         "--recipients", str(RECIPIENTS), "--start", START, "--dry-run"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["stops"]["checked"] is False
    assert "stops not checked: no contact ledger" in report["stops"]["reason"]


def test_a_real_schedule_needs_the_contact_ledger(resources: Resources, email_flags: list[str]) -> None:
    result = CliRunner().invoke(
        cli,
        [*target_flags(resources), *email_flags, "campaign", "schedule", "--campaign", str(CAMPAIGN),
         "--recipients", str(RECIPIENTS), "--start", START],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "pass --contacts-table" in result.stderr
    assert email_items(resources) == []


# ---- the default unsubscribe: one-click links ------------------------------------------------


def test_the_default_unsubscribe_link_verifies_with_the_key_for_its_recipient_and_step(
    run: Run, resources: Resources, email_flags: list[str], ses: list[float], tmp_path: Path
) -> None:
    key = _hmac_key()
    flags = [*email_flags, "--unsubscribe-url", UNSUBSCRIBE_URL, "--unsubscribe-key-arn", key]
    report = as_json(schedule(run, flags, campaign=_without_unsubscribe(tmp_path)))
    assert report["unsubscribe"] == {
        "default": True,
        "url": UNSUBSCRIBE_URL,
        "tokens": f"6 made with KMS GenerateMac ({key})",
    }
    links = set()
    for address in (NORTHWIND, CONTOSO, FABRIKAM):
        for step in (1, 2):
            message = _message(address, step)
            link = message.unsubscribe
            assert link.startswith(f"{UNSUBSCRIBE_URL}?t=")
            assert target_problem(link, UNSUBSCRIBE_URL) is None  # unsubscribe_uri's own checks accept it
            assert f"Unsubscribe: {link}" in message.text  # the {{ unsubscribe }} placeholder
            subject = token.verify_token(key, parse_qs(urlsplit(link).query)["t"][0])
            assert subject == token.TokenSubject(CAMPAIGN_ID, step, address)
            links.add(link)
    assert len(links) == 6  # one per recipient and step
    other_key = _hmac_key()
    with pytest.raises(InvalidTokenError):
        token.verify_token(other_key, parse_qs(urlsplit(links.pop()).query)["t"][0])
    # The worker sends it as the List-Unsubscribe target, with RFC 8058's one-click header.
    ses[0] = datetime(2027, 3, 1, 9, 5, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()
    fire_due_schedules(ses[0])
    sent = {e.to[0]: e for e in sent_emails(REGION)}
    northwind_link = _message(NORTHWIND, 1).unsubscribe
    assert sent[NORTHWIND].headers["List-Unsubscribe"] == f"<{northwind_link}>"
    assert sent[NORTHWIND].headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"


def test_a_dry_run_of_the_default_unsubscribe_makes_no_kms_call_and_says_so(
    run: Run, resources: Resources, tmp_path: Path
) -> None:
    report = as_json(
        schedule(
            run, ["--unsubscribe-url", UNSUBSCRIBE_URL], "--dry-run", campaign=_without_unsubscribe(tmp_path)
        )
    )
    assert report["unsubscribe"]["default"] is True
    assert report["unsubscribe"]["tokens"].startswith("not made: a dry run makes no KMS calls")
    assert report["emails"] == 6


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ([], "the campaign has no unsubscribe of its own and the environment names no one-click endpoint"),
        (["--unsubscribe-url", UNSUBSCRIBE_URL], "pass --unsubscribe-key-arn"),
        (["--unsubscribe-url", "http://plain.example/", "--unsubscribe-key-arn", "k"], "mailto: or https://"),
        (
            ["--unsubscribe-url", "mailto:u@plain.example", "--unsubscribe-key-arn", "k"],
            "one-click needs https",
        ),
        (["--unsubscribe-url", f"{UNSUBSCRIBE_URL}?x=1", "--unsubscribe-key-arn", "k"], "and no query"),
    ],
)
def test_a_campaign_without_its_own_unsubscribe_needs_the_environments_endpoint_and_key(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path, flags: list[str], message: str
) -> None:
    result = schedule(run, [*email_flags, *flags], campaign=_without_unsubscribe(tmp_path))
    assert result.exit_code == 2
    assert message in result.stderr
    assert email_items(resources) == []


# ---- status: per step, what was planned, sent and what SES said --------------------------------


def _send(task: Task, message_id: str) -> Task:
    claimed = task_store.claim_email(task, owner="worker-1", lease_seconds=300)
    task_store.finish_email(claimed, ses_message_id=message_id)
    sent = task_store.get_task(task.task_id)
    assert sent is not None
    return sent


def test_status_counts_per_step_planned_sent_ses_events_once_each_and_cancelled_by_reason(
    run: Run, resources: Resources, email_flags: list[str]
) -> None:
    as_json(schedule(run, email_flags))
    at = datetime(2027, 3, 1, 8, 1, tzinfo=UTC)
    northwind, contoso, fabrikam = (_send(_task(a, 1), f"ses-{a}") for a in (NORTHWIND, CONTOSO, FABRIKAM))
    events: list[tuple[Task, task_store.EmailEvent]] = [
        (northwind, task_store.EmailEvent.DELIVERED),
        (northwind, task_store.EmailEvent.DELIVERED),  # SES delivers an event more than once
        (northwind, task_store.EmailEvent.UNSUBSCRIBED),
        (contoso, task_store.EmailEvent.BOUNCED_HARD),
        (fabrikam, task_store.EmailEvent.DELIVERED),
        (fabrikam, task_store.EmailEvent.COMPLAINED),
        (fabrikam, task_store.EmailEvent.COMPLAINED),
    ]
    for task, kind in events:
        task_store.record_email_event(task, kind, at)
    for address, state in ((NORTHWIND, contacts.State.UNSUBSCRIBED), (CONTOSO, contacts.State.BOUNCED)):
        record_address_stop(address, state, contacts.Source.SES)
        stop = contacts.stop_of(address)
        assert stop is not None
        task_store.cancel_for_stop(_task(address, 2), reason=stop.reason)
    status = as_json(run("campaign", "status", CAMPAIGN_ID, extra=["--json"]))
    first, second = status["steps"]
    # the keys --json always had
    assert (first["step"], first["Finished"], first["Pending"]) == (1, 3, 0)
    assert (second["step"], second["Pending"], second["Cancelled"]) == (2, 1, 2)
    assert status["counts"]["Finished"] == 3
    # the new ones
    assert (first["planned"], first["sent"]) == (3, 3)
    assert (first["delivered"], first["bounced_hard"], first["bounced_soft"]) == (2, 1, 0)
    assert (first["complained"], first["unsubscribed"]) == (1, 1)
    assert first["cancelled_by_reason"] == {}
    assert (second["planned"], second["sent"], second["delivered"]) == (3, 0, 0)
    assert second["cancelled_by_reason"] == {"contact_stopped": 2}
    assert status["events"]["1"]["delivered"] == 2
    assert {"status": "Cancelled", "reason": "contact_stopped", "emails": 2} in status["reasons"]
    table = run("campaign", "status", CAMPAIGN_ID)
    assert table.exit_code == 0, table.output
    assert "what SES said, per step" in table.stdout and "contact_stopped" in table.stdout


def test_status_counts_replies_auto_replies_and_forwards_per_step_once_each_from_the_counters(
    run: Run, resources: Resources, email_flags: list[str]
) -> None:
    as_json(schedule(run, email_flags))
    at = datetime(2027, 3, 1, 9, 0, tzinfo=UTC)
    northwind, contoso = (_send(_task(a, 1), f"ses-{a}") for a in (NORTHWIND, CONTOSO))
    marks: list[tuple[Task, task_store.EmailEvent]] = [
        (northwind, task_store.EmailEvent.REPLIED),
        (northwind, task_store.EmailEvent.REPLIED),  # a second reply to the same email
        (northwind, task_store.EmailEvent.FORWARDED),
        (contoso, task_store.EmailEvent.AUTO_REPLIED),
    ]
    for task, kind in marks:
        task_store.record_email_event(task, kind, at)
    # The reply's fan-out cancelled northwind's follow-up (inbound.actions.replied_reason).
    task_store.cancel_for_stop(_task(NORTHWIND, 2), reason=f"replied: campaign {CAMPAIGN_ID} step 1")
    status = as_json(run("campaign", "status", CAMPAIGN_ID, extra=["--json"]))
    first, second = status["steps"]
    assert (first["replied"], first["auto_replied"], first["forwarded"]) == (1, 1, 1)
    assert (second["replied"], second["auto_replied"], second["forwarded"]) == (0, 0, 0)
    assert second["cancelled_by_reason"] == {"replied": 1}
    assert status["events"]["1"]["replied"] == 1
    # From the counter shards alone: the task rows' marks are not what status reads.
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    dynamodb.update_item(
        TableName=resources.table,
        Key={"task_id": {"S": contoso.task_id}},
        UpdateExpression="REMOVE auto_replied_at",
    )
    again = as_json(run("campaign", "status", CAMPAIGN_ID, extra=["--json"]))
    assert again["steps"][0]["auto_replied"] == 1
    table = run("campaign", "status", CAMPAIGN_ID)
    assert table.exit_code == 0, table.output
    assert "what came back by mail, per step" in table.stdout
    for column in ("replied", "auto replied", "forwarded"):
        assert column in table.stdout
