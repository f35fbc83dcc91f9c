"""A three-step campaign with a reply domain, on the embedded AWS: replies stop it, absences postpone it.

500 recipients, planned by ``outreach campaign schedule`` with ``reply_domain`` set (every email's
Reply-To its own ``reply+<token>@`` address, List-Unsubscribe with the reply domain's ``mailto:``), in a
weekday office-hours window. After step 1, the cast of ``reply_scenario`` answers: 10 % reply as a
person (a third without the token, matched on In-Reply-To; some with attachments), 5 % are out of the
office until a named date (four languages, with and without RFC 3834 fields), 1 % unsubscribe by
mail, 1 % bounce by DSN, and a few strangers write in. SES receives every message twice
(``LocalPipeline.receive_mail``: the receipt rule's S3 action and SNS notification, the inbound queue,
the processor), the processor dies once in the middle of a batch (its first receipt write held past
its timeout) and SES refuses the first forward to the owner once (throttled).

The end state: no follow-up to a replier after the ledger's ``replied_at``, their later steps
Cancelled ``replied``; each away recipient's next step sent on or after its return date and inside
the window; every reply forwarded to the owner exactly once with its body and attachments byte for
byte, the strangers' mail forwarded to the unmatched mailbox marked ``unmatched``, nothing else
forwarded; the ledger and ``campaign status`` counting exactly what was injected; every task
terminal, every message kept in S3, the inbound queue and its DLQ empty.
"""

from __future__ import annotations

import csv
import json
import random
import time as wall
from collections import Counter
from datetime import UTC, datetime, time
from pathlib import Path
from typing import Any

import pytest

from embedded_aws.faults import Faults
from embedded_aws.pipeline import LOCAL_REPLY_DOMAIN, LOCAL_UNMATCHED_MAILBOX
from embedded_aws.ses_faults import inject_ses
from embedded_aws.ses_v2 import SentEmail
from outreach import contacts, ses_message_ids
from outreach.email_task import parse_utc_iso
from outreach.inbound import Kind, classify_raw
from outreach_dev.local_campaign import FOOTER, PLANNING_ALLOWANCE_SECONDS, POSTAL_ADDRESS, send_all
from tests.e2e import reply_scenario as cast
from tests.e2e.conftest import E2E
from tests.e2e.reply_status import (
    EVENT_KINDS,
    campaign_emails,
    expected_events,
    inbound_left,
    inbound_queue_depths,
    inbound_queues_empty,
    inbound_settled,
    json_command,
    step_rows,
)
from tests.e2e.stacks import SECOND_STACK
from tests.support import inbound_mail

pytestmark = SECOND_STACK

CAMPAIGN = "campaign-replies"
OWNER = "owner@outreach.test"
STEPS = 3
WEEKDAYS = ["mon", "tue", "wed", "thu", "fri"]
OPENS, CLOSES = time(8, 0), time(18, 0)
_KINDS = {"reply": Kind.HUMAN_REPLY, "away": Kind.AUTO_REPLY, "unsubscribe": Kind.UNSUBSCRIBE}
_KINDS |= {"bounce": Kind.BOUNCE, "stranger": Kind.HUMAN_REPLY}
# Mail arrives spread out, as answers do (half a second of wall time is 5 virtual seconds): the
# 2 x 89 messages come in over about a quarter of a virtual hour, not in one burst.
ARRIVAL_GAP_REAL_SECONDS = 0.5
# A rate the embedded AWS keeps up with on two shared cores: on the 10x clock 120 a minute is 20
# emails a real second, more than the worker manages there, and an email that waits past the send
# grace period is failed too_late (LOAD_FAILURES). Six a minute (one a real second) sends each step
# in about 83 virtual minutes, inside the window, with none late.
MAX_PER_MINUTE = 6
# As long as the ids SES gives (longer than a 78-character header line with its domain).
SES_LIKE_ID = "0100019a2b3c4d5e-7f8a9b0c-1d2e-4f3a-8b9c-0d1e2f3a4b5c-000000"


