"""What a reply does to a campaign: the campaign file's ``stop_rules``, ``reply_domain`` and threaded steps.

The campaign file states them, each with its default::

    reply_domain: reply.acme.example      # optional: replies come back to the pipeline
    stop_rules:
      on_reply: stop                      # or continue
      reply_stops_other_campaigns: true
      on_out_of_office: postpone          # or continue
      forward_auto_replies: false
    steps:
      - subject: "About {{ company }}"    # the first step is never threaded
      - after_days: 4
        threaded: true                    # the default for a follow-up
        subject: "Re: About {{ company }}"

With a ``reply_domain`` every email's Reply-To is its own reply address
(``reply+<handle>.<mac>@<reply_domain>``, ``outreach.reply_token``; ``reply_addresses``), the inbound
processor receives the replies, and the file's ``reply_to`` is the owner mailbox they are forwarded to.
A campaign without its own ``unsubscribe`` then also names ``mailto:unsubscribe@<reply_domain>`` in
List-Unsubscribe, after the one-click https URI (RFC 8058 §3.1). Without a ``reply_domain``, replies
go to ``reply_to`` as they always did, and the pipeline learns of them only if that mailbox is routed
to the reply domain (docs/deploying.md).

A subject that starts with ``Re:`` or ``Fwd:`` (any case, in the template or after rendering) claims to
answer or pass on something: the campaign lint refuses it on a step that is not threaded
(``steps.N.subject``, rule ``misleading-subject`` in ``compliance``). The planner stores the
rules on every email (``sequence_rules_of``) and the dry run prints them (``stop_rules_report``).
"""

from __future__ import annotations

import re
from email.utils import getaddresses
from typing import TYPE_CHECKING, Any, Literal

from email_validator import EmailNotValidError, validate_email
from pydantic import BaseModel, ConfigDict

from outreach.email_task import is_one_address
from outreach.sequence_rules import SequenceRules

if TYPE_CHECKING:
    from outreach_operator.campaigns.campaign_file import Campaign

# The local part of the unsubscribe mailbox on the reply domain (the inbound processor's
# UNSUBSCRIBE_LOCAL_PART, whose default in the modules is the same).
UNSUBSCRIBE_LOCAL_PART = "unsubscribe"
_REPLY_SUBJECT = re.compile(r"\s*(?:re|fwd?)\s*:", re.IGNORECASE)
_DOMAIN = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+")
# A reply address is ``reply+`` and 33 characters of token, ``@`` and the domain: at most 254 in all.
_MAX_REPLY_DOMAIN_CHARS = 254 - len("reply+0123456789abcdef.0123456789abcdef@")


class StopRules(BaseModel):
    """The campaign file's ``stop_rules``: what a reply and an out-of-office do."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    on_reply: Literal["stop", "continue"] = "stop"
    reply_stops_other_campaigns: bool = True
    on_out_of_office: Literal["postpone", "continue"] = "postpone"
    forward_auto_replies: bool = False


def is_reply_subject(subject: str) -> bool:
    """Whether ``subject`` starts with ``Re:``, ``Fwd:`` or ``Fw:`` (any case, spaces around it
    allowed): it claims to answer or pass on an earlier mail."""
    return _REPLY_SUBJECT.match(subject) is not None


def checked_reply_domain(value: str) -> str:
    """The reply domain as written (lower case ASCII, two labels or more); ValueError otherwise."""
    if len(value) > _MAX_REPLY_DOMAIN_CHARS or not _DOMAIN.fullmatch(value):
        raise ValueError(
            f"not a lower-case ASCII domain of at most {_MAX_REPLY_DOMAIN_CHARS} characters "
            f"(write a Unicode one in Punycode): {value[:80]!r}"
        )
    return value


def owner_address(mailbox: str) -> str:
    """The ASCII address of the ``reply_to`` mailbox (``Name <addr>`` or ``addr``), where replies are
    forwarded; ValueError for one SES cannot send to (no ASCII form)."""
    found = getaddresses([mailbox])
    address = found[0][1] if len(found) == 1 else ""
    try:
        checked = validate_email(address, check_deliverability=False, test_environment=True)
    except EmailNotValidError as exc:
        raise ValueError(f"not an e-mail address: {exc}") from exc
    ascii_address = checked.ascii_email or ""
    if not is_one_address(ascii_address):
        raise ValueError("replies are forwarded here: it needs an ASCII form (write its domain in Punycode)")
    return ascii_address


def sequence_rules_of(campaign: Campaign) -> SequenceRules:
    """The rules every email of ``campaign`` carries: its stop rules, its window's days and hours, and
    the owner mailbox (``reply_to``)."""
    rules = campaign.stop_rules
    return SequenceRules(
        on_reply=rules.on_reply,
        reply_stops_other_campaigns=rules.reply_stops_other_campaigns,
        on_out_of_office=rules.on_out_of_office,
        forward_auto_replies=rules.forward_auto_replies,
        owner=owner_address(campaign.reply_to),
        send_days=tuple(sorted(campaign.window.weekday_numbers)),
        window_start=f"{campaign.window.start:%H:%M}",
        window_end=f"{campaign.window.end:%H:%M}",
    )


def stop_rules_report(campaign: Campaign) -> dict[str, Any]:
    """What the schedule report (and its dry run) says of replies: the rules, where replies go and
    which steps are threaded."""
    rules = campaign.stop_rules
    threaded = [number for number in range(1, len(campaign.steps) + 1) if campaign.threaded(number)]
    report: dict[str, Any] = {
        **rules.model_dump(),
        "reply_domain": campaign.reply_domain,
        "owner": owner_address(campaign.reply_to),
        "threaded_steps": threaded,
    }
    if campaign.reply_domain is None:
        report["reply_to"] = campaign.reply_to
        report["received"] = "no: replies go to reply_to; set reply_domain for the pipeline to see them"
    else:
        report["reply_to"] = f"reply+<token>@{campaign.reply_domain} (one per email)"
        report["received"] = f"yes: at {campaign.reply_domain}, forwarded to the owner"
        if campaign.unsubscribe is None:
            report["unsubscribe_mailto"] = unsubscribe_mailto(campaign.reply_domain)
    return report


def unsubscribe_mailto(domain: str) -> str:
    """The ``mailto:`` of the reply domain's unsubscribe mailbox."""
    return f"mailto:{UNSUBSCRIBE_LOCAL_PART}@{domain}"
