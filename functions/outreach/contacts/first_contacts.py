"""An address's first-contact slots on its ledger record: read in the worker's one read, taken atomically.

The address record (``address#...``) holds ``first_contacts``, a map of the email task that took each
slot to the epoch second it was taken, and ``first_contacts_version``, a number each take raises by one.
A worker that read version ``v`` takes a slot with one UpdateItem conditioned on the version still
being ``v`` (``attribute_not_exists`` for a record that has none yet). Of two workers, of two
campaigns, that read the same version only one write succeeds; the other reads the record again and
decides on what the first took, so two first contacts inside the gap cannot both pass
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html).

A slot is taken before SES is called and never given back: a worker that dies between the two may
have sent, and an email whose sending is unknown counts as sent (its task stays Running and is never
tried again). A task that is tried again holds a slot that did not go out: it was refused as not sent
(a transient error, a paused sending) or deferred after the take (the warm-up cap). Its slot is taken
again at the moment of the new try, judged against the others alone, so the gap and the cap count
from when the email really goes out: a first contact another campaign sent meanwhile defers it. In
the same second it holds already, it is allowed without a write. Slots older than the rule's memory
(the longer of gap and period) are dropped on the next take, so the map stays small.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from botocore.exceptions import ClientError

from outreach import clients, clock, config
from outreach.contacts.first_contact_rule import FirstContactRule
from outreach.contacts.keys import address_key
from outreach.contacts.reads import KEY, records
from outreach.errors import LedgerContendedError, MalformedFieldError
from outreach.task_store.items import is_condition_failure, to_av, to_avs

SLOTS = "first_contacts"
VERSION = "first_contacts_version"
# Far more slots than any rule keeps inside its memory; a record holding more was not written here.
MAX_SLOTS = 1_000
# Conditional writes a worker tries before it gives the claim back to the retries.
_ATTEMPTS = 5


@dataclass(frozen=True)
class FirstContacts:
    """The first-contact slots a record holds (task id -> epoch second) and its version (0: none yet)."""

    taken: Mapping[str, float] = field(default_factory=dict)
    version: int = 0

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> FirstContacts:
        """The slots of a stored record; ``MalformedFieldError`` naming the field a writer did not store."""
        raw_version = item.get(VERSION, 0)
        if not isinstance(raw_version, int | Decimal) or raw_version != int(raw_version) or raw_version < 0:
            raise MalformedFieldError(VERSION, "not a whole number >= 0")
        raw = item.get(SLOTS, {})
        if not isinstance(raw, Mapping) or len(raw) > MAX_SLOTS:
            raise MalformedFieldError(SLOTS, f"not a map of at most {MAX_SLOTS} slots")
        taken: dict[str, float] = {}
        for task_id, moment in raw.items():
            if not isinstance(moment, int | Decimal) or isinstance(moment, bool):
                raise MalformedFieldError(SLOTS, "a slot's moment is not a number")
            taken[str(task_id)] = float(moment)
        return cls(taken, int(raw_version))


def _read(address: str) -> FirstContacts:
    own = address_key(address)
    return FirstContacts.from_item(records([own]).get(own, {}))


def _write(address: str, slots: Mapping[str, int], seen_version: int) -> bool:
    """Store ``slots`` if the record's version is still ``seen_version``; ``False`` when it is not."""
    condition = f"attribute_not_exists({VERSION})" if seen_version == 0 else f"{VERSION} = :seen"
    values: dict[str, Any] = {
        ":slots": dict(slots),
        ":next": seen_version + 1,
        ":kind": "address",
        ":ok": "ok",
        ":zero": 0,
        ":now": clock.iso(),
    }
    if seen_version:
        values[":seen"] = seen_version
    try:
        clients.dynamodb().update_item(
            TableName=config.contacts_table(),
            Key={KEY: to_av(address_key(address))},
            UpdateExpression=(
                f"SET {SLOTS} = :slots, {VERSION} = :next, #kind = if_not_exists(#kind, :kind), "
                "#state = if_not_exists(#state, :ok), state_rank = if_not_exists(state_rank, :zero), "
                "updated_at = :now"
            ),
            ConditionExpression=condition,
            ExpressionAttributeNames={"#kind": "kind", "#state": "state"},
            ExpressionAttributeValues=to_avs(values),
        )
    except ClientError as exc:
        if is_condition_failure(exc):
            return False
        raise
    return True


def take_first_contact(
    address: str, task_id: str, seen: FirstContacts, rule: FirstContactRule, at: float
) -> float | None:
    """Take ``address``'s first-contact slot for ``task_id`` at ``at`` (again, for a task that holds one
    from an earlier try); ``None`` when it is taken, else the earliest moment the rule allows one
    (``rule.next_free``).

    ``seen`` is what the caller read of the record; a write refused because the record changed reads it
    again and decides anew. ``LedgerContendedError`` after ``_ATTEMPTS`` refused writes.
    """
    moment = math.ceil(at)  # slots are whole seconds; deciding on the stored second keeps them exact
    current = seen
    for _ in range(_ATTEMPTS):
        if current.taken.get(task_id, -math.inf) >= moment:
            return None
        others = {other: when for other, when in current.taken.items() if other != task_id}
        free = rule.next_free(list(others.values()), moment)
        if free > moment:
            return free
        kept = {other: int(when) for other, when in others.items() if when > moment - rule.memory_seconds}
        kept[task_id] = moment
        if _write(address, kept, current.version):
            return None
        current = _read(address)
    raise LedgerContendedError(f"first-contact slot of one address refused {_ATTEMPTS} conditional writes")
