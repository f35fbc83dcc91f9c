"""The verbs that change a task, each applying its rule of ``rules.RULES`` as one conditional write.

A status change runs in one TransactWriteItems together with the job's counter shard, so a duplicate
delivery whose condition fails changes neither. A rule that keeps the status is a single conditional
update. A write refused for its condition raises ``TransitionRejectedError``: someone else moved the
task first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from botocore.exceptions import ClientError

from outreach import clients, clock, config
from outreach.email_task import parse_utc_iso
from outreach.errors import TaskNotFoundError, TransitionRejectedError
from outreach.task_model import (
    ALLOWED_TRANSITIONS,
    EmailFields,
    MalformedTask,
    Status,
    Task,
    open_key,
    shard_of,
)
from outreach.task_store.campaign_open import CAMPAIGN_OPEN_KEY, campaign_key_fields
from outreach.task_store.counters import counter_shard, counter_update, first_failures, task_deltas
from outreach.task_store.items import is_condition_failure, to_av, to_avs
from outreach.task_store.open_emails import OpenEmail
from outreach.task_store.reads import get_task
from outreach.task_store.rules import MAY_HAVE_BEEN_SENT, RULES, Holder, Rule, bound_values, holder_condition

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

TERMINAL_RETENTION_SECONDS = 90 * 24 * 3600
LAST_ERROR_CHARS = 500
FAILURE_REASON_CHARS = 1000


@dataclass(frozen=True)
class _Seen:
    """What the caller read of the row: what the write's condition holds it to."""

    task_id: str
    kind: str
    job_id: str | None
    status: Status | None
    updated_at: str | None
    lease_owner: str | None
    open_shard: int | None
    step: int | None = None
    """An email task's step (its counters count per step too)."""
    failure_reason: str | None = None

    @classmethod
    def of(cls, task: Task | MalformedTask | OpenEmail) -> _Seen:
        if isinstance(task, OpenEmail):
            return cls(
                task.task_id, task.kind, task.job_id, task.status, task.updated_at, task.lease_owner,
                task.open_shard, task.step, task.failure_reason,
            )  # fmt: skip
        if not isinstance(task, Task):
            # A malformed row only ever leaves the index (fail_malformed): its shard is never written.
            return cls(task.task_id, task.kind, task.job_id, task.status, task.updated_at, None, None)
        owner = task.lease.owner if task.lease is not None else None
        step = task.email.step if task.email is not None else None
        return cls(
            task.task_id, task.kind, task.job_id, task.status, task.updated_at, owner, task.open_shard,
            step, task.failure_reason,
        )  # fmt: skip

    def shard(self) -> int:
        """The ``open-tasks`` shard the task stays in: the one its row names; for a row without one
        (a terminal task an operator requeues), the one its id falls in, as at creation."""
        if self.open_shard is not None:
            return self.open_shard
        return shard_of(self.task_id, config.open_index_shards())

    def deltas(self, status: Status, to: Status, fields: Mapping[str, Any]) -> dict[str, int]:
        """What moving from ``status`` to ``to`` (setting ``fields``) adds to the task's counter shard."""
        after = fields.get("failure_reason", self.failure_reason)
        return task_deltas(self.step, status, to, reason_before=self.failure_reason, reason_after=after)

    def firsts(self, to: Status, fields: Mapping[str, Any]) -> dict[str, str]:
        """The example of its reason group the move offers the shard (entering Failed)."""
        return first_failures(self.task_id, to, fields.get("failure_reason", self.failure_reason))


def _refused(rule: Rule, seen: _Seen, status: Status) -> bool:
    """Whether ``rule`` cannot apply to the row as read, so it is refused without a write."""
    if rule.holder is Holder.LEASE_HOLDER and seen.lease_owner is None:
        return True
    if status not in rule.from_statuses:
        return True
    if rule.to is not None and not rule.override and rule.to not in ALLOWED_TRANSITIONS[status]:
        return True
    if rule.to is not None and rule.to is not status and seen.job_id is None:
        return True  # cannot be counted
    return seen.updated_at is None


