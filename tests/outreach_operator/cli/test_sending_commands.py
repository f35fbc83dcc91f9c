"""``outreach sending``: a paused configuration set sends nothing until it is resumed, a dry run changes
nothing, and ``campaign status`` says why nothing goes out while it is paused."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import boto3
import pytest

from embedded_aws.ses_v2 import sent_emails
from outreach import task_store
from outreach.task_model import Status
from tests.outreach_operator.cli.campaign_support import CAMPAIGN_ID
from tests.outreach_operator.cli.campaign_support import fire_due_schedules as _fire_due_schedules
from tests.outreach_operator.cli.campaign_support import schedule_example as _schedule
from tests.outreach_operator.cli.conftest import SES_CONFIGURATION_SET, Run, as_json
from tests.support.aws import REGION, Resources

pytestmark = pytest.mark.usefixtures("ses_account")
FLAGS = ["--email-configuration-set", SES_CONFIGURATION_SET]


def _sending_enabled() -> bool:
    options = boto3.client("sesv2", region_name=REGION).get_configuration_set(
        ConfigurationSetName=SES_CONFIGURATION_SET
    )["SendingOptions"]
    return bool(options["SendingEnabled"])


def test_pause_and_resume_switch_the_configuration_set_and_a_dry_run_changes_nothing(
    run: Run, ses: list[float]
) -> None:
    status = as_json(run("sending", "status", extra=["--json", *FLAGS]))
    assert (status["sending_enabled"], status["why_nothing_is_sent"]) == (True, None)
    dry = as_json(run("sending", "pause", "--dry-run", extra=["--json", *FLAGS]))
    assert (dry["before"], dry["after"], dry["dry_run"]) == ("sending", "paused", True)
    assert _sending_enabled()
    as_json(run("sending", "pause", extra=["--json", *FLAGS]))
    assert not _sending_enabled()
    again = run("sending", "pause", extra=FLAGS)
    assert again.exit_code == 2 and "already paused" in again.stderr
    status = as_json(run("sending", "status", extra=["--json", *FLAGS]))
    assert status["why_nothing_is_sent"] == (
        f"sending is paused for configuration set {SES_CONFIGURATION_SET}: outreach sending resume"
    )
    as_json(run("sending", "resume", "--dry-run", extra=["--json", *FLAGS]))
    assert not _sending_enabled()
    as_json(run("sending", "resume", extra=["--json", *FLAGS]))
    assert _sending_enabled()


def test_the_commands_need_the_configuration_set(run: Run) -> None:
    result = run("sending", "status")
    assert result.exit_code == 2 and "--email-configuration-set" in result.stderr


def test_while_paused_nothing_is_sent_the_emails_wait_pending_and_status_says_why(
    run: Run, resources: Resources, email_flags: list[str], ses: list[float]
) -> None:
    as_json(_schedule(run, email_flags))
    as_json(run("sending", "pause", extra=["--json", *FLAGS]))
    ses[0] = datetime(2027, 3, 1, 9, 5, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()
    fired = _fire_due_schedules(ses[0])
    assert fired
    assert sent_emails(REGION) == []
    assert task_store.job_counts(CAMPAIGN_ID)[Status.PENDING.value] == 6
    # Each email SES refused as paused waits, moved later, for the resume (``sending_pause``).
    for event in fired:
        held = task_store.get_task(event["task_id"])
        assert held is not None and held.email is not None
        assert (held.email.deferred_reason or "").startswith("sending_paused:")
    status = as_json(run("campaign", "status", CAMPAIGN_ID, extra=["--json", *FLAGS]))
    assert status["sending"]["why_nothing_is_sent"].startswith("sending is paused for configuration set")
    table = run("campaign", "status", CAMPAIGN_ID, extra=FLAGS)
    assert "nothing is sent: sending is paused" in table.stdout


STOP_ALARM = "outreach-test-email-bounce-rate-stop"


def _stop_alarm_in_alarm() -> None:
    cloudwatch = boto3.client("cloudwatch", region_name=REGION)
    cloudwatch.put_metric_alarm(
        AlarmName=STOP_ALARM,
        Namespace="AWS/SES",
        MetricName="Reputation.BounceRate",
        Statistic="Maximum",
        Period=900,
        EvaluationPeriods=1,
        Threshold=0.04,
        ComparisonOperator="GreaterThanOrEqualToThreshold",
    )
    cloudwatch.set_alarm_state(
        AlarmName=STOP_ALARM, StateValue="ALARM", StateReason="Threshold Crossed: 0.0625 >= 0.04"
    )


def test_status_says_the_reputation_guard_paused_sending_naming_the_alarm_and_since_when(
    run: Run, resources: Resources, email_flags: list[str], ses: list[float]
) -> None:
    flags = [*FLAGS, "--reputation-stop-alarms", f"{STOP_ALARM},outreach-test-email-complaint-rate-stop"]
    _stop_alarm_in_alarm()
    as_json(run("sending", "pause", extra=["--json", *flags]))

    status = as_json(run("sending", "status", extra=["--json", *flags]))
    assert [alarm["alarm"] for alarm in status["stop_alarms"]] == [STOP_ALARM]
    assert status["stop_alarms"][0]["since"]
    paused_by = f"the reputation guard paused configuration set {SES_CONFIGURATION_SET}: alarm {STOP_ALARM}"
    assert status["why_nothing_is_sent"].startswith(f"{paused_by} in ALARM since")
    as_json(_schedule(run, email_flags))
    table = run("campaign", "status", CAMPAIGN_ID, extra=flags)
    assert f"nothing is sent: the reputation guard paused configuration set {SES_CONFIGURATION_SET}" in (
        " ".join(table.stdout.split())
    )
