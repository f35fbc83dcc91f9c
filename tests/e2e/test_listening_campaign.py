"""A three-step campaign that listens, on the embedded AWS: opt-outs, bounces and complaints stop it.

500 recipients, planned by ``outreach campaign schedule`` with the default one-click unsubscribe link.
Before planning, 2 % are on a do-not-contact list (``outreach contacts import``). After the first
step, 3 % unsubscribe by one-click POST and 2 % more only fetch the link (a link scanner, a person who
looks and leaves); SES hard-bounces 2 % and 1 % complain, every SES event is delivered twice, and the
event consumer dies once in the middle of a batch (one ledger write held past its timeout).

The end state: nothing sent to an address after its stop was recorded (SES's own send times against
the ledger's), the stopped addresses' later steps Cancelled with the reason, nobody who only fetched
the link unsubscribed, the status counts equal to the events the emulator's SES published (each
once), every task terminal, and a second campaign to the same people plans none of the stopped ones.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from embedded_aws.faults import Faults
from embedded_aws.one_click_requests import request_as_a_provider
from embedded_aws.ses_event_publishing import published_events
from embedded_aws.ses_outcomes import ses_outcomes
from embedded_aws.ses_v2 import SentEmail, sent_emails
from outreach import contacts, ses_tags
from outreach.task_model import Kind
from outreach_dev.local_campaign import (
    FOOTER,
    PLANNING_ALLOWANCE_SECONDS,
    POSTAL_ADDRESS,
    email_flags,
    send_all,
)
from outreach_dev.local_run import outreach_command
from tests.e2e.conftest import E2E
from tests.e2e.stacks import SECOND_STACK

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500), SECOND_STACK]

RECIPIENTS = 500
CAMPAIGN = "campaign-listening"
SECOND = "campaign-listening-again"
DO_NOT_CONTACT = range(0, 10)  # 2 %
HARD_BOUNCE = range(10, 20)  # 2 %
COMPLAIN = range(20, 25)  # 1 %
UNSUBSCRIBE = range(25, 40)  # 3 %, one-click POST
ONLY_LOOK = range(40, 50)  # 2 %, GET of the link only
STEPS = 3
_WINDOW = {
    "weekdays": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"],
    "start": "00:00",
    "end": "23:59",
    "timezone": "Europe/Berlin",
}


def _address(i: int) -> str:
    return f"person{i:03d}@listener{i % 23}.example"


def _addresses(indexes: range) -> set[str]:
    return {_address(i) for i in indexes}


def _write_files(directory: Path, identity: str, campaign_id: str) -> tuple[Path, Path]:
    domain = identity.rsplit("@", 1)[-1]
    campaign = directory / f"{campaign_id}.json"
    campaign.write_text(
        json.dumps(
            {
                "campaign_id": campaign_id,
                "sender": f"Outreach <outreach@{domain}>",
                "reply_to": f"replies@{domain}",
                "window": _WINDOW,
                "max_per_minute": 120,
                # 500 recipients at 23 domains: the default domain pacing (120 s apart) would cap the
                # campaign at 11.5 a minute; this scenario is about listening, so the rate decides.
                "pacing": {"domain_daily_cap": 1000, "domain_min_gap_seconds": 0},
                "postal_address": POSTAL_ADDRESS,
                "steps": [
                    {"subject": "A question for {{ company }}", "text": "Hello,\n" + FOOTER},
                    {"after_days": 1, "subject": "Re: A question", "text": "Any news?\n" + FOOTER},
                    {"after_days": 1, "subject": "Last note", "text": "Last one.\n" + FOOTER},
                ],
            }
        )
    )
    recipients = directory / "recipients.csv"
    with recipients.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["email", "company"])
        for i in range(RECIPIENTS):
            writer.writerow([_address(i), f"Company {i}"])
    return campaign, recipients


def _json(e2e: E2E, *args: str) -> Any:
    code, out = outreach_command(e2e.stack, "--json", *email_flags(e2e.stack), *args)
    assert code == 0, out
    return json.loads(out)


def _ours(e2e: E2E, campaign_id: str) -> list[SentEmail]:
    """The emails SES accepted for the campaign (its message tag), in the order it accepted them."""
    tag = ses_tags.encode_campaign(campaign_id)
    return [e for e in sent_emails(e2e.stack.region) if e.tags.get("outreach-campaign") == tag]


def _events(e2e: E2E, campaign_id: str) -> list[Any]:
    """Every event the emulator's SES published for the campaign's emails, once per event id."""
    seen: dict[str, Any] = {}
    for event in published_events(e2e.stack.region):
        tags = event.event["detail"]["mail"].get("tags", {})
        if tags.get("outreach-campaign") == [ses_tags.encode_campaign(campaign_id)]:
            seen.setdefault(event.event_id, event)
    return list(seen.values())


def _request_again_on_5xx(e2e: E2E, url: str, *, method: str, body: bytes | None = None) -> tuple[str, int]:
    """The page of a 200 answer, requested as a provider does (``request_as_a_provider``), and how many
    5xx answers came before it; AssertionError with the function URL's journal otherwise."""
    answer = request_as_a_provider(url, method=method, body=body)
    if answer.status == 200:
        return answer.page, answer.retries
    failures = [e for e in e2e.stack.journal.entries() if str(e["kind"]).startswith("url.")]
    answers = [*answer.failed, (answer.status, answer.page)]
    raise AssertionError(f"{method} answered {answers}; function URL journal: {failures[-5:]}")