def _write_files(directory: Path, identity: str) -> tuple[Path, Path]:
    domain = identity.rsplit("@", 1)[-1]
    campaign = directory / f"{CAMPAIGN}.json"
    window = {"weekdays": WEEKDAYS, "start": f"{OPENS:%H:%M}", "end": f"{CLOSES:%H:%M}"}
    campaign.write_text(
        json.dumps(
            {
                "campaign_id": CAMPAIGN,
                "sender": f"Outreach <outreach@{domain}>",
                "reply_to": f"Sales team <{OWNER}>",
                "reply_domain": LOCAL_REPLY_DOMAIN,
                "window": {**window, "timezone": "Europe/Berlin"},
                "max_per_minute": MAX_PER_MINUTE,
                "postal_address": POSTAL_ADDRESS,
                "steps": [
                    {"subject": "A question for {{ company }}", "text": "Hello,\nshall we talk?\n" + FOOTER},
                    {
                        "after_days": 1,
                        "subject": "Re: A question for {{ company }}",
                        "text": "Any news?\n" + FOOTER,
                    },
                    {"after_days": 1, "subject": "Last note", "text": "Last one.\n" + FOOTER},
                ],
            }
        )
    )
    recipients = directory / "recipients.csv"
    with recipients.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["email", "company"])
        for i in range(cast.RECIPIENTS):
            writer.writerow([cast.address(i), f"Company {i}"])
    return campaign, recipients


def _in_window(moment: datetime) -> bool:
    local = moment.astimezone(cast.BERLIN)
    return local.weekday() < len(WEEKDAYS) and OPENS <= local.time() <= CLOSES


