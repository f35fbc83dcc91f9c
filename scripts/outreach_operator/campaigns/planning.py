"""The send plan: one PlannedEmail per recipient and step, inside the window and under the rate.

Each recipient's window is the campaign's days and hours in the recipient's own zone
(``recipient_zones``: its ``timezone`` column, its domain's country, its phone numbers' country, its
language, else the campaign's), and each email carries that zone. Steps are planned in order. The first
step of every recipient is due at the start; a follow-up is due its ``after_days`` calendar days (in the
recipient's zone) after the same recipient's previous step. A due time is moved to the next minute the
recipient's window is open in that still has room under ``max_per_minute`` (counted over all recipients)
and whose slot the recipient domain's pacing allows (``domain_pacing``: a cap per local day and a least
gap between two emails to one domain) and, while the sending identity warms up, whose UTC day is under
the identity's cap (``warmup_pacing``); the emails of one minute are spread over its seconds. The minutes
are counted over the whole campaign (all steps), and recipients keep their order, so the same campaign,
recipients and start always give the same plan.

A recipient whose messages cannot all be rendered (a missing placeholder, an unsafe header), or one of
whose task rows would be too large for DynamoDB (measured as the task store will write it,
``task_store.email_row_size``, against ``task_store.MAX_ROW_BYTES``: the 400 KB item limit less the
room its later updates need), is reported with its row and the reason and gets no email at all: a
campaign never sends a follow-up to someone who could not get the first mail.

Every planned email carries the campaign's sequence rules (``stop_rules.sequence_rules_of``: the stop
rules, the window's days and hours, the owner mailbox) and whether it is threaded; a campaign with a
``reply_domain`` gives each its own reply address (``reply_addresses``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial

from outreach import task_store
from outreach.email_task import EmailMessage, PlannedEmail
from outreach.item_size import ITEM_LIMIT_BYTES
from outreach.sequence_rules import SequenceRules
from outreach_operator.campaigns.campaign_file import Campaign, SendWindow
from outreach_operator.campaigns.domain_pacing import DomainPacing, domain_of
from outreach_operator.campaigns.one_click_links import OneClickLinks
from outreach_operator.campaigns.recipient_zones import zone_of
from outreach_operator.campaigns.recipients import Recipient, RejectedRow
from outreach_operator.campaigns.rendering import render_step
from outreach_operator.campaigns.reply_addresses import ReplyAddresses
from outreach_operator.campaigns.send_window import add_local_days, next_open
from outreach_operator.campaigns.stop_rules import sequence_rules_of
from outreach_operator.campaigns.warmup_pacing import WarmupPacing
from outreach_operator.errors import RenderError


@dataclass
class CampaignPlan:
    emails: list[PlannedEmail] = field(default_factory=list)
    rejected: list[RejectedRow] = field(default_factory=list)
    # Emails the domain pacing or the warm-up cap moved later than the rate and the window alone would
    # have sent them.
    paced: int = 0
    # Recipients planned per source of their zone (``recipient_zones``: column, country, phone, language,
    # campaign).
    zone_sources: dict[str, int] = field(default_factory=dict)


class _MinuteLedger:
    """Emails planned per minute (minutes since the epoch, UTC), and where the next free one is: the
    minutes are shared by every recipient, the window's opening hours are each recipient's own zone's."""

    def __init__(self, per_minute: int) -> None:
        self._per_minute = per_minute
        self._count: dict[int, int] = {}
        # Per zone, a full minute -> a later minute to try next (open in that zone, with room then).
        self._skip: dict[str, dict[int, int]] = {}
        self.paced = 0  # emails ``allowed`` moved past their first free slot

    @staticmethod
    def _open(window: SendWindow, minute: int) -> int:
        opened = next_open(window, datetime.fromtimestamp(minute * 60, UTC))
        return math.ceil(opened.timestamp() / 60)

    def _free(self, window: SendWindow, minute: int) -> int:
        """The first minute at or after ``minute`` open in ``window`` with room."""
        skip = self._skip.setdefault(window.timezone, {})
        minute = self._open(window, minute)
        full: list[int] = []
        while self._count.get(minute, 0) >= self._per_minute:
            full.append(minute)
            minute = self._open(window, skip.get(minute, minute + 1))
        for passed in full:
            skip[passed] = minute
        return minute

    def take(self, due: datetime, window: SendWindow, allowed: Callable[[float], float]) -> datetime:
        """The send time of one more email due at ``due``: the first slot of a minute open in ``window``
        (the recipient's) with room that ``allowed`` (the earliest instant at or after a slot the
        domain's pacing allows) keeps."""
        moment = due.timestamp()
        moved = False
        while True:
            minute = self._free(window, math.ceil(moment / 60))
            taken = self._count.get(minute, 0)
            slot = minute * 60 + taken * 60 // self._per_minute
            moment = allowed(slot)
            if moment <= slot:
                self._count[minute] = taken + 1
                self.paced += moved
                return datetime.fromtimestamp(slot, UTC)
            moved = True


