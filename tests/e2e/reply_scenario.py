"""Who answers the reply e2e's campaign, and how: the cast, the mail each one sends, and what came back.

``RECIPIENTS`` people get a three-step campaign with a reply domain. The cast is drawn, in recipient
order, from those whose step 1 went out (``Cast.of``: on the e2e's fast clock a loaded machine may run
a worker past its timeout, and the product then fails that email ``delivery_unknown``; nobody answers
an email they never got). After step 1 (``inbound_mail_of``):

- ``replies`` (10 % of the recipients) answer as a person, quoting the email; a third of them
  (``stripped``) through a client that dropped the token (addressed to another address of the reply
  domain, matched on ``In-Reply-To``), some with attachments (``attaching``), in two client shapes;
- ``away`` (5 %) send an out-of-office naming a return date (4 to 8 days on), in English, German,
  French and Spanish by turn, every other one with an RFC 3834 (or de-facto) header field;
- ``unsubscribers`` (1 %) mail List-Unsubscribe's ``mailto:``;
- ``bounced`` (1 %) have their mail system send a DSN to the reply domain;
- ``STRANGERS`` people no email went to write to the reply domain (unmatched).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from email.utils import parseaddr
from zoneinfo import ZoneInfo

from embedded_aws.ses_v2 import SentEmail
from outreach.ses_message_ids import message_id_header
from tests.support import inbound_mail

RECIPIENTS = 500
REPLIES, AWAY, UNSUBSCRIBES, BOUNCES = 50, 25, 5, 5
STRANGERS = range(4)
BERLIN = ZoneInfo("Europe/Berlin")
# The address a client that dropped the token answers to, and where a mail system sends its DSN.
UNTOKENED_MAILBOX = "replies"
BOUNCE_MAILBOX = "bounces"
STRANGER_MAILBOX = "info"


@dataclass(frozen=True)
class Cast:
    """Who does what, each an address (lower case) of a recipient whose step 1 went out."""

    replies: tuple[str, ...]
    away: tuple[str, ...]
    unsubscribers: tuple[str, ...]
    bounced: tuple[str, ...]

    @classmethod
    def of(cls, reached: Iterable[str]) -> Cast:
        """The roles, in turn, from ``reached`` (in recipient order)."""
        people = list(reached)
        if len(people) < REPLIES + AWAY + UNSUBSCRIBES + BOUNCES:
            raise AssertionError(f"only {len(people)} recipients got step 1")
        cut = [
            REPLIES,
            REPLIES + AWAY,
            REPLIES + AWAY + UNSUBSCRIBES,
            REPLIES + AWAY + UNSUBSCRIBES + BOUNCES,
        ]
        return cls(
            tuple(people[: cut[0]]),
            tuple(people[cut[0] : cut[1]]),
            tuple(people[cut[1] : cut[2]]),
            tuple(people[cut[2] : cut[3]]),
        )

    @property
    def stripped(self) -> frozenset[str]:
        """The repliers whose client dropped the token: a third."""
        return frozenset(who for n, who in enumerate(self.replies) if n % 3 == 0)

    @property
    def attaching(self) -> frozenset[str]:
        return frozenset(who for n, who in enumerate(self.replies) if n % 4 == 1)

    @property
    def stopped(self) -> dict[str, str]:
        """The ledger state each stopped member ends in."""
        return {**dict.fromkeys(self.unsubscribers, "unsubscribed"), **dict.fromkeys(self.bounced, "bounced")}


def address(i: int) -> str:
    return f"person{i:03d}@replier{i % 23}.example"


def _name(who: str) -> str:
    return f"Person {int(who[len('person') : len('person') + 3])}"


@dataclass(frozen=True)
class Injected:
    """One message SES receives: what it is, who it is about, the bytes and the envelope."""

    kind: str  # reply, away, unsubscribe, bounce, stranger
    who: str
    raw: bytes
    recipients: tuple[str, ...]
    sender: str
    back_on: date | None = None


def original(email: SentEmail, region: str) -> inbound_mail.Original:
    """What a reply needs of step 1's email: its Message-ID as SES writes it (``ses_message_ids``)."""
    return inbound_mail.Original(
        message_id=message_id_header(email.message_id, region),
        subject=email.subject,
        text=email.text,
        sender=email.sender,
        reply_to=email.reply_to[0],
    )


def back_on(n: int, today: date) -> date:
    """The return date the ``n``-th away recipient names: 4 to 8 days after ``today``."""
    return today + timedelta(days=4 + n % 5)


