"""``outreach contacts show|block|unblock``: the operator's view and changes of the contact ledger."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from outreach import contacts, task_store
from outreach.email_task import email_schedule_name, email_task_id
from outreach.task_model import Status
from outreach_operator.cli.output import EXIT_RECIPIENTS_OWN_STOP
from outreach_operator.contacts import records
from tests.outreach_operator.cli.campaign_support import CAMPAIGN_ID, campaign_file, csv_file, schedules
from tests.outreach_operator.cli.campaign_support import schedule_example as schedule
from tests.outreach_operator.cli.conftest import OPERATOR, Run, as_json, claim_task
from tests.outreach_operator.cli.ledger_support import (
    ledger_items,
    ledger_record,
    record_address_stop,
    record_domain_block,
)
from tests.support.aws import Resources

pytestmark = pytest.mark.usefixtures("ses_account")

NORTHWIND = "info@northwind.example"
CONTOSO = "hello@contoso.example"
FABRIKAM = "sales@fabrikam.example"


def _task(campaign: str, address: str, step: int) -> Any:
    task = task_store.get_task(email_task_id(campaign, address, step))
    assert task is not None
    return task


# ---- unblock ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("state", "source"),
    [
        (contacts.State.UNSUBSCRIBED, contacts.Source.UNSUBSCRIBE),
        (contacts.State.COMPLAINED, contacts.Source.SES),
    ],
)
@pytest.mark.parametrize("dry_run", [False, True])
def test_unblock_never_lifts_an_unsubscribe_or_a_complaint(
    run: Run, resources: Resources, state: contacts.State, source: contacts.Source, dry_run: bool
) -> None:
    record_address_stop(NORTHWIND, state, source)
    before = ledger_items()
    result = run(
        "contacts",
        "unblock",
        "Info@Northwind.example",
        "--why",
        "customer called",
        *(["--dry-run"] * dry_run),
    )
    assert result.exit_code == EXIT_RECIPIENTS_OWN_STOP == 3, result.output
    assert f"is {state.value} since 2027-02-20T10:00:00Z" in result.stderr
    assert "never lifted by an operator; nothing changed" in result.stderr
    assert ledger_items() == before
    stop = contacts.stop_of(NORTHWIND)
    assert stop is not None and stop.state is state


@pytest.mark.parametrize("state", [contacts.State.BLOCKED, contacts.State.BOUNCED])
def test_unblock_lowers_a_block_or_a_bounce_to_ok_with_who_and_why(
    run: Run, resources: Resources, state: contacts.State
) -> None:
    record_address_stop(NORTHWIND, state, contacts.Source.SES, why="3 soft bounces")
    report = as_json(run("contacts", "unblock", NORTHWIND, "--why", "mailbox fixed", extra=["--json"]))
    assert report["lowered"] is True
    assert report["before"]["state"] == state.value
    assert contacts.stop_of(NORTHWIND) is None
    record = ledger_record(contacts.address_key(NORTHWIND))
    assert record is not None
    assert (record["state"], record["state_rank"], record["source"]) == ("ok", "0", "operator")
    assert record["why"] == f"mailbox fixed (by {OPERATOR})"


def test_an_unsubscribe_recorded_between_the_read_and_the_unblock_wins(
    run: Run, resources: Resources, monkeypatch: pytest.MonkeyPatch
) -> None:
    record_address_stop(NORTHWIND, contacts.State.BLOCKED, contacts.Source.OPERATOR)
    real_record = records.record
    reads = {"n": 0}

    def read_then_unsubscribe(key: str) -> dict[str, Any] | None:
        found = real_record(key)
        reads["n"] += 1
        if reads["n"] == 1:  # the command has read "blocked"; the recipient clicks now
            record_address_stop(NORTHWIND, contacts.State.UNSUBSCRIBED, contacts.Source.UNSUBSCRIBE)
        return found

    monkeypatch.setattr(records, "record", read_then_unsubscribe)
    result = run("contacts", "unblock", NORTHWIND, "--why", "wrong block")
    assert result.exit_code == 3, result.output
    assert "is unsubscribed" in result.stderr
    stop = contacts.stop_of(NORTHWIND)
    assert stop is not None and stop.state is contacts.State.UNSUBSCRIBED


def test_unblocking_an_address_whose_domain_is_blocked_says_it_stays_stopped(
    run: Run, resources: Resources
) -> None:
    record_address_stop(NORTHWIND, contacts.State.BLOCKED, contacts.Source.OPERATOR)
    record_domain_block("northwind.example")
    report = as_json(run("contacts", "unblock", NORTHWIND, "--why", "asked", extra=["--json"]))
    assert report["lowered"] is True
    assert report["still_stopped_by"]["contact_key"] == "domain#northwind.example"
    assert contacts.stop_of(NORTHWIND) is not None


def test_a_dry_run_unblock_changes_nothing(run: Run, resources: Resources) -> None:
    record_address_stop(NORTHWIND, contacts.State.BOUNCED, contacts.Source.SES)
    before = ledger_items()
    report = as_json(run("contacts", "unblock", NORTHWIND, "--why", "x", "--dry-run", extra=["--json"]))
    assert (report["dry_run"], report["lowered"]) == (True, False)
    assert ledger_items() == before


# ---- block -----------------------------------------------------------------------------------


def test_block_records_blocked_with_who_and_why_and_cancels_open_emails_in_every_campaign_but_a_claimed_send(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path
) -> None:
    as_json(schedule(run, email_flags))
    other = campaign_file(tmp_path, campaign_id="autumn-outreach-2027")
    as_json(schedule(run, email_flags, campaign=other))
    sending = claim_task(email_task_id(CAMPAIGN_ID, NORTHWIND, 1))
    report = as_json(
        run("contacts", "block", NORTHWIND, "--why", "asked us by phone", extra=["--json", *email_flags])
    )
    assert report["recorded"] is True
    assert (report["cancelled"], report["schedules_deleted"], report["already_moved"]) == (3, 3, 1)
    assert [e["task_id"] for e in report["being_sent"]] == [sending.task_id]
    stop = contacts.stop_of(NORTHWIND)
    assert stop is not None
    assert (stop.state, stop.source) == (contacts.State.BLOCKED, contacts.Source.OPERATOR)
    assert stop.why == f"asked us by phone (by {OPERATOR})"
    for campaign, step in [(CAMPAIGN_ID, 2), ("autumn-outreach-2027", 1), ("autumn-outreach-2027", 2)]:
        task = _task(campaign, NORTHWIND, step)
        assert task.status is Status.CANCELLED
        assert task.failure_reason == stop.reason
        assert task.failure_reason.startswith("contact_stopped: blocked since ")
    assert _task(CAMPAIGN_ID, NORTHWIND, 1).status is Status.RUNNING  # the one send that may still go out
    left = set(schedules())
    assert email_schedule_name(sending.task_id) in left
    assert email_schedule_name(email_task_id(CAMPAIGN_ID, NORTHWIND, 2)) not in left
    for address in (CONTOSO, FABRIKAM):
        for campaign in (CAMPAIGN_ID, "autumn-outreach-2027"):
            assert _task(campaign, address, 1).status is Status.PENDING
            assert email_schedule_name(email_task_id(campaign, address, 2)) in left


def test_a_dry_run_block_lists_the_emails_it_would_cancel_and_changes_nothing(
    run: Run, resources: Resources, email_flags: list[str]
) -> None:
    as_json(schedule(run, email_flags))
    before, scheduled = ledger_items(), schedules()
    report = as_json(run("contacts", "block", CONTOSO, "--why", "x", "--dry-run", extra=["--json"]))
    assert sorted(e["step"] for e in report["open_emails"]) == [1, 2]
    assert (ledger_items(), schedules()) == (before, scheduled)
    assert _task(CAMPAIGN_ID, CONTOSO, 1).status is Status.PENDING


def test_blocking_a_domain_stops_every_address_there_and_cancels_only_their_emails(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path
) -> None:
    recipients = csv_file(
        tmp_path,
        "email,company,website\n"
        "a@globex.example,Globex,https://globex.example/\n"
        "B@Globex.example,Globex,https://globex.example/\n"
        "c@sub.globex.example,Globex Sub,https://sub.globex.example/\n",
    )
    as_json(schedule(run, email_flags, recipients=recipients))
    report = as_json(
        run(
            "contacts",
            "block",
            "--domain",
            "GLOBEX.example",
            "--why",
            "legal",
            extra=["--json", *email_flags],
        )
    )
    assert report["contact"] == {"key": "domain#globex.example", "kind": "domain", "value": "globex.example"}
    assert (report["cancelled"], report["addresses"]) == (4, 2)
    for address in ("a@globex.example", "B@globex.example"):
        assert _task(CAMPAIGN_ID, address, 1).status is Status.CANCELLED
    assert _task(CAMPAIGN_ID, "c@sub.globex.example", 1).status is Status.PENDING  # another domain
    stop = contacts.stop_of("someone.new@globex.example")
    assert stop is not None and stop.key == "domain#globex.example"


def test_blocking_an_unsubscribed_address_keeps_the_unsubscribe(
    run: Run, resources: Resources, email_flags: list[str]
) -> None:
    record_address_stop(NORTHWIND, contacts.State.UNSUBSCRIBED, contacts.Source.UNSUBSCRIBE)
    report = as_json(run("contacts", "block", NORTHWIND, "--why", "x", extra=["--json", *email_flags]))
    assert report["recorded"] is False
    assert report["stop"]["state"] == "unsubscribed"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--domain", "a@b.example"], "is an address: give the domain alone"),
        (["not-an-address"], "ADDRESS: 'not-an-address': invalid e-mail address"),
        (["x@y.example", "--domain", "y.example"], "give exactly one of ADDRESS or --domain"),
        ([], "give exactly one of ADDRESS or --domain"),
    ],
)
def test_what_is_not_one_address_or_one_domain_is_refused_naming_the_argument(
    run: Run, resources: Resources, args: list[str], message: str
) -> None:
    result = run("contacts", "block", *args, "--why", "x", "--dry-run")
    assert result.exit_code == 2
    assert message in result.stderr
    assert ledger_items() == []


def test_a_why_longer_than_the_ledger_keeps_is_refused(run: Run, resources: Resources) -> None:
    result = run("contacts", "block", NORTHWIND, "--why", "w" * 401, "--dry-run")
    assert result.exit_code == 2
    assert "--why: 401 characters; at most 400" in result.stderr


# ---- show ------------------------------------------------------------------------------------


def test_show_gives_the_stop_an_address_gets_from_its_domain(run: Run, resources: Resources) -> None:
    record_domain_block("contoso.example")
    report = as_json(run("contacts", "show", CONTOSO, extra=["--json"]))
    assert report["record"] is None
    assert report["domain_record"]["state"] == "blocked"
    assert report["stopped"] is True
    assert report["stop"]["contact_key"] == "domain#contoso.example"
    assert report["open_emails"] == {"pending": [], "running": []}


def test_show_of_an_address_nobody_stopped_says_it_may_be_mailed(run: Run, resources: Resources) -> None:
    result = run("contacts", "show", FABRIKAM)
    assert result.exit_code == 0, result.output
    assert "not stopped: emails may be sent" in result.stdout
