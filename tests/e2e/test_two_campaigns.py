"""Two campaigns started at the same moment to overlapping recipients: an address gets at most one first
email inside the first-contact gap, and the blocked first emails go out later, none lost.

Campaigns A and B each send two steps to 30 recipients, 15 of them in both, planned for the same
instants, so the two campaigns' workers claim the shared addresses' first steps at once. What SES
accepted (``ses_v2.sent_emails``, with the emulator's send times) and the task rows must show: no
address got two first steps closer than the applied gap (the worker's ``FIRST_CONTACT_GAP_SECONDS``);
for each shared address exactly one of its two first steps was deferred (``deferred_reason``
``first_contact_limit``) and then sent; every task Finished, one email each; every follow-up sent after
its own first step, its planned spacing kept.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import boto3
import pytest

from embedded_aws.ses_v2 import SentEmail, sent_emails
from outreach import email_schedules, task_store
from outreach.email_task import EmailMessage, PlannedEmail, parse_utc_iso
from outreach.sequence_rules import SequenceRules
from outreach.task_model import Kind
from outreach_dev.local_campaign import PLANNING_ALLOWANCE_SECONDS
from tests.e2e.conftest import E2E, epoch
from tests.e2e.stacks import SECOND_STACK

# The scenario spans the gap (900 virtual s) plus a follow-up: well inside the suite's timeout when the
# clock skips idle minutes; a loaded machine gets room.
pytestmark = [pytest.mark.timeout(600), SECOND_STACK]

CAMPAIGNS = ("two-campaigns-a", "two-campaigns-b")
RECIPIENTS = 30
SHARED = 15
SPACING = timedelta(seconds=2)
FOLLOW_UP_AFTER = timedelta(minutes=20)
# Open every day, all day: the scenario never waits for a window (its zone is chosen away from midnight).
RULES = SequenceRules(send_days=(0, 1, 2, 3, 4, 5, 6), window_start="00:00", window_end="23:59")
# Zones whose local midnights fall in disjoint UTC hours: one of them is always far from midnight.
ZONES = ("Europe/Berlin", "America/New_York", "Asia/Tokyo")
# How far the clock jumps when nothing runs: a schedule fires at most this late, far inside the grace.
IDLE_SKIP_SECONDS = 60.0


def recipients(campaign: str) -> list[str]:
    """The shared addresses first (the same in both campaigns, at the same instants), then its own."""
    shared = [f"shared{i:02d}@overlap.example" for i in range(SHARED)]
    own = [f"{campaign}-{i:02d}@own.example" for i in range(RECIPIENTS - SHARED)]
    return shared + own


def zone_away_from_midnight(at: datetime) -> str:
    """A zone in which ``at`` and the next three hours are one local day inside the window."""
    for name in ZONES:
        local = at.astimezone(ZoneInfo(name))
        if 1 <= local.hour <= 19:
            return name
    raise AssertionError(f"no zone of {ZONES} is away from midnight at {at}")


def plan(campaign: str, sender: str, start: datetime, zone: str) -> list[PlannedEmail]:
    planned: list[PlannedEmail] = []
    for step, offset in ((1, timedelta(0)), (2, FOLLOW_UP_AFTER)):
        for i, address in enumerate(recipients(campaign)):
            planned.append(
                PlannedEmail(
                    campaign_id=campaign,
                    step=step,
                    send_at=start + offset + SPACING * i,
                    timezone=zone,
                    rules=RULES,
                    message=EmailMessage(
                        sender=sender,
                        to=address,
                        subject=f"{campaign} step {step}",
                        text="Hello",
                        unsubscribe=f"mailto:unsubscribe@{sender.split('@', 1)[1]}",
                    ),
                )
            )
    return planned


def first_contact_gap(e2e: E2E) -> float:
    """The gap the applied email worker keeps between two first contacts to one address."""
    stack = e2e.stack
    with stack.as_caller():
        worker = boto3.client("lambda").get_function_configuration(
            FunctionName=str(stack.outputs["email_worker_arn"])
        )
    return float(worker["Environment"]["Variables"]["FIRST_CONTACT_GAP_SECONDS"])


def send_time(row: dict[str, Any]) -> float:
    """A task row's ``send_at`` (as the deferral left it), in seconds since the epoch."""
    return parse_utc_iso(str(row["send_at"])).timestamp()


def campaign_emails(e2e: E2E, sender: str) -> dict[tuple[str, str, int], list[SentEmail]]:
    """What SES accepted from the campaigns' sender, by (campaign, recipient, step)."""
    found: dict[tuple[str, str, int], list[SentEmail]] = defaultdict(list)
    for email in sent_emails(e2e.stack.region):
        if email.sender != sender:
            continue
        campaign, _, step = email.subject.rpartition(" step ")
        if campaign in CAMPAIGNS:
            found[(campaign, email.to[0], int(step))].append(email)
    return found