def _render_all(
    campaign: Campaign, recipient: Recipient, links: OneClickLinks | None, replies: ReplyAddresses | None
) -> list[EmailMessage]:
    return [
        render_step(campaign, step, recipient.email, recipient.values, links, replies)
        for step in range(1, len(campaign.steps) + 1)
    ]


def _planned(
    campaign: Campaign,
    step: int,
    send_at: datetime,
    message: EmailMessage,
    rules: SequenceRules,
    timezone: str | None = None,
) -> PlannedEmail:
    return PlannedEmail(
        campaign_id=campaign.campaign_id,
        step=step,
        send_at=send_at,
        timezone=timezone or campaign.window.timezone,
        message=message,
        max_per_minute=campaign.max_per_minute,
        rules=rules,
        threaded=campaign.threaded(step),
    )


def _oversized_row(
    campaign: Campaign, rendered: Sequence[EmailMessage], start: datetime, rules: SequenceRules
) -> str | None:
    """Why one of the recipient's task rows cannot be written, naming its step; ``None`` if all can.
    (A row's size does not depend on its send time: ``send_at`` is stored at a fixed width.)"""
    for step, message in enumerate(rendered, start=1):
        size = task_store.email_row_size(_planned(campaign, step, start, message, rules))
        if size > task_store.MAX_ROW_BYTES:
            return (
                f"steps.{step - 1}: the task row would be {size:,} bytes, DynamoDB's item limit is "
                f"{ITEM_LIMIT_BYTES // 1024} KB (a row may have {task_store.MAX_ROW_BYTES:,} bytes, "
                f"{task_store.ROW_GROWTH_BYTES:,} are kept for what sending adds)"
            )
    return None


def _allowed(pacing: DomainPacing, warmup: WarmupPacing | None, domain: str) -> Callable[[float], float]:
    """The earliest instant at or after a slot that the domain's pacing and the warm-up cap allow."""
    if warmup is None:
        return partial(pacing.earliest, domain)
    return lambda slot: warmup.earliest(pacing.earliest(domain, slot))


def plan_campaign(
    campaign: Campaign,
    recipients: Sequence[Recipient],
    start: datetime,
    links: OneClickLinks | None = None,
    replies: ReplyAddresses | None = None,
    warmup: WarmupPacing | None = None,
) -> CampaignPlan:
    """Render and time every step for every recipient, from ``start`` (timezone-aware) on; ``links``
    gives the unsubscribe target of a campaign without its own, ``replies`` the reply addresses of a
    campaign with a ``reply_domain``, ``warmup`` the sending identity's daily caps while it warms up
    (it books the plan's emails per UTC day)."""
    if start.tzinfo is None:
        raise ValueError("start must be timezone-aware")
    window = campaign.window
    rules = sequence_rules_of(campaign)
    plan = CampaignPlan()
    messages: list[tuple[Recipient, SendWindow, list[EmailMessage]]] = []
    for recipient in recipients:
        try:
            zone = zone_of(recipient.email, recipient.values, window.timezone)
            rendered = _render_all(campaign, recipient, links, replies)
        except (RenderError, ValueError) as exc:
            plan.rejected.append(RejectedRow(recipient.row, recipient.source, recipient.email, str(exc)))
            continue
        too_large = _oversized_row(campaign, rendered, start, rules)
        if too_large is not None:
            plan.rejected.append(RejectedRow(recipient.row, recipient.source, recipient.email, too_large))
            continue
        own = window if zone.name == window.timezone else window.model_copy(update={"timezone": zone.name})
        plan.zone_sources[zone.source] = plan.zone_sources.get(zone.source, 0) + 1
        messages.append((recipient, own, rendered))
    ledger = _MinuteLedger(campaign.max_per_minute)
    pacing = DomainPacing(campaign.pacing, window.zone)
    previous: list[datetime] = [start] * len(messages)
    for step, definition in enumerate(campaign.steps, start=1):
        for index, (recipient, own, rendered) in enumerate(messages):
            domain = domain_of(recipient.email)
            due = add_local_days(own, previous[index], definition.after_days)
            send_at = ledger.take(due, own, _allowed(pacing, warmup, domain)).astimezone(own.zone)
            pacing.record(domain, send_at.timestamp())
            if warmup is not None:
                warmup.record(send_at.timestamp())
            previous[index] = send_at
            plan.emails.append(_planned(campaign, step, send_at, rendered[step - 1], rules, own.timezone))
    plan.paced = ledger.paced
    return plan
