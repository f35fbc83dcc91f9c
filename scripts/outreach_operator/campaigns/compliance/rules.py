"""The campaign lint's rules: what each refuses, where the rule comes from, and its check.

Each rule looks at the campaign file alone (its templates, not a rendered mail), so it holds before
anything is planned; each finding names the field (``steps.N.text``, 0-based like every campaign
error) and says what is missing. A body "states" a value when its template uses the placeholder or
writes the value out as it is in the campaign file (whitespace aside).

- ``unsubscribe-link``: every step's text body, and its HTML body when it has one, uses
  ``{{ unsubscribe }}``. The List-Unsubscribe header alone is not enough: Gmail's and Yahoo's bulk
  sender rules ask for a visible link in the body as well, and CAN-SPAM for a clear notice of the way
  to opt out in the message.
- ``postal-address``: the campaign gives the sender's ``postal_address`` and every step states it
  (CAN-SPAM: "a valid physical postal address of the sender" in each commercial message).
- ``data-source``: a campaign that declares ``eu_recipients`` gives ``data_source`` (where the
  addresses came from) and its first step states it: GDPR Art. 14 tells a person whose data was not
  collected from them "from which source the personal data originate", at the latest at the first
  communication (Art. 14(2)(f) and 14(3)(b)).
- ``misleading-subject``: a subject starting ``Re:`` or ``Fwd:`` only on a threaded step; elsewhere it
  claims an earlier exchange that never happened (CAN-SPAM: no deceptive subject heading).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from outreach_operator.campaigns.compliance.rule_ids import (
    DATA_SOURCE,
    MISLEADING_SUBJECT,
    POSTAL_ADDRESS,
    RULE_IDS,
    UNSUBSCRIBE_LINK,
)
from outreach_operator.campaigns.rendering import Kind, template_variables
from outreach_operator.campaigns.stop_rules import is_reply_subject

if TYPE_CHECKING:
    from outreach_operator.campaigns.campaign_file import Campaign

CAN_SPAM = "https://www.ftc.gov/business-guidance/resources/can-spam-act-compliance-guide-business"
CAN_SPAM_ACT = "https://www.law.cornell.edu/uscode/text/15/7704"
GMAIL_SENDERS = "https://support.google.com/mail/answer/81126"
GDPR_ART_14 = "https://eur-lex.europa.eu/eli/reg/2016/679/oj (Art. 14(2)(f), 14(3)(b))"


@dataclass(frozen=True)
class Finding:
    """One thing a rule refuses: the field it is in and what is wrong there."""

    field: str
    problem: str


@dataclass(frozen=True)
class Rule:
    """A rule of the lint: its name, what it asks for, its sources, and its check (``applies`` says
    whether the campaign falls under it at all)."""

    name: str
    asks: str
    sources: tuple[str, ...]
    check: Callable[[Campaign], list[Finding]]
    applies: Callable[[Campaign], bool] = lambda campaign: True


def _bodies(campaign: Campaign, steps: range | None = None) -> Iterator[tuple[str, str, Kind]]:
    """(field, template, kind) of each body of the ``steps`` (0-based; all by default)."""
    for index in steps if steps is not None else range(len(campaign.steps)):
        step = campaign.steps[index]
        yield f"steps.{index}.text", step.text, "text"
        if step.html:
            yield f"steps.{index}.html", step.html, "html"


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def _states(template: str, kind: Kind, placeholder: str, value: str | None) -> bool:
    """Whether the body uses ``{{ placeholder }}`` or writes ``value`` out."""
    if placeholder in template_variables(template, kind):
        return True
    return value is not None and _squeezed(value) in _squeezed(template)


def _unsubscribe_link(campaign: Campaign) -> list[Finding]:
    return [
        Finding(field, "no unsubscribe link in the body: use {{ unsubscribe }}")
        for field, template, kind in _bodies(campaign)
        if not _states(template, kind, "unsubscribe", None)
    ]


def _statement(
    campaign: Campaign, name: str, value: str | None, steps: range | None, what: str
) -> list[Finding]:
    if value is None:
        return [Finding(name, f"missing: {what}")]
    return [
        Finding(field, f"does not state the {name}: use {{{{ {name} }}}} or write it out")
        for field, template, kind in _bodies(campaign, steps)
        if not _states(template, kind, name, value)
    ]


def _postal_address(campaign: Campaign) -> list[Finding]:
    return _statement(
        campaign,
        "postal_address",
        campaign.postal_address,
        None,
        "the sender's postal address, stated in every step",
    )


def _data_source(campaign: Campaign) -> list[Finding]:
    return _statement(
        campaign,
        "data_source",
        campaign.data_source,
        range(1),
        "where the recipients' addresses came from, stated in the first step (eu_recipients is true)",
    )


def _misleading_subject(campaign: Campaign) -> list[Finding]:
    return [
        Finding(f"steps.{index}.subject", "starts with 'Re:' or 'Fwd:' on a step that is not threaded")
        for index, step in enumerate(campaign.steps)
        if is_reply_subject(step.subject) and not campaign.threaded(index + 1)
    ]


RULES: tuple[Rule, ...] = (
    Rule(
        UNSUBSCRIBE_LINK,
        "an unsubscribe link in every body of every step",
        (GMAIL_SENDERS, f"{CAN_SPAM_ACT} (a)(3), (a)(5)(A)(ii)", CAN_SPAM),
        _unsubscribe_link,
    ),
    Rule(
        POSTAL_ADDRESS,
        "the sender's postal address in every step",
        (f"{CAN_SPAM_ACT} (a)(5)(A)(iii)", CAN_SPAM),
        _postal_address,
    ),
    Rule(
        DATA_SOURCE,
        "where the addresses came from, in the first step, for EU recipients",
        (GDPR_ART_14,),
        _data_source,
        applies=lambda campaign: campaign.eu_recipients,
    ),
    Rule(
        MISLEADING_SUBJECT,
        "no 'Re:' or 'Fwd:' subject on a step that is not threaded",
        (f"{CAN_SPAM_ACT} (a)(2)", CAN_SPAM),
        _misleading_subject,
    ),
)

if tuple(rule.name for rule in RULES) != RULE_IDS:
    raise RuntimeError("compliance.rules: every name in rule_ids has exactly one rule, in the same order")
