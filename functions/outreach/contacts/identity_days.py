"""A sending identity's emails on one UTC day: a counter record on the ledger, taken before each send.

The record ``identity#<domain>#<YYYY-MM-DD>`` (``keys.identity_day_key``) holds ``sent``, the emails of
every campaign counted against the identity's warm-up cap that day. ``take_identity_send`` counts one
more with a single UpdateItem conditioned on the count still being below the cap
(``attribute_not_exists(sent) OR sent < :cap``): DynamoDB applies a conditional write to one item
atomically, so however many workers take at once, no more than ``cap`` succeed on a day
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html,
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/WorkingWithItems.html#WorkingWithItems.AtomicCounters).

A count is taken before SES is called and is not given back: a worker that dies between the two may
have sent, and an email whose sending is unknown counts as sent. A send SES then refuses (or a retry
of the same task after a transient error, which takes another) keeps its count: the day can end with
fewer emails than its cap, never more. Each record carries ``expires_at`` ``RETAIN_DAYS`` after its
day, and the ledger's TTL deletes it (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from outreach import clients, config
from outreach.contacts.keys import identity_day_key
from outreach.contacts.reads import KEY
from outreach.task_store.items import is_condition_failure, to_av, to_avs

COUNT = "sent"
EXPIRES_AT = "expires_at"
# How long a day's count stays on the ledger after its day, for a person to read.
RETAIN_DAYS = 7
# The condition of a take: no count yet, or fewer than the cap.
UNDER_CAP = f"attribute_not_exists({COUNT}) OR {COUNT} < :cap"


def _expires_at(day: date) -> int:
    after = day + timedelta(days=1 + RETAIN_DAYS)
    return int(datetime(after.year, after.month, after.day, tzinfo=UTC).timestamp())


def take_identity_send(sending_domain: str, day: date, cap: int) -> bool:
    """Count one more email of ``sending_domain`` on the UTC ``day`` if fewer than ``cap`` are counted;
    ``False`` (nothing written) when the day has its cap already."""
    if cap < 1:  # an account quota of 0: no email at all, and a first take would find no count
        return False
    values: dict[str, Any] = {
        ":one": 1,
        ":cap": cap,
        ":kind": "identity",
        ":expires": _expires_at(day),
    }
    try:
        clients.dynamodb().update_item(
            TableName=config.contacts_table(),
            Key={KEY: to_av(identity_day_key(sending_domain, day))},
            UpdateExpression=(
                f"ADD {COUNT} :one SET #kind = if_not_exists(#kind, :kind), "
                f"{EXPIRES_AT} = if_not_exists({EXPIRES_AT}, :expires)"
            ),
            ConditionExpression=UNDER_CAP,
            ExpressionAttributeNames={"#kind": "kind"},
            ExpressionAttributeValues=to_avs(values),
        )
    except ClientError as exc:
        if is_condition_failure(exc):
            return False
        raise
    return True
