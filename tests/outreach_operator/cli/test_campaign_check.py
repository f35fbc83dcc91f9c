"""``outreach campaign check`` and the lint inside ``campaign schedule``: a campaign the law refuses is
refused before anything is planned (exit 2, naming step and field), and a rule turned off is recorded
with its reason on the campaign's job row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from outreach import task_store
from outreach_operator.campaigns.compliance.rule_ids import POSTAL_ADDRESS, RULE_IDS
from tests.outreach_operator.cli.campaign_support import CAMPAIGN, CAMPAIGN_ID
from tests.outreach_operator.cli.campaign_support import campaign_file as _campaign
from tests.outreach_operator.cli.campaign_support import email_items as _email_items
from tests.outreach_operator.cli.campaign_support import schedule_example as _schedule
from tests.outreach_operator.cli.campaign_support import schedules as _schedules
from tests.outreach_operator.cli.conftest import Run, as_json
from tests.support.aws import Resources

pytestmark = pytest.mark.usefixtures("ses_account")
REASON = "sent only to the team's own test mailboxes"


def _without_postal_address(tmp_path: Path, **changes: object) -> Path:
    data = yaml.safe_load(CAMPAIGN.read_text(encoding="utf-8"))
    del data["postal_address"]
    data.update(changes)
    path = tmp_path / "campaign.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_check_passes_the_example_campaign_on_every_rule(run: Run) -> None:
    report = as_json(run("campaign", "check", str(CAMPAIGN), extra=["--json"]))
    assert [(v["rule"], v["outcome"]) for v in report["lint"]] == [(rule, "passed") for rule in RULE_IDS]
    assert report["refused"] == []


def test_check_refuses_a_campaign_without_an_unsubscribe_link_naming_the_step_and_field(
    run: Run, tmp_path: Path
) -> None:
    data = yaml.safe_load(CAMPAIGN.read_text(encoding="utf-8"))
    steps = data["steps"]
    steps[1]["text"] = steps[1]["text"].replace("{{ unsubscribe }}", "")
    result = run("campaign", "check", str(_campaign(tmp_path, steps=steps)))
    assert result.exit_code == 2, result.output
    assert "steps.1.text: no unsubscribe link in the body" in result.stderr
    assert "unsubscribe-link" in result.stdout and "failed" in result.stdout


def test_schedule_refuses_a_campaign_the_lint_refuses_before_it_plans_or_writes_anything(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path
) -> None:
    for args in (["--dry-run"], []):
        result = _schedule(run, email_flags, *args, campaign=_without_postal_address(tmp_path))
        assert result.exit_code == 2, result.output
        assert "refused by the campaign lint" in result.stderr
        assert "postal_address: missing: the sender's postal address" in result.stderr
    assert _email_items(resources) == []
    assert _schedules() == {}
    assert task_store.get_job(CAMPAIGN_ID) is None


def test_a_rule_the_campaign_turns_off_is_reported_and_its_reason_recorded_on_the_job_row(
    run: Run, resources: Resources, email_flags: list[str], tmp_path: Path
) -> None:
    data = yaml.safe_load(CAMPAIGN.read_text(encoding="utf-8"))
    steps = [
        {**step, "text": step["text"].replace("{{ postal_address }}", ""), "html": ""}
        for step in data["steps"]
    ]
    path = _without_postal_address(tmp_path, steps=steps, compliance_waivers={POSTAL_ADDRESS: REASON})
    report = as_json(_schedule(run, email_flags, campaign=path))
    [waived] = [v for v in report["lint"] if v["rule"] == POSTAL_ADDRESS]
    assert (waived["outcome"], waived["waived_because"]) == ("waived", REASON)
    assert report["created"] == 6
    job = task_store.get_job(CAMPAIGN_ID)
    assert job is not None and job["compliance_waivers"] == {POSTAL_ADDRESS: REASON}