def _unsubscribe_link(email: SentEmail) -> str:
    value = email.headers["List-Unsubscribe"]
    assert value.startswith("<https://") and value.endswith(">"), value
    return value[1:-1]


def _step_rows(e2e: E2E, campaign_id: str) -> dict[tuple[str, int], dict[str, Any]]:
    rows = e2e.task_rows(campaign_id, Kind.EMAIL)
    return {(str(r["recipient"]).lower(), int(r["step"])): r for r in rows.values()}


def test_a_campaign_that_listens_sends_nothing_after_a_stop_and_counts_what_ses_said(
    e2e: E2E, faults: Faults, tmp_path: Path
) -> None:
    stack = e2e.stack
    pipeline = stack.pipeline
    identity = str(stack.outputs["email_sender_identity"])
    campaign_path, recipients_path = _write_files(tmp_path, identity, CAMPAIGN)

    # GIVEN 2 % of the recipients on a do-not-contact list
    dnc = tmp_path / "do-not-contact.csv"
    dnc.write_text(
        "email,why\n" + "".join(f"{a},asked by phone\n" for a in sorted(_addresses(DO_NOT_CONTACT)))
    )
    imported = _json(e2e, "contacts", "import", "--file", str(dnc), "--operator", "e2e")
    assert imported["blocked"] == len(DO_NOT_CONTACT), imported

    # AND SES that hard-bounces 2 %, hears complaints from 1 %, and delivers every event twice,
    # AND an event consumer that dies once mid-batch (its ledger write of one bounce held past its timeout)
    consumer = str(pipeline["ses_event_consumer_function_name"])
    timeout = int(stack.client("lambda").get_function_configuration(FunctionName=consumer)["Timeout"])
    crash = faults.stall_update(contacts.address_key(_address(HARD_BOUNCE[0])), stack.clock, timeout + 1)
    with ses_outcomes(
        hard_bounce=_addresses(HARD_BOUNCE), complain=_addresses(COMPLAIN), duplicate_events=True
    ):
        # AND a three-step campaign planned for all 500 with the default one-click link, starting once
        # the planning is done however long it takes (1,470 MACs and schedules on a loaded machine can
        # outlast the send grace period on the e2e's fast clock): the clock then jumps to the start
        start = datetime.fromtimestamp(stack.clock.now() + PLANNING_ALLOWANCE_SECONDS, UTC)
        scheduled = _json(
            e2e,
            "campaign", "schedule", "--campaign", str(campaign_path), "--recipients", str(recipients_path),
            "--start", start.isoformat(), "--operator", "e2e",
        )  # fmt: skip
        assert {row["address"] for row in scheduled["stopped"]} == _addresses(DO_NOT_CONTACT)
        assert scheduled["recipients_scheduled"] == RECIPIENTS - len(DO_NOT_CONTACT)
        planned = scheduled["recipients_scheduled"] * STEPS
        assert stack.clock.now() < start.timestamp() - 60, "planning outlasted its allowance"
        stack.clock.advance(start.timestamp() - 60 - stack.clock.now())

        # WHEN the first step goes out and SES's events come back
        e2e.wait_until(
            lambda: (
                sum(1 for e in _ours(e2e, CAMPAIGN) if e.subject.startswith("A question"))
                >= RECIPIENTS - len(DO_NOT_CONTACT)
            ),
            timeout=600,
            what="the first step sent",
        )
        e2e.wait_until(
            lambda: _stopped(e2e, _addresses(HARD_BOUNCE) | _addresses(COMPLAIN)),
            timeout=600,
            what="every bounce and complaint recorded",
        )

        # AND 3 % unsubscribe with the one-click POST, 2 % only fetch the link
        firsts = {e.to[0]: e for e in _ours(e2e, CAMPAIGN) if e.subject.startswith("A question")}
        one_click_retries = 0
        for address in sorted(_addresses(UNSUBSCRIBE)):
            url = stack.loopback_url(_unsubscribe_link(firsts[address]))
            _, retries = _request_again_on_5xx(e2e, url, method="POST", body=b"List-Unsubscribe=One-Click")
            one_click_retries += retries
        for address in sorted(_addresses(ONLY_LOOK)):
            url = stack.loopback_url(_unsubscribe_link(firsts[address]))
            page, retries = _request_again_on_5xx(e2e, url, method="GET")
            one_click_retries += retries
            assert "<form" in page, page

        # AND the later steps are sent (the clock jumps to each next send time)
        send_all(stack, CAMPAIGN, timeout=900)
        e2e.wait_until(
            lambda: _settled(e2e, CAMPAIGN),
            timeout=600,
            what="every published event counted",
            describe=lambda: _unsettled(e2e, CAMPAIGN),
        )

    # THEN the consumer died once and every task is terminal (nothing lost)
    assert crash.fired == 1
    counts = stack.job_counts(CAMPAIGN)
    assert counts["Pending"] == counts["Running"] == 0, counts
    assert sum(counts.values()) == planned

    # AND nothing went to an address after its stop was recorded (SES's send times, the ledger's)
    stopped = _addresses(HARD_BOUNCE) | _addresses(COMPLAIN) | _addresses(UNSUBSCRIBE)
    with stack.as_caller():
        stops = {a: contacts.stop_of(a) for a in stopped | _addresses(ONLY_LOOK) | _addresses(DO_NOT_CONTACT)}
    sends = [e for e in _ours(e2e, CAMPAIGN)]
    for email in sends:
        stop = stops.get(email.to[0])
        if stop is not None:
            assert email.sent_at <= _epoch(stop.recorded_at), (email.to[0], email.subject, stop)
    assert not any(e.to[0] in _addresses(DO_NOT_CONTACT) for e in sends)

    # AND every stopped address's later steps were Cancelled with the reason
    rows = _step_rows(e2e, CAMPAIGN)
    for address in stopped:
        for step in (2, 3):
            row = rows[(address, step)]
            assert row["status"] == "Cancelled", (address, step, row["status"])
            assert str(row["failure_reason"]).startswith("contact_stopped"), row["failure_reason"]

    # AND nobody who only fetched the link is unsubscribed; they got every step
    for address in _addresses(ONLY_LOOK):
        assert stops[address] is None
        assert {rows[(address, step)]["status"] for step in (1, 2, 3)} == {"Finished"}

    # AND the status counts equal what the emulator's SES published, each event once
    status = _json(e2e, "campaign", "status", CAMPAIGN)
    published = _published_counts(e2e, CAMPAIGN)
    for entry in status["steps"]:
        step = int(entry["step"])
        for kind in ("delivered", "bounced_hard", "complained"):
            assert entry[kind] == published[(step, kind)], (step, kind, entry)
        assert entry["sent"] == sum(1 for e in sends if _step_of(e) == step)
    assert sum(int(e["unsubscribed"]) for e in status["steps"]) == len(UNSUBSCRIBE)
    assert sum(int(e["bounced_hard"]) for e in status["steps"]) == len(HARD_BOUNCE)
    assert sum(int(e["complained"]) for e in status["steps"]) == len(COMPLAIN)

    # AND a second campaign to the same people plans none of the stopped ones
    second_path, _ = _write_files(tmp_path, identity, SECOND)
    again = _json(
        e2e, "campaign", "schedule", "--campaign", str(second_path), "--recipients", str(recipients_path),
        "--dry-run",
    )  # fmt: skip
    assert {row["address"] for row in again["stopped"]} == stopped | _addresses(DO_NOT_CONTACT)
    assert again["recipients_scheduled"] == RECIPIENTS - len(stopped) - len(DO_NOT_CONTACT)
    e2e.record(
        "listening campaign",
        recipients=RECIPIENTS,
        emails_sent=len(sends),
        stopped=len(stopped) + len(DO_NOT_CONTACT),
        events_published=len(_events(e2e, CAMPAIGN)),
        consumer_crashes=crash.fired,
        one_click_retries=one_click_retries,
        lost=planned - sum(counts[s] for s in ("Finished", "Failed", "Cancelled")),
    )


