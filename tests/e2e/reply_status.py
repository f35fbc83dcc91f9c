"""What the reply e2e reads back from the stack: the campaign's emails and rows, what its injected mail
has not done yet, the inbound queues, and the per-step counts ``campaign status`` must show.

``inbound_left`` names, for each effect the scenario asserts (a reply recorded and its follow-ups
cancelled, an absence recorded and the next step moved past it, a stop recorded and its follow-ups
cancelled, a forward sent), the people it has not happened for yet; ``inbound_settled`` is the wait's
condition: all happened, or one never will.
"""

from __future__ import annotations

import json
from typing import Any

from embedded_aws.ses_v2 import SentEmail, sent_emails
from outreach import contacts, ses_tags
from outreach.email_task import parse_utc_iso
from outreach.inbound import receipts
from outreach.task_model import Kind
from outreach_dev.local_campaign import email_flags
from outreach_dev.local_run import outreach_command
from tests.e2e import reply_scenario as cast
from tests.e2e.conftest import E2E

# The per-step counters the scenario moves (the inbound processor's and the DSN's), and two it must not.
EVENT_KINDS = (
    "replied",
    "auto_replied",
    "forwarded",
    "bounced_hard",
    "bounced_soft",
    "unsubscribed",
    "complained",
)


def json_command(e2e: E2E, *args: str) -> Any:
    """``outreach --json <args>`` against the stack, with the root's email options; its JSON output."""
    code, out = outreach_command(e2e.stack, "--json", *email_flags(e2e.stack), *args)
    assert code == 0, out
    return json.loads(out)


def campaign_emails(e2e: E2E, campaign_id: str) -> list[SentEmail]:
    """The emails SES accepted for the campaign (its message tag), in the order it accepted them."""
    tag = ses_tags.encode_campaign(campaign_id)
    return [e for e in sent_emails(e2e.stack.region) if e.tags.get("outreach-campaign") == tag]


def step_rows(e2e: E2E, campaign_id: str) -> dict[tuple[str, int], dict[str, Any]]:
    """The campaign's email task rows by (recipient, step), read from the table."""
    rows = e2e.task_rows(campaign_id, Kind.EMAIL)
    return {(str(r["recipient"]).lower(), int(r["step"])): r for r in rows.values()}


def _follow_ups_cancelled(rows: dict[tuple[str, int], dict[str, Any]], who: str) -> bool:
    return all(rows.get((who, step), {}).get("status") == "Cancelled" for step in (2, 3))


def inbound_left(e2e: E2E, campaign_id: str, mail: list[cast.Injected]) -> dict[str, list[str]]:
    """Per effect, the people the injected ``mail`` has not had it for yet (empty: all done)."""
    rows = step_rows(e2e, campaign_id)
    forwarded = {f.reply_to for f in cast.forwards_of(e2e.stack.forwards())}
    left: dict[str, list[str]] = {}

    def missing(effect: str, who: str) -> None:
        left.setdefault(effect, []).append(who)

    with e2e.stack.as_caller():
        for message in mail:
            who = message.who
            if message.kind == "reply":
                if not contacts.engagement_of(who).replied_in(campaign_id):
                    missing("reply recorded", who)
                if not _follow_ups_cancelled(rows, who):
                    missing("follow-ups cancelled for the reply", who)
            if message.kind in ("reply", "stranger") and who not in forwarded:
                missing("forwarded", f"{who} (receipt {_receipt_state(message)})")
            if message.kind == "away":
                if contacts.engagement_of(who).away_until != message.back_on:
                    missing("absence recorded", who)
                second = rows.get((who, 2), {}).get("send_at")
                moved = second is not None and parse_utc_iso(str(second)).astimezone(cast.BERLIN).date()
                if message.back_on is None or not moved or moved < message.back_on:
                    missing("step 2 moved past the return date", who)
            if message.kind in ("unsubscribe", "bounce"):
                if contacts.stop_of(who) is None:
                    missing("stop recorded", who)
                if not _follow_ups_cancelled(rows, who):
                    missing("follow-ups cancelled for the stop", who)
    return {effect: sorted(people) for effect, people in left.items()}


def _receipt_state(message: cast.Injected) -> str:
    receipt = receipts.read_receipt(receipts.PREFIX + receipts.content_digest(message.raw))
    return receipt.state.value if receipt is not None else "none"


def inbound_settled(e2e: E2E, campaign_id: str, mail: list[cast.Injected]) -> bool:
    """Whether waiting longer can change nothing the scenario asserts: every effect of ``mail``
    happened (``inbound_left`` is empty), or a message that must be forwarded never will be (its
    receipt ``forward_unknown``: the processor never sends it again). Cheap first: the forwards are
    read in-process, the ledger and the table only once they are all there."""
    forwarded = {f.reply_to for f in cast.forwards_of(e2e.stack.forwards())}
    waiting = [m for m in mail if m.kind in ("reply", "stranger") and m.who not in forwarded]
    if waiting:
        with e2e.stack.as_caller():
            return any(_receipt_state(m) == "forward_unknown" for m in waiting)
    return not inbound_left(e2e, campaign_id, mail)


def inbound_queue_depths(e2e: E2E) -> dict[str, dict[str, int]]:
    """The inbound queue's and its DLQ's messages waiting, in flight and delayed."""
    sqs = e2e.stack.client("sqs")
    depths = {}
    for name in ("inbound_queue_url", "inbound_dlq_url"):
        attributes = sqs.get_queue_attributes(QueueUrl=str(e2e.stack.outputs[name]), AttributeNames=["All"])
        depths[name] = {
            k: int(v)
            for k, v in attributes["Attributes"].items()
            if k.startswith("ApproximateNumberOfMessages")
        }
    return depths


def inbound_queues_empty(e2e: E2E) -> bool:
    return not any(n for depths in inbound_queue_depths(e2e).values() for n in depths.values())


def expected_events(replies: int, away: int, bounces: int) -> dict[int, dict[str, int]]:
    """The counts ``campaign status`` shows per step: everything answers step 1; an unsubscribe by
    mail (a ``mailto:`` message quotes no email) stops its sender in the ledger, not a step's count."""
    nothing = dict.fromkeys(EVENT_KINDS, 0)
    first = {
        **nothing,
        "replied": replies,
        "auto_replied": away,
        "forwarded": replies,
        "bounced_hard": bounces,
    }
    return {1: first, 2: nothing, 3: nothing}