@pytest.mark.parametrize("kind", sorted(_KINDS))
def test_every_message_the_reply_scenario_injects_is_of_the_kind_it_is_counted_as(kind: str) -> None:
    sent = SentEmail(
        SES_LIKE_ID, 0.0, "Outreach <outreach@outreach.test>", ("x@y.example",), "A question for C",
        "Hello,\nshall we talk?\n", "",
        {"List-Unsubscribe": "<https://u.example/x>, <mailto:unsubscribe@r.test>"},
        ("reply+abcdefghijklmnop.abcdefghijklmnop@r.test",), "cs",
    )  # fmt: skip
    firsts = {cast.address(i): sent for i in range(cast.RECIPIENTS)}
    people = cast.Cast.of(firsts)
    at = datetime(2027, 3, 3, 9, 0, tzinfo=UTC)
    mail = [m for m in cast.inbound_mail_of(people, firsts, "r.test", "eu-central-1", at) if m.kind == kind]
    for message in mail:
        found = classify_raw(message.raw, received=at)
        assert found.kind is _KINDS[kind], (message.who, found)
        if kind == "away":
            assert (found.out_of_office, found.away_until) == (True, message.back_on), message.raw[:600]
        if kind in ("reply", "away"):
            # Quoted as a mail client writes it: the msg-id itself, not an RFC 2047 encoded word
            quoted = inbound_mail.header(message.raw, "In-Reply-To") or ""
            assert ses_message_ids.ses_ids_in(quoted) == [sent.message_id], quoted


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_replies_stop_a_sequence_absences_postpone_it_and_every_reply_reaches_its_owner_once(
    e2e: E2E, faults: Faults, tmp_path: Path
) -> None:
    stack = e2e.stack
    assert stack.pipeline["inbound_reply_domain"] == LOCAL_REPLY_DOMAIN
    campaign_path, recipients_path = _write_files(tmp_path, str(stack.outputs["email_sender_identity"]))

    # GIVEN a three-step campaign with a reply domain planned for all 500, starting once the planning
    # is done (a reply MAC, a one-click MAC and a schedule per email); the clock then jumps to it
    start = datetime.fromtimestamp(stack.clock.now() + PLANNING_ALLOWANCE_SECONDS, UTC)
    scheduled = json_command(
        e2e, "campaign", "schedule", "--campaign", str(campaign_path), "--recipients", str(recipients_path),
        "--start", start.isoformat(), "--operator", "e2e",
    )  # fmt: skip
    assert scheduled["recipients_scheduled"] == cast.RECIPIENTS
    assert scheduled["stop_rules"]["reply_domain"] == LOCAL_REPLY_DOMAIN
    planned = cast.RECIPIENTS * STEPS
    assert stack.clock.now() < start.timestamp() - 60, "planning outlasted its allowance"
    stack.clock.advance(start.timestamp() - 60 - stack.clock.now())

    # WHEN step 1 goes out
    send_all(stack, CAMPAIGN, timeout=900, last_step=1)
    before = step_rows(e2e, CAMPAIGN)
    reached = [a for a in map(cast.address, range(cast.RECIPIENTS)) if before[(a, 1)]["status"] == "Finished"]
    by_id = {e.message_id: e for e in _sent(e2e, step=1)}
    firsts = {a: by_id[str(before[(a, 1)]["ses_message_id"])] for a in reached}
    assert all(e.reply_to[0].endswith(f"@{LOCAL_REPLY_DOMAIN}") for e in firsts.values())
    people = cast.Cast.of(reached)

    # AND the cast answers, SES receiving every message twice (the copies shuffled), while the
    # processor dies once mid-batch and SES throttles the first forward to the owner
    processor = str(stack.pipeline["inbound_processor_function_name"])
    timeout = int(stack.client("lambda").get_function_configuration(FunctionName=processor)["Timeout"])
    crash = faults.stall_update("inbound#", stack.clock, timeout + 1)
    at = datetime.fromtimestamp(stack.clock.now(), UTC)
    mail = cast.inbound_mail_of(people, firsts, LOCAL_REPLY_DOMAIN, stack.region, at)
    with inject_ses() as ses_faults:
        throttled = ses_faults.throttle({OWNER}, times=1)
        received = []
        for copy in (list(mail), random.Random(26).sample(mail, len(mail))):
            for message in copy:
                got = stack.receive_mail(
                    message.raw, recipients=list(message.recipients), sender=message.sender
                )
                assert got.accepted, (message.kind, got.reason, got.actions)
                received.append(got)
                wall.sleep(ARRIVAL_GAP_REAL_SECONDS)
        # THEN every message is acted on and forwarded before any follow-up is due
        e2e.wait_until(
            lambda: inbound_settled(e2e, CAMPAIGN, mail),
            timeout=900,
            interval=5.0,
            what="every injected message acted on and forwarded",
            describe=lambda: inbound_left(e2e, CAMPAIGN, mail),
        )
        left = inbound_left(e2e, CAMPAIGN, mail)
        assert not left, f"{left}; {e2e.diagnosis()}"
        e2e.wait_until(
            lambda: inbound_queues_empty(e2e),
            timeout=600,
            interval=2.0,
            what="every notification (both copies) processed",
            describe=lambda: inbound_queue_depths(e2e),
        )
    assert (crash.fired, throttled.fired) == (1, 1)
    first_follow_up = min(
        parse_utc_iso(str(r["send_at"])).timestamp() for (_, n), r in before.items() if n == 2
    )
    assert stack.clock.now() < first_follow_up, "the replies took longer than the time to the first follow-up"

    # AND the later steps are sent (the clock jumps to each next send time)
    send_all(stack, CAMPAIGN, timeout=1800)

    # THEN every task is terminal (nothing lost), each as the scenario says
    counts = stack.job_counts(CAMPAIGN)
    assert counts["Pending"] == counts["Running"] == 0, counts
    assert sum(counts.values()) == planned
    rows = step_rows(e2e, CAMPAIGN)
    unexpected = {
        key: (r["status"], r.get("failure_reason"))
        for key, r in rows.items()
        if not _as_planned(key, rows, people)
    }
    assert not unexpected, unexpected
    late = sorted(
        key for key, r in rows.items() if str(r.get("failure_reason") or "").startswith(LOAD_FAILURES)
    )
    assert len(late) <= planned // 50, f"{len(late)} emails the worker could not finish in time: {late[:10]}"
    sends = _sent(e2e)
    assert max(Counter((e.to[0].lower(), e.tags["outreach-step"]) for e in sends).values()) == 1
    finished = {str(r["ses_message_id"]) for r in rows.values() if r["status"] == "Finished"}
    assert finished <= {e.message_id for e in sends}
    with stack.as_caller():
        everyone = list(map(cast.address, range(cast.RECIPIENTS)))
        engagements = {a: contacts.engagement_of(a) for a in everyone}
        stops = {a: contacts.stop_of(a) for a in everyone}

    # AND no email went to a replier after the ledger recorded the reply
    for who in people.replies:
        replied_at = engagements[who].replied_at
        assert engagements[who].replied_in(CAMPAIGN) and replied_at is not None, who
        for email in (e for e in sends if e.to[0].lower() == who):
            assert email.sent_at <= parse_utc_iso(replied_at).timestamp() + 1, (who, email.subject)
            assert email.tags["outreach-step"] == "1", (who, email.subject)

    # AND each away recipient's next step was moved to the return date or later, inside the window,
    # and went out no earlier
    away = {m.who: m.back_on for m in mail if m.kind == "away" and m.back_on is not None}
    for who, returning in away.items():
        assert engagements[who].away_until == returning, who
        planned_second = parse_utc_iso(str(before[(who, 2)]["send_at"])).astimezone(cast.BERLIN).date()
        second, third = (parse_utc_iso(str(rows[(who, n)]["send_at"])) for n in (2, 3))
        assert planned_second < returning <= second.astimezone(cast.BERLIN).date(), (who, second)
        assert _in_window(second) and _in_window(third) and second < third, (who, second, third)
        sent = {int(e.tags["outreach-step"]): e.sent_at for e in sends if e.to[0].lower() == who}
        assert sent.get(2, second.timestamp()) >= second.timestamp(), (who, sent)
        assert sent.get(3, third.timestamp()) >= max(third.timestamp(), sent.get(2, 0.0)), (who, sent)

    # AND every reply reached the owner exactly once, body and attachments byte for byte; the
    # strangers' mail reached the unmatched mailbox marked; nothing else was forwarded
    forwards = cast.forwards_of(stack.forwards())
    by_sender = {m.who: m for m in mail}
    assert cast.forwards_per_sender(forwards, "reply") == dict.fromkeys(people.replies, 1)
    strangers = {m.who for m in mail if m.kind == "stranger"}
    assert cast.forwards_per_sender(forwards, "unmatched") == dict.fromkeys(strangers, 1)
    assert len(forwards) == len(people.replies) + len(strangers), [(f.mark, f.reply_to) for f in forwards]
    for forward in forwards:
        expected = (
            (OWNER, CAMPAIGN, "1") if forward.mark == "reply" else (LOCAL_UNMATCHED_MAILBOX, None, None)
        )
        assert (forward.to[0], forward.campaign, forward.step) == expected, forward
        assert cast.same_content(forward.raw, by_sender[forward.reply_to].raw), forward.reply_to
    attached = [f for f in forwards if len(inbound_mail.leaf_parts(f.raw)) > 2]
    assert len(attached) == len(people.attaching) + 1

    # AND the ledger holds exactly what was injected
    assert {a for a, e in engagements.items() if e.replied_campaigns} == set(people.replies)
    assert {a for a, e in engagements.items() if e.away_until is not None} == set(away)
    assert {a: s.state.value for a, s in stops.items() if s is not None} == people.stopped

    # AND campaign status counts it per step, each email once; sent is what was Finished
    status = json_command(e2e, "campaign", "status", CAMPAIGN)
    wanted = expected_events(len(people.replies), len(away), len(people.bounced))
    for entry in status["steps"]:
        step = int(entry["step"])
        assert {k: int(entry[k]) for k in EVENT_KINDS} == wanted[step], (step, entry)
        done = sum(1 for (_, n), r in rows.items() if n == step and r["status"] == "Finished")
        assert int(entry["sent"]) == done, (step, entry)

    # AND every message SES received is kept, and none is waiting or dead-lettered
    bucket = str(stack.outputs["inbound_bucket"])
    assert sorted(stack.objects(bucket, "inbound/")) == sorted(key for r in received for key in r.s3_keys)
    assert len(received) == 2 * len(mail) and inbound_queues_empty(e2e)
    e2e.record(
        "reply campaign",
        recipients=cast.RECIPIENTS,
        emails_sent=len(sends),
        messages_received=len(received),
        forwards=len(forwards),
        processor_crashes=crash.fired,
        processor_timeouts=stack.runtime.stats_of(processor).timeouts,
        throttled_forwards=throttled.fired,
        emails_late_under_load=len(late),
        lost=planned - sum(counts[s] for s in ("Finished", "Failed", "Cancelled")),
    )


