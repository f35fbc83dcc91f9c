"""Writing the ledger: every write is one conditional UpdateItem, idempotent and order-free.

- ``record_stop`` raises a record's state only: ``attribute_not_exists(state_rank) OR state_rank <
  :rank``, so the highest state wins and a duplicate or older event changes nothing.
- ``record_soft_bounce`` counts one per SES message id (``ADD`` of the id to a string set, refused
  when the set holds it already), and at ``limit`` distinct messages raises the address to ``bounced``.
- ``record_contacted`` moves ``last_contacted_at`` forward only.
- ``unblock`` (the operator's, and nothing automatic) lowers ``blocked`` or ``bounced`` to ``ok``, never
  ``unsubscribed`` or ``complained``; an event older than the lift does not bounce or block it again.

Conditions and the ``ADD`` of a set: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
and https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html#Expressions.UpdateExpressions.ADD
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import ClientError

from outreach import clients, clock, config
from outreach.contacts.keys import address_key, kind_of_key
from outreach.contacts.reads import KEY
from outreach.contacts.states import WHY_CHARS, Source, State
from outreach.email_task import utc_iso
from outreach.errors import InvalidJobInputError, MalformedFieldError
from outreach.task_ids import validate_job_id
from outreach.task_store.items import from_item, is_condition_failure, to_av, to_avs

# SES message ids are about 60 characters; anything far longer is not one.
_MESSAGE_ID_CHARS = 256
_MESSAGE_ID = re.compile(r"[\x21-\x7e]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
_NAMES = {"#kind": "kind", "#state": "state", "#source": "source", "#why": "why", "#since": "since"}


def _recorded_now() -> str:
    """The time of a write that sets a state, to the second (``recorded_at``)."""
    return utc_iso(datetime.fromtimestamp(clock.now(), UTC))


def clean_why(why: str) -> str:
    """``why`` as stored: control characters (line breaks included) as one space, at most 500 chars."""
    return _CONTROL.sub(" ", str(why)).strip()[:WHY_CHARS]


def _campaign(campaign_id: str | None) -> str | None:
    if campaign_id is None:
        return None
    try:
        return validate_job_id(campaign_id)
    except InvalidJobInputError as exc:
        raise MalformedFieldError("campaign_id", str(exc)) from exc


def _update(key: str, expression: str, condition: str, values: dict[str, Any], **extra: Any) -> Any:
    """One conditional UpdateItem of a record; ``None`` when the condition refused it."""
    used = {name: value for name, value in _NAMES.items() if name in expression or name in condition}
    try:
        return clients.dynamodb().update_item(
            TableName=config.contacts_table(),
            Key={KEY: to_av(key)},
            UpdateExpression=expression,
            ConditionExpression=condition,
            ExpressionAttributeNames=used,
            ExpressionAttributeValues=to_avs(values),
            **extra,
        )
    except ClientError as exc:
        if is_condition_failure(exc):
            return None
        raise


def record_stop(
    key: str,
    state: State,
    *,
    at: datetime,
    why: str,
    source: Source,
    campaign_id: str | None = None,
) -> bool:
    """Raise the record ``key`` (``contacts.address_key`` or ``domain_key``) to ``state``, set by the
    event of time ``at``; ``True`` when this write raised it, ``False`` when the record already held
    this state or a higher one (a duplicate, or an older event arriving late).

    ``why`` is kept as human text (``clean_why``); ``campaign_id`` names the campaign the event came
    from, if any.
    """
    stop = State(state)
    if not stop.stops:
        raise ValueError("ok is not a stop: only unblock lowers a state")
    since = utc_iso(at)
    values: dict[str, Any] = {
        ":kind": kind_of_key(key),
        ":state": stop.value,
        ":rank": stop.rank,
        ":since": since,
        ":why": clean_why(why),
        ":source": Source(source).value,
        ":now": clock.iso(),
        ":recorded": _recorded_now(),
    }
    expression = (
        "SET #kind = :kind, #state = :state, state_rank = :rank, #since = :since, #why = :why, "
        "#source = :source, recorded_at = :recorded, updated_at = :now"
    )
    campaign = _campaign(campaign_id)
    if campaign is None:
        expression += " REMOVE campaign_id"
    else:
        expression += ", campaign_id = :campaign"
        values[":campaign"] = campaign
    condition = "(attribute_not_exists(state_rank) OR state_rank < :rank)"
    if stop.operator_may_lift:
        # An operator lifted an earlier block or bounce at lifted_at: an event from before it is stale.
        condition += " AND (attribute_not_exists(lifted_at) OR lifted_at < :since)"
    return _update(key, expression, condition, values) is not None


def record_soft_bounce(address: str, message_id: str, *, at: datetime, why: str, limit: int) -> bool:
    """Count a soft bounce of the SES message ``message_id`` to ``address``, once per message; ``True``
    when it made the address ``bounced`` (``limit`` distinct messages soft-bounced).

    The set keeps at most ``limit`` ids. A duplicate (or a retry after a crash between the count and the
    stop) reads the count and records the stop if the limit is reached, so no crash loses it.
    """
    if not isinstance(message_id, str) or not 0 < len(message_id) <= _MESSAGE_ID_CHARS:
        raise MalformedFieldError("message_id", f"not an SES message id of 1-{_MESSAGE_ID_CHARS} characters")
    if not _MESSAGE_ID.fullmatch(message_id):
        raise MalformedFieldError("message_id", "not printable ASCII without spaces")
    if limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    key = address_key(address)
    counted = _update(
        key,
        "SET #kind = if_not_exists(#kind, :kind), #state = if_not_exists(#state, :ok), "
        "state_rank = if_not_exists(state_rank, :zero), updated_at = :now ADD soft_bounce_messages :ids",
        "attribute_not_exists(soft_bounce_messages) OR "
        "(NOT contains(soft_bounce_messages, :id) AND size(soft_bounce_messages) < :limit)",
        {
            ":kind": "address",
            ":ok": State.OK.value,
            ":zero": 0,
            ":now": clock.iso(),
            ":ids": {message_id},
            ":id": message_id,
            ":limit": limit,
        },
        ReturnValues="ALL_NEW",
    )
    if counted is not None:
        messages = from_item(counted.get("Attributes", {})).get("soft_bounce_messages", set())
    else:
        messages = _soft_bounces(key)
    if len(messages) < limit:
        return False
    detail = clean_why(why)
    reason = f"{limit} soft bounces" + (f"; last: {detail}" if detail else "")
    return record_stop(key, State.BOUNCED, at=at, why=reason, source=Source.SES)


def _soft_bounces(key: str) -> set[str]:
    response = clients.dynamodb().get_item(
        TableName=config.contacts_table(),
        Key={KEY: to_av(key)},
        ConsistentRead=True,
        ProjectionExpression="soft_bounce_messages",
    )
    return set(from_item(response.get("Item", {})).get("soft_bounce_messages", set()))


def record_contacted(address: str, campaign_id: str, at: datetime) -> bool:
    """Note that ``campaign_id`` sent to ``address`` at ``at``; ``False`` (nothing changed) when the
    record already names a contact at that time or later."""
    moment = utc_iso(at)
    return (
        _update(
            address_key(address),
            "SET #kind = if_not_exists(#kind, :kind), #state = if_not_exists(#state, :ok), "
            "state_rank = if_not_exists(state_rank, :zero), last_contacted_at = :at, "
            "last_campaign_id = :campaign, updated_at = :now",
            "attribute_not_exists(last_contacted_at) OR last_contacted_at < :at",
            {
                ":kind": "address",
                ":ok": State.OK.value,
                ":zero": 0,
                ":at": moment,
                ":campaign": _campaign(campaign_id),
                ":now": clock.iso(),
            },
        )
        is not None
    )


def unblock(key: str, *, at: datetime, why: str) -> bool:
    """The operator's lift of a ``blocked`` or ``bounced`` record back to ``ok``; ``False`` (nothing
    changed) for any other state: an opt-out or a complaint is never lifted."""
    liftable = sorted(state.rank for state in State if state.operator_may_lift)
    names = [f":r{i}" for i in range(len(liftable))]
    return (
        _update(
            key,
            "SET #kind = :kind, #state = :ok, state_rank = :zero, #since = :since, #why = :why, "
            "#source = :source, lifted_at = :since, recorded_at = :recorded, updated_at = :now "
            "REMOVE soft_bounce_messages, campaign_id",
            f"state_rank IN ({', '.join(names)})",
            {
                ":kind": kind_of_key(key),
                ":ok": State.OK.value,
                ":zero": 0,
                ":since": utc_iso(at),
                ":why": clean_why(why),
                ":source": Source.OPERATOR.value,
                ":now": clock.iso(),
                ":recorded": _recorded_now(),
                **dict(zip(names, liftable, strict=True)),
            },
        )
        is not None
    )
