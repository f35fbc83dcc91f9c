"""``outreach campaign schedule``: the dry run shows the stop rules, and a campaign with a reply domain
writes each email's reply address, rules and thread, its reply addresses made with the environment's key."""

from __future__ import annotations

from pathlib import Path

import pytest

from outreach import task_store
from outreach.email_task import email_task_id
from outreach.reply_token import task_of_reply_address
from tests.functions.feedback_support import create_hmac_key
from tests.outreach_operator.cli.campaign_support import CAMPAIGN, CAMPAIGN_ID, RECIPIENTS, START
from tests.outreach_operator.cli.campaign_support import campaign_file as _campaign
from tests.outreach_operator.cli.campaign_support import schedule_example as _schedule
from tests.outreach_operator.cli.conftest import Run, as_json
from tests.support.aws import Resources

pytestmark = pytest.mark.usefixtures("ses_account")

DOMAIN = "reply.acme.example"


def test_the_dry_run_reports_the_stop_rules_and_the_threaded_steps(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path
) -> None:
    campaign = _campaign(tmp_path, stop_rules={"on_out_of_office": "continue"})
    report = as_json(_schedule(run, email_flags, "--dry-run", campaign=campaign))
    rules = report["stop_rules"]
    assert (rules["on_reply"], rules["reply_stops_other_campaigns"], rules["on_out_of_office"]) == (
        "stop",
        True,
        "continue",
    )
    assert (rules["threaded_steps"], rules["reply_to"], rules["owner"]) == (
        [2],
        "replies@acme.example",
        "replies@acme.example",
    )
    assert rules["received"].startswith("no: ")


def test_the_dry_run_prints_the_stop_rules_for_a_person(run: Run, resources: Resources) -> None:
    result = run(
        "campaign", "schedule", "--campaign", str(CAMPAIGN), "--recipients", str(RECIPIENTS),
        "--start", START, "--dry-run",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "stop rules: on reply stop (in every campaign); on out-of-office postpone" in result.stdout
    assert "threaded steps: 2" in result.stdout


def test_a_dry_run_with_a_reply_domain_needs_no_key_and_shows_where_replies_go(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path
) -> None:
    campaign = _campaign(tmp_path, reply_domain=DOMAIN)
    report = as_json(_schedule(run, email_flags, "--dry-run", campaign=campaign))
    rules = report["stop_rules"]
    assert rules["reply_to"] == f"reply+<token>@{DOMAIN} (one per email)"
    assert rules["macs"].startswith("not made: a dry run makes no KMS calls")
    assert "unsubscribe_mailto" not in rules  # the example has an unsubscribe of its own


def test_a_campaign_with_a_reply_domain_writes_each_emails_reply_address_rules_and_thread(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path
) -> None:
    key = create_hmac_key()
    campaign = _campaign(tmp_path, reply_domain=DOMAIN, stop_rules={"reply_stops_other_campaigns": False})
    report = as_json(_schedule(run, [*email_flags, "--unsubscribe-key-arn", key], campaign=campaign))
    assert report["created"] == 6
    assert report["stop_rules"]["macs"] == f"6 made with KMS GenerateMac ({key})"
    for step in (1, 2):
        task = task_store.get_task(email_task_id(CAMPAIGN_ID, "hello@contoso.example", step))
        assert task is not None and task.email is not None
        assert task.email.threaded is (step == 2)
        assert task.email.rules is not None and task.email.rules.reply_stops_other_campaigns is False
        assert task.email.rules.owner == "replies@acme.example"
        reply_to = task.email.message["reply_to"]
        found = task_of_reply_address(reply_to, DOMAIN, key_id=key)
        assert found is not None and found.task_id == task.task_id


def test_a_real_schedule_with_a_reply_domain_and_no_key_is_refused_before_anything_is_written(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path
) -> None:
    result = _schedule(run, email_flags, campaign=_campaign(tmp_path, reply_domain=DOMAIN))
    assert result.exit_code != 0
    assert "--unsubscribe-key-arn" in result.output
    assert task_store.get_job(CAMPAIGN_ID) is None