# The reasons the product fails an email its worker could not finish in time (on the fast clock a
# loaded machine can run a worker past its timeout): never sent again, so never sent twice.
LOAD_FAILURES = ("delivery_unknown", "too_late")


def _as_planned(key: tuple[str, int], rows: dict[tuple[str, int], dict[str, Any]], people: cast.Cast) -> bool:
    """Whether the row's end state is the scenario's: a replier's and a stopped member's later steps
    cancelled for that; every other email sent, or failed for lack of time (``LOAD_FAILURES``), or
    cancelled because an earlier step was not sent."""
    who, step = key
    row = rows[key]
    status, reason = str(row["status"]), str(row.get("failure_reason") or "")
    if step > 1 and who in people.replies:
        return status == "Cancelled" and reason.startswith("replied:")
    if step > 1 and who in people.stopped:
        return status == "Cancelled" and reason.startswith("contact_stopped")
    if status == "Finished":
        return True
    if status == "Failed":
        return reason.startswith(LOAD_FAILURES)
    earlier_sent = all(rows[(who, n)]["status"] == "Finished" for n in range(1, step))
    return status == "Cancelled" and reason.startswith("earlier_step_not_sent") and not earlier_sent


def _sent(e2e: E2E, step: int | None = None) -> list[SentEmail]:
    """The campaign's emails SES accepted (of one step, if given)."""
    found = campaign_emails(e2e, CAMPAIGN)
    return [e for e in found if step is None or e.tags.get("outreach-step") == str(step)]
