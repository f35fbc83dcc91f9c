"""What an address did with our mail: the campaigns it replied in, and until when it is away.

The inbound processor writes both on the address's ledger record (``address#<normalised address>``),
and the email worker reads them after its claim in the read of its stop (``contacts.standing_of``);
``engagement_of`` reads them alone. Both are strongly consistent BatchGetItems:
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html

- ``replied_campaigns`` (a string set) holds each campaign the address answered a person's reply in,
  ``replied_at`` the time of the latest reply (moved forward only). ``record_reply`` ADDs the campaign
  (refused when the set holds it already, so a second copy of the reply changes nothing) and then moves
  ``replied_at`` with its own conditional write: the two are idempotent apart, so a retry after a crash
  between them completes the second.
- ``away_until`` (ISO date) is the day an out-of-office reply said its person is back; ``record_away``
  keeps the later of the stored and the new date, so an older auto-reply arriving late cannot shorten
  a newer absence.

Neither ever changes ``state`` or ``state_rank``: a reply is not an opt-out, and an absence is not a
stop. A record that did not exist is created in state ``ok`` (rank 0), as ``record_contacted`` does.
Conditions and ``ADD`` of a set: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
and https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html#Expressions.UpdateExpressions.ADD
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from botocore.exceptions import ClientError

from outreach import clients, clock, config
from outreach.contacts.keys import address_key
from outreach.contacts.reads import KEY
from outreach.contacts.states import State
from outreach.email_task import utc_iso
from outreach.errors import InvalidJobInputError, MalformedFieldError
from outreach.task_ids import validate_job_id
from outreach.task_store.items import batch_get, is_condition_failure, to_av, to_avs

ATTRIBUTES = ("replied_campaigns", "replied_at", "away_until")
# A record keeps at most this many campaigns a person replied in (far more than anyone answers).
MAX_REPLIED_CAMPAIGNS = 1000
# Every write that may create the record leaves it a well-formed ``ok`` address record.
_CREATE = "#kind = if_not_exists(#kind, :kind), #state = if_not_exists(#state, :ok), "
_CREATE += "state_rank = if_not_exists(state_rank, :zero), updated_at = :now"
_NAMES = {"#kind": "kind", "#state": "state"}


@dataclass(frozen=True)
class Engagement:
    """An address's replies and absence: the campaigns it replied in, the time of its latest reply
    (UTC ``YYYY-MM-DDTHH:MM:SSZ``) and the day it is back (``None``: no absence known)."""

    replied_campaigns: frozenset[str] = frozenset()
    replied_at: str | None = None
    away_until: date | None = None

    def replied_in(self, campaign_id: str) -> bool:
        """Whether the address replied in ``campaign_id``."""
        return campaign_id in self.replied_campaigns

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Engagement:
        """The engagement a stored record holds; ``MalformedFieldError`` names a field the writers
        would not have stored."""
        campaigns = item.get("replied_campaigns", set())
        if not isinstance(campaigns, set) or not all(isinstance(name, str) for name in campaigns):
            raise MalformedFieldError("replied_campaigns", "not a set of campaign ids")
        replied_at = item.get("replied_at")
        if replied_at is not None and not isinstance(replied_at, str):
            raise MalformedFieldError("replied_at", "not text")
        away = item.get("away_until")
        away_until: date | None = None
        if away is not None:
            try:
                away_until = date.fromisoformat(str(away))
            except ValueError as exc:
                raise MalformedFieldError("away_until", f"not an ISO date: {str(away)[:40]!r}") from exc
        return cls(frozenset(campaigns), replied_at, away_until)


def _campaign(campaign_id: str) -> str:
    try:
        return validate_job_id(campaign_id)
    except InvalidJobInputError as exc:
        raise MalformedFieldError("campaign_id", str(exc)) from exc


def _write(key: str, expression: str, condition: str, values: dict[str, Any]) -> bool:
    """One conditional UpdateItem of a ledger record; ``False`` when the condition refused it."""
    names = {name: value for name, value in _NAMES.items() if name in expression or name in condition}
    request: dict[str, Any] = {
        "TableName": config.contacts_table(),
        "Key": {KEY: to_av(key)},
        "UpdateExpression": expression,
        "ConditionExpression": condition,
        "ExpressionAttributeValues": to_avs(values),
    }
    if names:
        request["ExpressionAttributeNames"] = names
    try:
        clients.dynamodb().update_item(**request)
    except ClientError as exc:
        if is_condition_failure(exc):
            return False
        raise
    return True


def _created() -> dict[str, Any]:
    return {":kind": "address", ":ok": State.OK.value, ":zero": 0, ":now": clock.iso()}


def engagement_of(address: str) -> Engagement:
    """What ``address``'s record says of its replies and absence (one strongly consistent read);
    an address without a record has an empty ``Engagement``. ``MalformedFieldError`` for a non-address
    (naming ``address``) or a stored field no reader can trust."""
    rows = batch_get(
        [address_key(address)], attributes=ATTRIBUTES, table=config.contacts_table(), key_name=KEY
    )
    return Engagement.from_item(rows[0] if rows else {})


def record_reply(address: str, campaign_id: str, *, at: datetime) -> bool:
    """Record that ``address`` replied in ``campaign_id`` at ``at``; ``True`` when the campaign was not
    recorded for it yet, ``False`` for a repeat (which changes nothing but a later ``replied_at``)."""
    key = address_key(address)
    campaign = _campaign(campaign_id)
    added = _write(
        key,
        f"SET {_CREATE} ADD replied_campaigns :ids",
        "attribute_not_exists(replied_campaigns) OR "
        "(NOT contains(replied_campaigns, :id) AND size(replied_campaigns) < :limit)",
        {**_created(), ":ids": {campaign}, ":id": campaign, ":limit": MAX_REPLIED_CAMPAIGNS},
    )
    moment = utc_iso(at)
    _write(
        key,
        f"SET {_CREATE}, replied_at = :at",
        "attribute_not_exists(replied_at) OR replied_at < :at",
        {**_created(), ":at": moment},
    )
    return added


def record_away(address: str, until: date, *, at: datetime) -> bool:
    """Record that ``address`` is away until ``until`` (an out-of-office reply received at ``at``);
    ``False`` (nothing changed) when the record already says it is away until that day or later."""
    if not isinstance(until, date) or isinstance(until, datetime):
        raise MalformedFieldError("away_until", "not a date")
    return _write(
        address_key(address),
        f"SET {_CREATE}, away_until = :until, away_recorded_at = :at",
        "attribute_not_exists(away_until) OR away_until < :until",
        {**_created(), ":until": until.isoformat(), ":at": utc_iso(at)},
    )
