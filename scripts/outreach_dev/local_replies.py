"""`make local`'s replies section: a few people answer the first step by mail, one is out of the office.

After the local campaign's first step (``local_campaign``), three recipients (the first after the
suppressed one and the listeners whose step 1 went out) reply as a person,
quoting the email (the last through a client that dropped the reply token: addressed to another
address of the reply domain, matched on its In-Reply-To), and one answers with an out-of-office naming
a return date four days on (RFC 3834 ``Auto-Submitted: auto-replied``). SES receives each message
twice (``LocalPipeline.receive_mail``: the receipt rule's S3 action and SNS notification, then the
inbound queue and processor). The report shows what the ledger recorded, what was forwarded to the
owner mailbox (once each), whether the absent person's follow-up waited for the return date and that
no follow-up went to a replier.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import SMTP, compat32
from email.utils import format_datetime, parseaddr
from typing import Any
from zoneinfo import ZoneInfo

from embedded_aws.pipeline import LocalPipeline
from embedded_aws.ses_v2 import SentEmail
from outreach import contacts
from outreach.email_task import parse_utc_iso
from outreach.ses_message_ids import message_id_header
from outreach_dev.local_listening import campaign_emails

AWAY_DAYS = 4
# Header lines up to RFC 5322's 998 characters: an SES msg-id does not fit 78 and has nowhere to fold;
# the email package would write it as an encoded word, which no mail client does to In-Reply-To.
POLICY = SMTP.clone(max_line_length=998)
# The address a client that dropped the token answers to.
UNTOKENED_LOCAL_PART = "replies"


@dataclass(frozen=True)
class Repliers:
    """Who answers: ``replies`` as a person (the last without the token), ``away`` out of office."""

    replies: tuple[str, ...]
    away: str

    @classmethod
    def of(cls, stack: LocalPipeline, campaign_id: str, candidates: Sequence[str]) -> Repliers | None:
        """The first four of ``candidates`` whose step 1 went out (nobody answers an email they never
        got): three reply, the fourth is away; ``None`` when there are fewer."""
        reached = {
            e.to[0].lower() for e in campaign_emails(stack, campaign_id) if e.tags.get("outreach-step") == "1"
        }
        chosen = [c.lower() for c in candidates if c.lower() in reached][:4]
        if len(chosen) < 4:
            return None
        return cls(tuple(chosen[:3]), chosen[3])


def _reply(email: SentEmail, who: str, to: str, region: str, at: datetime) -> bytes:
    message = EmailMessage(policy=POLICY)
    message["From"] = who
    message["To"] = to
    message["Subject"] = f"Re: {email.subject}"
    message["Date"] = format_datetime(at)
    message["Message-ID"] = f"<local-reply-{email.message_id}@{who.rpartition('@')[2]}>"
    message["In-Reply-To"] = message_id_header(email.message_id, region)
    quoted = "\n".join(f"> {line}" for line in email.text.splitlines())
    message.set_content(
        f"Yes, happy to talk on Thursday.\n\nOn {at:%d %b %Y}, {email.sender} wrote:\n{quoted}\n"
    )
    return message.as_bytes()


def _out_of_office(email: SentEmail, who: str, back_on: date, region: str, at: datetime) -> bytes:
    message = EmailMessage(policy=POLICY)
    message["From"] = who
    message["To"] = email.reply_to[0]
    message["Subject"] = f"Automatic reply: {email.subject}"
    message["Date"] = format_datetime(at)
    message["Message-ID"] = f"<local-ooo-{email.message_id}@{who.rpartition('@')[2]}>"
    message["In-Reply-To"] = message_id_header(email.message_id, region)
    message["Auto-Submitted"] = "auto-replied"
    message.set_content(f"I am out of the office until {back_on.isoformat()} with limited access to email.\n")
    return message.as_bytes()


def answer(stack: LocalPipeline, campaign_id: str, repliers: Repliers, zone: ZoneInfo) -> date:
    """Send the replies and the out-of-office, each received twice; the return date it names (four
    days after today in ``zone``, the campaign window's)."""
    first = {
        e.to[0].lower(): e for e in campaign_emails(stack, campaign_id) if e.tags.get("outreach-step") == "1"
    }
    at = datetime.fromtimestamp(stack.clock.now(), UTC)
    back_on = at.astimezone(zone).date() + timedelta(days=AWAY_DAYS)
    domain = str(stack.pipeline["inbound_reply_domain"])
    mail: list[tuple[bytes, str]] = []
    for number, who in enumerate(repliers.replies):
        email = first[who]
        to = f"{UNTOKENED_LOCAL_PART}@{domain}" if number == len(repliers.replies) - 1 else email.reply_to[0]
        mail.append((_reply(email, who, to, stack.region, at), to))
    email = first[repliers.away]
    mail.append((_out_of_office(email, repliers.away, back_on, stack.region, at), email.reply_to[0]))
    for _ in range(2):
        for raw, to in mail:
            stack.receive_mail(raw, recipients=[to])
    return back_on


def _forwards(stack: LocalPipeline) -> list[tuple[str, str]]:
    """Each forward's mark (``X-Outreach-Inbound``) and the sender it names (its Reply-To)."""
    found = []
    for email in stack.forwards():
        fields = BytesParser(policy=compat32).parsebytes(email.raw or b"", headersonly=True)
        found.append(
            (str(fields.get("X-Outreach-Inbound", "")), parseaddr(str(fields.get("Reply-To", "")))[1].lower())
        )
    return found


def _inbound_waiting(stack: LocalPipeline) -> int:
    attributes = stack.client("sqs").get_queue_attributes(
        QueueUrl=str(stack.outputs["inbound_queue_url"]), AttributeNames=["All"]
    )["Attributes"]
    return sum(int(v) for k, v in attributes.items() if k.startswith("ApproximateNumberOfMessages"))


def wait_answered(
    stack: LocalPipeline, campaign_id: str, repliers: Repliers, back_on: date, *, timeout: float
) -> bool:
    """Wait until the ledger holds every reply and the absence, every reply was forwarded and the
    inbound queue is empty (both copies processed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with stack.as_caller():
            replied = all(contacts.engagement_of(who).replied_in(campaign_id) for who in repliers.replies)
            away = contacts.engagement_of(repliers.away).away_until == back_on
        forwarded = {who for mark, who in _forwards(stack) if mark == "reply"}
        if replied and away and forwarded >= set(repliers.replies) and _inbound_waiting(stack) == 0:
            return True
        time.sleep(1.0)
    return False


def replies_report(
    stack: LocalPipeline,
    campaign_id: str,
    repliers: Repliers,
    back_on: date,
    status: Mapping[str, Any],
    zone: ZoneInfo,
) -> dict[str, Any]:
    """What the ledger says of the repliers and the absent one, the forwards, the follow-ups they got
    (the absent one's on or after the return date, in the window's ``zone``) and the campaign
    status's reply counts."""
    emails = campaign_emails(stack, campaign_id)
    forwards = _forwards(stack)
    with stack.as_caller():
        engagement = {who: contacts.engagement_of(who) for who in (*repliers.replies, repliers.away)}
    after_reply = 0
    for who in repliers.replies:
        replied_at = engagement[who].replied_at
        moment = parse_utc_iso(replied_at).timestamp() + 1 if replied_at else float("inf")
        after_reply += sum(1 for e in emails if e.to[0].lower() == who and e.sent_at > moment)
    follow_ups = [
        e for e in emails if e.to[0].lower() == repliers.away and e.tags.get("outreach-step") != "1"
    ]
    steps = {str(entry["step"]): entry for entry in status["steps"]}
    report = {
        "replies_recorded": sum(1 for who in repliers.replies if engagement[who].replied_in(campaign_id)),
        "replies": len(repliers.replies),
        "forwards": {
            mark: sum(1 for m, _ in forwards if m == mark) for mark in sorted({m for m, _ in forwards})
        },
        "forwarded_once": sorted(who for m, who in forwards if m == "reply") == sorted(repliers.replies),
        "away_until": str(engagement[repliers.away].away_until),
        "named_return": str(back_on),
        "away_follow_up": [
            datetime.fromtimestamp(e.sent_at, UTC).strftime("%Y-%m-%d %H:%M UTC") for e in follow_ups
        ],
        "away_postponed": bool(follow_ups)
        and all(datetime.fromtimestamp(e.sent_at, zone).date() >= back_on for e in follow_ups),
        "follow_ups_after_reply": after_reply,
        "status": {
            step: {k: int(entry.get(k, 0)) for k in ("replied", "auto_replied", "forwarded")}
            for step, entry in steps.items()
        },
    }
    report["ok"] = (
        report["replies_recorded"] == report["replies"]
        and report["forwarded_once"]
        and report["away_until"] == report["named_return"]
        and report["away_postponed"]
        and after_reply == 0
    )
    return report


def report_lines(report: Mapping[str, Any]) -> list[str]:
    return [
        "replies (each received twice):",
        f"  replies recorded  {report['replies_recorded']} of {report['replies']} "
        f"(one without its token, matched on In-Reply-To)",
        f"  forwards          {report['forwards'] or 'none'} (each reply once: {report['forwarded_once']})",
        f"  out of office     away until {report['away_until']} (named {report['named_return']}); "
        f"follow-up sent {', '.join(report['away_follow_up']) or 'never'} "
        f"(postponed past the return: {report['away_postponed']})",
        f"  follow-ups to a replier after the reply  {report['follow_ups_after_reply']}",
        *(f"  step {step} by mail  {counts}" for step, counts in report["status"].items()),
        f"  replies ok     {report['ok']}",
    ]