def inbound_mail_of(
    cast: Cast, firsts: dict[str, SentEmail], reply_domain: str, region: str, at: datetime
) -> list[Injected]:
    """Every message the scenario injects, once each (module docstring), answering step 1's emails."""
    found: list[Injected] = []
    today = at.astimezone(BERLIN).date()
    for n, who in enumerate(cast.replies):
        email = firsts[who]
        to = f"{UNTOKENED_MAILBOX}@{reply_domain}" if who in cast.stripped else email.reply_to[0]
        raw = inbound_mail.human_reply(
            original(email, region),
            sender=who,
            name=_name(who),
            to=to,
            index=n,
            at=at,
            shape="alternative" if n % 2 else "plain",
            attachments=inbound_mail.attachments_for(n) if who in cast.attaching else (),
        )
        found.append(Injected("reply", who, raw, (to,), who))
    for n, who in enumerate(cast.away):
        email, returning = firsts[who], back_on(n, today)
        raw = inbound_mail.out_of_office(
            original(email, region),
            sender=who,
            name=_name(who),
            index=n,
            at=at,
            language=inbound_mail.LANGUAGES[n % len(inbound_mail.LANGUAGES)],
            back_on=returning,
            rfc3834=n % 2 == 0,
        )
        found.append(Injected("away", who, raw, (email.reply_to[0],), who, returning))
    for n, who in enumerate(cast.unsubscribers):
        mailbox = unsubscribe_mailbox(firsts[who])
        raw = inbound_mail.unsubscribe_mail(sender=who, mailbox=mailbox, index=n, at=at)
        found.append(Injected("unsubscribe", who, raw, (mailbox,), who))
    for n, who in enumerate(cast.bounced):
        to = f"{BOUNCE_MAILBOX}@{reply_domain}"
        raw = inbound_mail.delivery_report(
            original(firsts[who], region), recipient=who, to=to, index=n, at=at, whole_message=n % 2 == 0
        )
        found.append(Injected("bounce", who, raw, (to,), ""))
    for i in STRANGERS:
        who, to = f"stranger{i}@elsewhere{i}.example", f"{STRANGER_MAILBOX}@{reply_domain}"
        attached = inbound_mail.attachments_for(100 + i) if i == 0 else ()
        raw = inbound_mail.stranger_mail(sender=who, to=to, index=i, at=at, attachments=attached)
        found.append(Injected("stranger", who, raw, (to,), who))
    return found


def unsubscribe_mailbox(email: SentEmail) -> str:
    """The ``mailto:`` address of the email's List-Unsubscribe (after its one-click https URI)."""
    targets = [t.strip().strip("<>") for t in email.headers.get("List-Unsubscribe", "").split(",")]
    mailtos = [t[len("mailto:") :].split("?", 1)[0] for t in targets if t.startswith("mailto:")]
    if len(mailtos) != 1:
        raise AssertionError(f"List-Unsubscribe without one mailto: {email.headers}")
    return mailtos[0]


@dataclass(frozen=True)
class Forward:
    """One forward the inbound processor sent: its mark, labels, to and Reply-To, and its bytes."""

    mark: str | None
    campaign: str | None
    step: str | None
    to: tuple[str, ...]
    reply_to: str
    raw: bytes


def forwards_of(sent: list[SentEmail]) -> list[Forward]:
    found = []
    for email in sent:
        raw = email.raw or b""
        found.append(
            Forward(
                mark=inbound_mail.header(raw, "X-Outreach-Inbound"),
                campaign=inbound_mail.header(raw, "X-Outreach-Campaign"),
                step=inbound_mail.header(raw, "X-Outreach-Step"),
                to=email.to,
                reply_to=parseaddr(inbound_mail.header(raw, "Reply-To") or "")[1].lower(),
                raw=raw,
            )
        )
    return found


def forwards_per_sender(forwards: list[Forward], mark: str) -> Counter[str]:
    """How many forwards of ``mark`` each original sender's message got (keyed by the Reply-To)."""
    return Counter(f.reply_to for f in forwards if f.mark == mark)


def same_content(forward: bytes, sent: bytes) -> bool:
    """Whether the forward carries the message unchanged: the same body bytes, and the same parts
    (type, file name and decoded bytes)."""
    return inbound_mail.body_bytes(forward) == inbound_mail.body_bytes(sent) and inbound_mail.leaf_parts(
        forward
    ) == inbound_mail.leaf_parts(sent)