def test_two_campaigns_to_overlapping_recipients_send_one_first_contact_per_gap_and_defer_the_rest(
    e2e: E2E,
) -> None:
    stack = e2e.stack
    outputs = stack.outputs
    target = email_schedules.ScheduleTarget(
        group=str(outputs["email_schedule_group"]),
        worker_arn=str(outputs["email_worker_arn"]),
        role_arn=str(outputs["email_scheduler_role_arn"]),
        dlq_arn=str(outputs["email_dlq_arn"]),
    )
    sender = f"campaigns@{outputs['email_sender_identity']}"
    gap = first_contact_gap(e2e)
    assert 0 < gap < FOLLOW_UP_AFTER.total_seconds(), gap
    # The first send waits until both campaigns are written however long that takes on a loaded
    # machine (on the fast clock a few real seconds of writing can outlast a send's grace period);
    # then the clock jumps to a minute before it.
    start = datetime.fromtimestamp(stack.clock.now() + PLANNING_ALLOWANCE_SECONDS, tz=UTC)
    start = start.replace(second=0, microsecond=0)
    zone = zone_away_from_midnight(start)
    planned = {campaign: plan(campaign, sender, start, zone) for campaign in CAMPAIGNS}

    # GIVEN both campaigns written, every schedule in place before the first fires
    with stack.as_caller():
        for campaign in CAMPAIGNS:
            created = task_store.create_email_tasks(planned[campaign])
            scheduled = sum(email_schedules.ensure_schedule(p, target) for p in planned[campaign])
            assert (len(created.created), scheduled) == (2 * RECIPIENTS, 2 * RECIPIENTS)
    assert stack.clock.now() < start.timestamp() - 60, "writing took longer than the planning allowance"
    e2e.jump(start.timestamp() - 60 - stack.clock.now())

    # WHEN they run until every task of both is terminal
    for campaign in CAMPAIGNS:
        counts = e2e.wait_terminal(
            campaign, 2 * RECIPIENTS, timeout=400.0, idle_skip=IDLE_SKIP_SECONDS, settle=1.0
        )
        # THEN none is lost: every email of both campaigns went out
        assert counts["Finished"] == 2 * RECIPIENTS, (campaign, counts)

    rows: dict[tuple[str, str, int], dict[str, Any]] = {}
    for campaign in CAMPAIGNS:
        by_task = e2e.task_rows(campaign, Kind.EMAIL)
        for p in planned[campaign]:
            rows[(campaign, p.message.to, p.step)] = by_task[p.task_id]
    emails = campaign_emails(e2e, sender)
    assert {key: len(sent) for key, sent in emails.items() if len(sent) != 1} == {}
    assert set(emails) == set(rows)
    for key, row in rows.items():
        assert row["ses_message_id"] == emails[key][0].message_id, key

    # no address got two first steps closer than the gap
    firsts: dict[str, list[float]] = defaultdict(list)
    for (_, address, step), (email,) in emails.items():
        if step == 1:
            firsts[address].append(email.sent_at)
    too_close = {
        address: sorted(times)
        for address, times in firsts.items()
        if any(b - a < gap for a, b in zip(sorted(times), sorted(times)[1:], strict=False))
    }
    assert too_close == {}

    # for each shared address exactly one first step was deferred by the rule, and it went out later
    deferred = {
        (campaign, address)
        for (campaign, address, step), row in rows.items()
        if step == 1 and str(row.get("deferred_reason", "")).startswith("first_contact_limit")
    }
    assert sorted(address for _, address in deferred) == recipients(CAMPAIGNS[0])[:SHARED]
    for campaign, address in deferred:
        row = rows[(campaign, address, 1)]
        (sent,) = emails[(campaign, address, 1)]
        assert epoch(row["deferred_at"]) < send_time(row) <= sent.sent_at, row
        assert sent.sent_at >= min(firsts[address]) + gap
    shared = set(recipients(CAMPAIGNS[0])[:SHARED])
    assert [key for key, row in rows.items() if key[1] not in shared and "deferred_reason" in row] == []

    # every follow-up went out after its own first step, its planned spacing kept
    for (campaign, address, step), row in rows.items():
        if step != 2:
            continue
        first = rows[(campaign, address, 1)]
        assert send_time(row) - send_time(first) >= FOLLOW_UP_AFTER.total_seconds(), (row, first)
        assert emails[(campaign, address, 2)][0].sent_at > emails[(campaign, address, 1)][0].sent_at

    e2e.record(
        "two_campaigns",
        recipients=RECIPIENTS,
        shared=SHARED,
        gap_seconds=gap,
        deferred=len(deferred),
        latest_deferred_send_after_planned=max(
            emails[(c, a, 1)][0].sent_at - (start + SPACING * recipients(c).index(a)).timestamp()
            for c, a in deferred
        ),
    )