def _stopped(e2e: E2E, addresses: set[str]) -> bool:
    with e2e.stack.as_caller():
        return all(contacts.stop_of(address) is not None for address in addresses)


def _epoch(iso: str) -> float:
    return datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp() + 1


def _step_of(email: Any) -> int:
    return int(email.tags["outreach-step"])


def _published_counts(e2e: E2E, campaign_id: str) -> Counter[tuple[int, str]]:
    counts: Counter[tuple[int, str]] = Counter()
    for event in _events(e2e, campaign_id):
        step = int(event.event["detail"]["mail"]["tags"]["outreach-step"][0])
        # The event's own type ("Delivery"), as the EventBridge detail carries it
        kind = event.event["detail"]["eventType"]
        if kind == "Delivery":
            counts[(step, "delivered")] += 1
        elif kind == "Bounce":
            counts[(step, "bounced_hard" if event.bounce_type == "Permanent" else "bounced_soft")] += 1
        elif kind == "Complaint":
            counts[(step, "complained")] += 1
    return counts


def _counted(e2e: E2E, campaign_id: str) -> Counter[tuple[int, str]]:
    status = _json(e2e, "campaign", "status", campaign_id)
    return Counter(
        {
            (int(entry["step"]), kind): int(entry[kind])
            for entry in status["steps"]
            for kind in ("delivered", "bounced_hard", "complained")
        }
    )


def _settled(e2e: E2E, campaign_id: str) -> bool:
    """Every event SES published for the campaign is counted in its status, no more and no less."""
    return +_counted(e2e, campaign_id) == +_published_counts(e2e, campaign_id)


def _unsettled(e2e: E2E, campaign_id: str) -> dict[str, Any]:
    """For a failure message: what is counted against what was published, and where the events wait."""
    counted, published = _counted(e2e, campaign_id), _published_counts(e2e, campaign_id)
    sqs = e2e.stack.client("sqs")
    waiting = {
        name: sqs.get_queue_attributes(QueueUrl=str(e2e.stack.pipeline[name]), AttributeNames=["All"])[
            "Attributes"
        ]
        for name in ("ses_events_queue_url", "ses_events_dlq_url")
    }
    return {
        "counted_minus_published": dict(counted - published),
        "published_minus_counted": dict(published - counted),
        "queues": {
            name: {k: v for k, v in attributes.items() if k.startswith("ApproximateNumber")}
            for name, attributes in waiting.items()
        },
    }