def apply(
    rule: Rule, task: Task | MalformedTask, fields: Mapping[str, Any] | None = None, **values: Any
) -> None:
    """Run ``rule`` on ``task`` as read, setting ``fields`` (exactly the rule's ``sets``).

    ``values`` binds what the holder condition names beyond what was read (``now``, ``message``,
    ``receive``).
    """
    seen, status, update = rule_update(rule, task, fields, **values)
    try:
        if rule.to is None:
            clients.dynamodb().update_item(**update)
            return
        actions = [cast("TransactWriteItemTypeDef", {"Update": update})]
        if rule.to is not status and seen.job_id is not None:
            deltas, firsts = seen.deltas(status, rule.to, fields or {}), seen.firsts(rule.to, fields or {})
            shard = counter_shard(seen.task_id)
            actions.append(counter_update(update["TableName"], seen.job_id, shard, deltas, firsts))
        clients.dynamodb().transact_write_items(TransactItems=actions)
    except ClientError as exc:
        if is_condition_failure(exc):
            raise TransitionRejectedError(seen.task_id, rule.verb) from exc
        raise


def rule_update(
    rule: Rule, task: Task | MalformedTask | OpenEmail, fields: Mapping[str, Any] | None = None, **values: Any
) -> tuple[_Seen, Status, dict[str, Any]]:
    """The conditional ``Update`` that applies ``rule`` to ``task`` as read (what ``apply`` writes), with
    what was read and the status it was read in; ``TransitionRejectedError`` without a write when the
    rule cannot apply to the row as read."""
    given = dict(fields or {})
    if set(given) != set(rule.sets):
        raise ValueError(f"{rule.verb} sets {sorted(rule.sets)}, got {sorted(given)}")
    seen = _Seen.of(task)
    status = seen.status
    if status is None or _refused(rule, seen, status):
        raise TransitionRejectedError(seen.task_id, rule.verb)
    now = clock.iso()
    set_values = {**given, **{name: now for name in rule.stamped}}
    removals = list(rule.removes)
    if rule.to is not None:
        set_values["status"] = rule.to.value
    set_values["updated_at"] = now
    if rule.to is not None and rule.to.is_terminal:
        set_values["expires_at"] = int(clock.now()) + TERMINAL_RETENTION_SECONDS
        removals += ["open_key", CAMPAIGN_OPEN_KEY]  # out of both sparse indexes (an email's second)
    elif rule.to is not None:
        set_values["open_key"] = open_key(seen.kind, rule.to, seen.shard())
        set_values.update(campaign_key_fields(seen.kind, seen.job_id, rule.to, seen.shard()))
    names = {"#status": "status"}
    bound: dict[str, Any] = {}
    assignments = []
    for i, (name, value) in enumerate(set_values.items()):
        names[f"#s{i}"], bound[f":s{i}"] = name, value
        assignments.append(f"#s{i} = :s{i}")
    expression = "SET " + ", ".join(assignments)
    if removals:
        expression += " REMOVE " + ", ".join(removals)
    if rule.adds:
        names.update({f"#a{i}": name for i, name in enumerate(rule.adds)})
        expression += " ADD " + ", ".join(f"#a{i} :one" for i in range(len(rule.adds)))
        bound[":one"] = 1
    held = holder_condition(rule.holder, status=status, kind=seen.kind)
    available = {
        ":owner": seen.lease_owner,
        ":seen": seen.updated_at,
        ":now": int(clock.now()),
        ":kind": seen.kind,
        ":unknown": MAY_HAVE_BEEN_SENT,
        **{f":{name}": value for name, value in values.items()},
    }
    bound.update(bound_values(held, available))
    bound[":expected"] = status.value
    table = config.tasks_table()
    update: dict[str, Any] = {
        "TableName": table,
        "Key": {"task_id": to_av(seen.task_id)},
        "UpdateExpression": expression,
        "ConditionExpression": f"#status = :expected AND ({held})",
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": to_avs(bound),
    }
    return seen, status, update


def _reread(task_id: str) -> Task:
    refreshed = get_task(task_id)
    if refreshed is None:
        raise TaskNotFoundError(task_id)
    return refreshed


# ---- scrape tasks ---------------------------------------------------------------------------


