"""The reputation guard on the embedded AWS: a campaign to a list that hard-bounces pushes the account's
bounce rate over the stop level; sending pauses within one evaluation period, a person is paged, the
emails due meanwhile wait, and ``outreach sending resume`` lets them go out, none lost.

The local root creates the rule from the stop alarms to the sending guard DISABLED (its other
scenarios play bouncing lists on the same account, terraform/environments/local/main.tf); this
scenario enables it for its own run, as an operator would (``aws events enable-rule``), and disables it
again at the end. The embedded SES publishes ``Reputation.BounceRate`` over the account's last 1,000
emails (scripts/embedded_aws/ses_reputation_metrics.py), so the bouncing share is large enough to cross
the stop level even after the package's earlier scenarios' sends.

The end state: the configuration set paused no later than one alarm period (plus the publish cadence
and the guard's invocation) after the first datapoint at the stop level; the alarm topic paged with the
stop alarm's ALARM; no email accepted by SES between the pause and the resume; some emails held while
paused (moved later, ``sending_paused``) and sent after the resume; every task terminal, each Finished
task with its one email, anything else Failed ``too_late`` saying sending was paused.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from embedded_aws.ses_outcomes import ses_outcomes
from embedded_aws.ses_v2 import SentEmail, sent_emails
from outreach import email_schedules, ses_tags, task_store
from outreach.email_task import EmailMessage, PlannedEmail
from outreach.sequence_rules import SequenceRules
from outreach.task_model import Kind
from outreach_dev.local_run import outreach_command
from tests.e2e.conftest import E2E
from tests.e2e.stacks import SECOND_STACK

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500), SECOND_STACK]

CAMPAIGN = "campaign-reputation-guard"
RECIPIENTS = 100
# A purchased list: the first 45 addresses are gone. 45 of the account's last 1,000 emails is 4.5 %,
# over the 4 % stop level whatever the earlier scenarios sent.
BOUNCING = range(0, 45)
SPACING_SECONDS = 30
# Every day, all day: a held email is moved by the recheck interval, never to another day.
ALWAYS = SequenceRules(send_days=(0, 1, 2, 3, 4, 5, 6), window_start="00:00", window_end="23:59")
# Between the first datapoint at the stop level and the pause, besides the alarm's period: the
# reputation publish cadence (60 s) and the rule's and the guard's asynchronous invocations.
PAUSE_SLACK_SECONDS = 120


def _address(i: int) -> str:
    return f"lead{i:03d}@bought{i % 7}.example"


def _plan(sender: str, start: datetime) -> list[PlannedEmail]:
    return [
        PlannedEmail(
            campaign_id=CAMPAIGN,
            step=1,
            send_at=start + timedelta(seconds=SPACING_SECONDS * i),
            timezone="UTC",
            message=EmailMessage(
                sender=sender,
                to=_address(i),
                subject=f"An offer for lead {i:03d}",
                text="Hello",
                unsubscribe=f"mailto:unsubscribe@{sender.split('@', 1)[1]}",
            ),
            rules=ALWAYS,
        )
        for i in range(RECIPIENTS)
    ]


def _ours(e2e: E2E) -> list[SentEmail]:
    tag = ses_tags.encode_campaign(CAMPAIGN)
    return [e for e in sent_emails(e2e.stack.region) if e.tags.get("outreach-campaign") == tag]


def _sending_enabled(e2e: E2E, configuration_set: str) -> bool:
    options = e2e.stack.client("sesv2").get_configuration_set(ConfigurationSetName=configuration_set)
    return bool(options.get("SendingOptions", {}).get("SendingEnabled", True))


def _first_datapoint_at_level(e2e: E2E, since: float, level: float) -> float | None:
    """The virtual time of the first published account bounce rate at or above ``level`` since ``since``."""
    found = e2e.stack.client("cloudwatch").get_metric_statistics(
        Namespace="AWS/SES",
        MetricName="Reputation.BounceRate",
        StartTime=datetime.fromtimestamp(since, UTC),
        EndTime=datetime.fromtimestamp(e2e.stack.clock.now() + 60, UTC),
        Period=60,
        Statistics=["Maximum"],
    )["Datapoints"]
    crossing = [p["Timestamp"].timestamp() for p in found if p["Maximum"] >= level]
    return min(crossing) if crossing else None


def _held_while_paused(rows: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows.values() if str(r.get("deferred_reason", "")).startswith("sending_paused")]


def test_a_campaign_crossing_the_bounce_stop_level_pauses_pages_and_resumes_with_none_lost(e2e: E2E) -> None:
    stack = e2e.stack
    outputs = stack.outputs
    configuration_set = str(outputs["email_configuration_set"])
    rule = str(outputs["email_reputation_stop_rule"])
    bounce_stop = next(a for a in str(outputs["email_reputation_stop_alarms"]).split(",") if "bounce" in a)
    (alarm,) = stack.client("cloudwatch").describe_alarms(AlarmNames=[bounce_stop])["MetricAlarms"]
    period, level = float(alarm["Period"]), float(alarm["Threshold"])
    assert stack.alarm_state(bounce_stop) != "ALARM", (
        "an earlier scenario left the bounce rate at the stop level"
    )
    assert _sending_enabled(e2e, configuration_set)
    target = email_schedules.ScheduleTarget(
        group=str(outputs["email_schedule_group"]),
        worker_arn=str(outputs["email_worker_arn"]),
        role_arn=str(outputs["email_scheduler_role_arn"]),
        dlq_arn=str(outputs["email_dlq_arn"]),
    )
    sender = f"offers@{outputs['email_sender_identity']}"
    pages = e2e.subscribe_to_alarms("reputation-guard")
    events = stack.client("events")

    # GIVEN the guard's rule enabled, and a campaign to a list whose first 45 addresses hard-bounce
    events.enable_rule(Name=rule)
    try:
        with ses_outcomes(hard_bounce={_address(i) for i in BOUNCING}):
            start = datetime.fromtimestamp(stack.clock.now(), UTC).replace(second=0, microsecond=0)
            start += timedelta(minutes=5)
            planned = _plan(sender, start)
            with stack.as_caller():
                created = task_store.create_email_tasks(planned)
                scheduled = sum(email_schedules.ensure_schedule(p, target) for p in planned)
            assert (len(created.created), scheduled) == (RECIPIENTS, RECIPIENTS)

            # WHEN the bounces push the bounce rate over the stop level, sending pauses by itself
            e2e.wait_until(
                lambda: not _sending_enabled(e2e, configuration_set),
                timeout=900,
                what="the configuration set paused by the guard",
                describe=lambda: (stack.alarm_history(bounce_stop), len(_ours(e2e))),
                interval=0.2,
            )
            paused_seen = stack.clock.now()
            # AND a person is paged through the alarm topic
            e2e.wait_until(
                lambda: any(bounce_stop in body and "ALARM" in body for body in pages()),
                timeout=120,
                what="the stop alarm's page on the alarm topic",
            )
            # AND an email due while paused is held, not sent and not lost
            e2e.wait_until(
                lambda: bool(_held_while_paused(e2e.task_rows(CAMPAIGN, Kind.EMAIL))),
                timeout=600,
                what="an email held while sending is paused",
            )
            held_before_resume = len(_held_while_paused(e2e.task_rows(CAMPAIGN, Kind.EMAIL)))
            assert not _sending_enabled(e2e, configuration_set)

            # WHEN the operator resumes sending with the command
            resume_started = stack.clock.now()
            code, out = outreach_command(
                stack, "--json", "--email-configuration-set", configuration_set, "sending", "resume"
            )
            assert code == 0, out
            resumed = json.loads(out)
            assert (resumed["before"], resumed["after"]) == ("paused", "sending")

            # THEN every email goes out or is accounted for
            counts = e2e.wait_terminal(CAMPAIGN, RECIPIENTS, timeout=900.0, idle_skip=0.0)
    finally:
        events.disable_rule(Name=rule)
        if not _sending_enabled(e2e, configuration_set):
            stack.client("sesv2").put_configuration_set_sending_options(
                ConfigurationSetName=configuration_set, SendingEnabled=True
            )

    # THEN the pause came within one evaluation period of the first datapoint at the stop level
    crossing = _first_datapoint_at_level(e2e, start.timestamp() - 60, level)
    assert crossing is not None
    assert crossing <= paused_seen <= crossing + period + PAUSE_SLACK_SECONDS, (crossing, paused_seen, period)

    # AND nothing was sent while paused
    emails = _ours(e2e)
    during = [e.to for e in emails if paused_seen <= e.sent_at <= resume_started]
    assert during == [], during

    # AND every task is terminal, each Finished one with its one email, the held ones sent after the resume
    assert counts["Pending"] == counts["Running"] == 0, counts
    rows = e2e.task_rows(CAMPAIGN, Kind.EMAIL)
    per_recipient = Counter(e.to[0] for e in emails)
    assert set(per_recipient.values()) == {1}, [a for a, n in per_recipient.items() if n > 1]
    finished = {str(r["recipient"]) for r in rows.values() if r["status"] == "Finished"}
    assert finished == set(per_recipient)
    others = {
        str(r["recipient"]): str(r.get("failure_reason", ""))
        for r in rows.values()
        if r["status"] != "Finished"
    }
    assert all(reason.startswith("too_late:") and "sending_paused" in reason for reason in others.values()), (
        others
    )
    assert len(finished) + len(others) == RECIPIENTS
    held = _held_while_paused(rows)
    assert len(held) >= held_before_resume >= 1
    sent_at = {e.to[0]: e.sent_at for e in emails}
    held_and_sent = [str(r["recipient"]) for r in held if r["status"] == "Finished"]
    assert held_and_sent, held
    assert all(sent_at[address] > resume_started for address in held_and_sent)
    e2e.record(
        "reputation_guard",
        crossing_to_pause_s=round(paused_seen - crossing, 1),
        paused_for_s=round(resume_started - paused_seen, 1),
        held=len(held),
        sent=len(finished),
        too_late=len(others),
    )
