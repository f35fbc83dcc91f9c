"""The transition rules, declared once: for each verb its from-statuses, to-status, holder condition
and the fields it sets, adds and removes.

``transitions.apply`` runs a rule as one conditional write, and nothing else changes a task's status
(job creation only puts new Pending rows). Every rule but the operator's requeue stays inside
``task_model.ALLOWED_TRANSITIONS``, so no verb of the pipeline leaves a terminal status. A rule with
``to=None`` keeps the status (and so the counters): it is an update, not a status change.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from outreach.task_model import OPEN, TERMINAL, Kind, Status

LEASE_FIELDS = ("lease_owner", "lease_message", "lease_receive", "lease_expires_at")
# A failure reason that does not prove the email was not sent: the worker claimed it and never
# recorded the outcome (the email reconciler's ``delivery_unknown``), so SES may have it.
MAY_HAVE_BEEN_SENT = "delivery_unknown"


class Holder(StrEnum):
    """Who may apply a rule: the condition the write holds besides the status that was read."""

    ANYONE = "anyone"
    """Any caller (``attribute_exists(task_id)``)."""
    UNCLAIMED = "unclaimed"
    """Only while nobody holds a lease."""
    CLAIMABLE = "claimable"
    """Pending: nobody holds a lease; Running: the lease ran out, or a later receive of its message."""
    LEASE_HOLDER = "lease holder"
    """Only the delivery holding the lease (``task`` as its claim returned it)."""
    UNCHANGED = "unchanged"
    """Only if nobody changed the task since it was read (``updated_at``)."""
    UNCHANGED_UNHELD = "unchanged, unheld"
    """Unchanged since it was read, and no live lease."""
    SAME_KIND = "same kind"
    """The kind that was read (an operator's write)."""
    UNCLAIMED_AT_SEND_TIME = "unclaimed, at the send time read"
    """Only while nobody holds a lease, and while ``send_at`` is still the one read (``:planned``)."""
    UNCHANGED_UNSENT = "unchanged, never sent"
    """Unchanged and of the kind read; an email task also with no SES message id and a failure reason
    that proves it was not sent (not ``delivery_unknown``)."""


@dataclass(frozen=True)
class Rule:
    verb: str
    from_statuses: frozenset[Status]
    to: Status | None
    holder: Holder
    sets: tuple[str, ...] = ()
    removes: tuple[str, ...] = ()
    adds: tuple[str, ...] = ()
    """Numbers the write adds one to."""
    stamped: tuple[str, ...] = ()
    """Fields set to the write's time (as ``updated_at`` is)."""
    override: bool = False
    """An operator's way out of a terminal status, outside ``ALLOWED_TRANSITIONS``."""


_RUNNING = frozenset({Status.RUNNING})
_PENDING = frozenset({Status.PENDING})

RULES: Mapping[str, Rule] = {
    rule.verb: rule
    for rule in (
        # ---- scrape tasks: claimed again after a retryable failure or a lapsed lease
        Rule(
            "claim",
            OPEN,
            Status.RUNNING,
            Holder.CLAIMABLE,
            sets=(*LEASE_FIELDS, "attempts"),
        ),
        Rule("record retry", _RUNNING, None, Holder.LEASE_HOLDER, sets=("lease_expires_at", "last_error")),
        Rule(
            "finish", _RUNNING, Status.FINISHED, Holder.LEASE_HOLDER, ("result_key", "summary"), LEASE_FIELDS
        ),
        Rule("fail", _RUNNING, Status.FAILED, Holder.LEASE_HOLDER, ("failure_reason",), LEASE_FIELDS),
        # ---- the reconcilers
        Rule("mark redispatched", _PENDING, None, Holder.UNCHANGED, adds=("redispatches",)),
        # sets the task's tenant (its row's, or its job for a row written before rows named one), so
        # the pipe's message group path finds it on every task made Pending again
        Rule(
            "requeue stuck",
            _RUNNING,
            Status.PENDING,
            Holder.UNCHANGED_UNHELD,
            sets=("message_group",),
            removes=LEASE_FIELDS,
        ),
        Rule(
            "fail after attempts",
            _RUNNING,
            Status.FAILED,
            Holder.UNCHANGED_UNHELD,
            ("failure_reason",),
            LEASE_FIELDS,
        ),
        Rule("fail stale", OPEN, Status.FAILED, Holder.UNCHANGED_UNHELD, ("failure_reason",), LEASE_FIELDS),
        Rule("fail malformed", OPEN, Status.FAILED, Holder.UNCHANGED, ("failure_reason",), LEASE_FIELDS),
        # ---- email tasks: claimed only from Pending, so an email is sent at most once
        Rule(
            "claim email",
            _PENDING,
            Status.RUNNING,
            Holder.UNCLAIMED,
            sets=("lease_owner", "lease_expires_at", "attempts"),
        ),
        Rule(
            "finish email", _RUNNING, Status.FINISHED, Holder.LEASE_HOLDER, ("ses_message_id",), LEASE_FIELDS
        ),
        Rule(
            "return email to pending",
            _RUNNING,
            Status.PENDING,
            Holder.LEASE_HOLDER,
            ("last_error",),
            LEASE_FIELDS,
        ),
        Rule(
            "skip email", _RUNNING, Status.CANCELLED, Holder.LEASE_HOLDER, ("failure_reason",), LEASE_FIELDS
        ),
        # ---- the send governor: a claimed email moved later, back to Pending, by its worker
        Rule(
            "defer email",
            _RUNNING,
            Status.PENDING,
            Holder.LEASE_HOLDER,
            sets=("send_at", "deferred_from", "deferred_reason"),
            removes=LEASE_FIELDS,
            stamped=("deferred_at",),
        ),
        # ---- a contact's stop (unsubscribe, bounce, complaint): every open email to the address,
        # only while nobody has claimed it (a claimed one is its worker's, which reads the ledger)
        Rule("cancel for stop", _PENDING, Status.CANCELLED, Holder.UNCLAIMED, ("failure_reason",)),
        # ---- an out-of-office reply: an unclaimed email moved later, past the recipient's absence
        Rule(
            "postpone email",
            _PENDING,
            None,
            Holder.UNCLAIMED_AT_SEND_TIME,
            sets=("send_at", "postponed_from"),
            stamped=("postponed_at",),
        ),
        # ---- an operator's decisions (the `outreach` command line)
        Rule("cancel", OPEN, Status.CANCELLED, Holder.ANYONE, ("failure_reason",), LEASE_FIELDS),
        Rule("operator cancel", OPEN, Status.CANCELLED, Holder.SAME_KIND, ("failure_reason",), LEASE_FIELDS),
        Rule(
            "operator requeue",
            _RUNNING | TERMINAL,
            Status.PENDING,
            Holder.UNCHANGED_UNSENT,
            sets=("override_by", "override_reason", "override_from"),
            removes=("result_key", "summary", "failure_reason", "expires_at", *LEASE_FIELDS),
            stamped=("override_at",),
            override=True,
        ),
    )
}


def holder_condition(holder: Holder, *, status: Status, kind: str) -> str:
    """The condition text of ``holder`` for a task read in ``status``, of ``kind``.

    It binds ``:owner`` (the lease read), ``:seen`` (``updated_at`` read), ``:now`` (epoch seconds),
    ``:kind``, ``:message`` and ``:receive`` (the claiming delivery), ``:planned`` (the send time read)
    and ``:unknown``, as it needs.
    """
    if holder is Holder.ANYONE:
        return "attribute_exists(task_id)"
    if holder is Holder.UNCLAIMED or (holder is Holder.CLAIMABLE and status is Status.PENDING):
        return "attribute_not_exists(lease_owner)"
    if holder is Holder.UNCLAIMED_AT_SEND_TIME:
        return "attribute_not_exists(lease_owner) AND send_at = :planned"
    if holder is Holder.CLAIMABLE:
        return "lease_expires_at < :now OR (lease_message = :message AND lease_receive < :receive)"
    if holder is Holder.LEASE_HOLDER:
        return "lease_owner = :owner"
    if holder is Holder.UNCHANGED:
        return "updated_at = :seen"
    if holder is Holder.UNCHANGED_UNHELD:
        return "updated_at = :seen AND (attribute_not_exists(lease_expires_at) OR lease_expires_at < :now)"
    if holder is Holder.SAME_KIND:
        return "kind = :kind"
    condition = "updated_at = :seen AND kind = :kind"
    if kind == Kind.EMAIL.value:
        condition += (
            " AND attribute_not_exists(ses_message_id) AND attribute_exists(failure_reason)"
            " AND NOT begins_with(failure_reason, :unknown)"
        )
    return condition


def bound_values(condition: str, available: Mapping[str, Any]) -> dict[str, Any]:
    """The values of ``available`` that ``condition`` names (DynamoDB refuses an unused value)."""
    return {name: value for name, value in available.items() if re.search(rf"{re.escape(name)}\b", condition)}