def claim(task: Task, *, message_id: str, receive_count: int, lease_seconds: int) -> Task:
    """Move a task to Running for one delivery; only one live delivery can hold it.

    A Pending task can be claimed once. A Running task can be claimed again when its lease has
    expired (its worker crashed) or by a later receive of the same message (its worker recorded a
    retry, ``record_retry``, or lost the claim on a retryable failure).
    """
    now = clock.now()
    lease = {
        "lease_owner": f"{message_id}#{receive_count}",
        "lease_message": message_id,
        "lease_receive": receive_count,
        "lease_expires_at": int(now) + lease_seconds,
        "attempts": task.attempts + 1,
    }
    apply(RULES["claim"], task, lease, now=int(now), message=message_id, receive=receive_count)
    return _reread(task.task_id)


def record_retry(task: Task, *, error: str) -> None:
    """Record a retryable failure and end the lease at once; the task stays Running (holder only).

    Staying Running, nothing re-dispatches it; with its lease expired rather than removed, the
    message's next receive (or, if the message is lost, the reconciler) can claim it again at once.
    ``error`` (reason and short detail of the failure) is kept as ``last_error``, so a task the
    reconciler fails after its attempts, and any look at the DLQ, says why.
    """
    apply(RULES["record retry"], task, {"lease_expires_at": 0, "last_error": error[:LAST_ERROR_CHARS]})


def finish(task: Task, *, result_key: str, summary: Mapping[str, Any]) -> None:
    """Running -> Finished, only by the delivery holding the claim (``task`` as returned by claim)."""
    apply(RULES["finish"], task, {"result_key": result_key, "summary": dict(summary)})


def fail(task: Task, *, reason: str) -> None:
    """Running -> Failed with a reason, only by the delivery holding the claim."""
    apply(RULES["fail"], task, {"failure_reason": reason[:FAILURE_REASON_CHARS]})


# ---- the reconcilers ------------------------------------------------------------------------


def mark_redispatched(task: Task) -> None:
    """Note that a Pending task's message is being sent again (reconciler), before it is sent.

    The write is conditional on the task being unchanged since it was read, so of two overlapping
    reconciler runs only one sends; the new ``updated_at`` keeps the next runs away until the
    threshold has passed again. Status and counters do not change, and the stream filter ignores a
    Pending -> Pending change, so the dispatcher sends nothing extra.
    """
    apply(RULES["mark redispatched"], task)


def requeue_stuck(task: Task) -> None:
    """Running -> Pending for a task whose worker and message are gone (reconciler).

    Only if the task is unchanged since it was read and holds no live lease; the stream then
    dispatches it again. The row keeps (or, written before rows named one, gets) its tenant
    (``Task.tenant``), which the pipe's message group reads.
    """
    apply(RULES["requeue stuck"], task, {"message_group": task.tenant})


def fail_after_attempts(task: Task, *, max_attempts: int) -> None:
    """Running -> Failed (``abandoned``) for a task that used up its attempts (reconciler)."""
    reason = f"abandoned: {task.attempts} of {max_attempts} attempts used"
    if task.last_error:
        reason += f"; last error {task.last_error}"
    apply(RULES["fail after attempts"], task, {"failure_reason": reason[:FAILURE_REASON_CHARS]})


def fail_stale(task: Task, *, reason: str) -> None:
    """Pending or Running -> Failed with ``reason`` (the email reconciler: ``too_late``,
    ``delivery_unknown``), only if nobody changed the task since it was read and no lease is live."""
    apply(RULES["fail stale"], task, {"failure_reason": reason[:FAILURE_REASON_CHARS]})


def fail_malformed(row: MalformedTask) -> None:
    """An open row that is not a valid task -> ``Failed`` (``malformed_task_row: <field>: <why>``).

    Conditional on the status and ``updated_at`` that were read, with the counter move, so a row
    changed meanwhile is left as it is (``TransitionRejectedError``). A row whose status or job cannot be
    read cannot be counted and raises ``TransitionRejectedError`` without a write.
    """
    reason = f"malformed_task_row: {row.problem}"[:LAST_ERROR_CHARS]
    apply(RULES["fail malformed"], row, {"failure_reason": reason})


# ---- email tasks ----------------------------------------------------------------------------
# An email is the one side effect that must happen at most once, so an email task is claimed only from
# Pending: a Running email task may have been sent already and is never claimed again (the email
# reconciler moves it to Failed ``delivery_unknown`` once its lease has run out).


def claim_email(task: Task, *, owner: str, lease_seconds: int) -> Task:
    """Pending -> Running for one invocation of the email worker, before anything is sent.

    Of any number of concurrent or repeated invocations exactly one claim succeeds; the others get
    ``TransitionRejectedError`` and must not send.
    """
    lease = {
        "lease_owner": owner,
        "lease_expires_at": int(clock.now()) + lease_seconds,
        "attempts": task.attempts + 1,
    }
    apply(RULES["claim email"], task, lease)
    return _reread(task.task_id)


def finish_email(task: Task, *, ses_message_id: str) -> None:
    """Running -> Finished with SES's message id, only by the invocation holding the claim."""
    apply(RULES["finish email"], task, {"ses_message_id": ses_message_id})


def return_email_to_pending(task: Task, *, error: str) -> None:
    """Running -> Pending after a transient failure before anything was sent (holder only).

    The retry (Lambda's async retry, or the schedule's) then claims it again; ``error`` is kept as
    ``last_error``.
    """
    apply(RULES["return email to pending"], task, {"last_error": error[:LAST_ERROR_CHARS]})


def _moved_later(task: Task, send_at: str, move: str) -> EmailFields:
    """The email fields of ``task``; ``ValueError`` unless ``send_at`` is after its own (a ``move`` of
    an email is always to a later time)."""
    fields = task.email
    if fields is None:
        raise ValueError(f"{task.task_id} is not an email task")
    if parse_utc_iso(send_at) <= fields.send_time:
        raise ValueError(f"a {move} moves an email later, not to {send_at} from {fields.send_at}")
    return fields


def deferral_cause(reason: str | None) -> str:
    """The cause a deferral ``reason`` names, its text before the first ``:`` (``first_contact_limit``,
    ``sending_paused``); empty for none."""
    return (reason or "").partition(":")[0].strip()


def defer_email(task: Task, *, send_at: str, reason: str) -> None:
    """Running -> Pending at the later ``send_at`` for a claimed email the send governor refuses now
    (holder only); ``deferred_reason`` says why. ``deferred_from`` keeps the time the email had before
    the first of its consecutive deferrals for the same cause (``deferral_cause``): a second deferral
    while sending is still paused keeps the time it was due when the pause first held it, so its grace
    period is counted from there, while a pause after a first-contact deferral counts from the time
    that deferral gave it. Never earlier: a ``send_at`` not after the task's raises ``ValueError``
    without a write. The schedule is the caller's to move (``email_schedules``)."""
    fields = _moved_later(task, send_at, "deferral")
    same_cause = fields.deferred_from is not None and deferral_cause(
        fields.deferred_reason
    ) == deferral_cause(reason)
    apply(
        RULES["defer email"],
        task,
        {
            "send_at": send_at,
            "deferred_from": fields.deferred_from if same_cause and fields.deferred_from else fields.send_at,
            "deferred_reason": reason[:FAILURE_REASON_CHARS],
        },
    )


def skip_email(task: Task, *, reason: str) -> None:
    """Running -> Cancelled for a claimed follow-up that must not go out (bounce, complaint,
    suppression), holder only; ``reason`` says which."""
    apply(RULES["skip email"], task, {"failure_reason": reason[:FAILURE_REASON_CHARS]})


def cancel_for_stop(task: Task, *, reason: str) -> None:
    """Pending -> Cancelled for an email to an address the ledger stopped (``contacts.Stop.reason``),
    only while unclaimed; a task claimed meanwhile raises ``TransitionRejectedError`` and is left to its
    worker, which reads the ledger after its claim."""
    apply(RULES["cancel for stop"], task, {"failure_reason": reason[:FAILURE_REASON_CHARS]})


def postpone_email(task: Task, *, send_at: str) -> None:
    """A Pending email moved to the later ``send_at`` (``email_task.utc_iso``), its status kept: an
    out-of-office reply's postponement (``inbound.postpone``). Only while unclaimed and while its
    ``send_at`` is still the one read, so of two postponements only one moves it and a claimed email
    is left to its worker; ``postponed_from`` keeps the time it had. Never earlier than planned: a
    ``send_at`` not after the task's raises ``ValueError`` without a write. The schedule is the
    caller's to move (``email_schedules``)."""
    fields = _moved_later(task, send_at, "postponement")
    apply(
        RULES["postpone email"],
        task,
        {"send_at": send_at, "postponed_from": fields.send_at},
        planned=fields.send_at,
    )
