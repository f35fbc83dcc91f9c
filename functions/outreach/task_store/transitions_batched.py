"""One status-changing rule applied to many tasks in few transactions, each task's condition kept.

``apply_batched`` writes what ``transitions.apply`` would write for each task (the same conditional
``Update``), many tasks to one TransactWriteItems with their counter shard's ``Update`` moved by the
sum of their status changes. The tasks of one transaction all count in one shard, so a transaction
touches one counter item, as a single ``apply`` does, and contends with the workers' transitions of
that campaign no more than they contend with each other. DynamoDB applies a transaction whole or not
at all and names the action that failed (``CancellationReasons``, in the order of the actions)
(https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html):
a task whose condition failed (claimed or moved meanwhile) is rejected and the others written again
without it, so no task changes unless its own condition held, and the counters move by exactly the
tasks that changed. A task in a transaction that another transaction was changing at the same moment
(``TransactionConflict``) is tried again, a few times, then raised for the caller
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html, "Transaction
conflict handling in DynamoDB").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from botocore.exceptions import ClientError

from outreach import clients, config
from outreach.errors import TransitionRejectedError
from outreach.item_size import TRANSACTION_ACTION_LIMIT
from outreach.task_model import Task
from outreach.task_store.counters import counter_shard, counter_update
from outreach.task_store.items import cancellation_codes
from outreach.task_store.open_emails import OpenEmail
from outreach.task_store.rules import Rule
from outreach.task_store.transitions import rule_update

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

# Tasks per transaction: the action limit less the one counter shard's Update.
TASKS_PER_TRANSACTION = TRANSACTION_ACTION_LIMIT - 1
# How often a transaction cancelled only for conflicts with other transactions is written again.
CONFLICT_ATTEMPTS = 5
_CONDITION_FAILED = "ConditionalCheckFailed"
_CONFLICT = "TransactionConflict"


@dataclass
class BatchOutcome:
    """Which tasks the rule moved, and which it left (their condition failed: moved by someone else)."""

    applied: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)


def apply_batched(
    rule: Rule,
    tasks: Sequence[Task | OpenEmail],
    fields: Callable[[Task | OpenEmail], Mapping[str, Any]],
    *,
    on_written: Callable[[Sequence[str]], None] | None = None,
) -> BatchOutcome:
    """Apply ``rule`` (a status change) to every task as read, ``fields(task)`` set on each; the tasks
    each transaction moved are handed to ``on_written`` as soon as it is written.

    A task the rule cannot apply to as read is rejected without a write (as ``apply`` refuses it). An
    error that is neither a failed condition nor a conflict is raised: what was written before it is in
    the outcome the ``on_written`` calls reported.
    """
    if rule.to is None:
        raise ValueError(f"{rule.verb} keeps the status: apply it with transitions.apply")
    outcome = BatchOutcome()
    table = config.tasks_table()
    for chunk in _chunks(tasks):
        pending: list[_Pending] = []
        for task in chunk:
            given = fields(task)
            try:
                seen, status, update = rule_update(rule, task, given)
            except TransitionRejectedError:  # outcome: rejected, as apply would refuse it
                outcome.rejected.append(task.task_id)
                continue
            if status is rule.to or task.job_id is None:
                raise ValueError(f"{rule.verb} of {task.task_id} changes no counted status")
            deltas, firsts = seen.deltas(status, rule.to, given), seen.firsts(rule.to, given)
            pending.append(_Pending(task, update, deltas, firsts))
        written = _write(table, pending, outcome)
        outcome.applied.extend(written)
        if written and on_written is not None:
            on_written(written)
    return outcome


def _chunks(tasks: Sequence[Task | OpenEmail]) -> Iterator[list[Task | OpenEmail]]:
    """The tasks grouped by job and counter shard, at most ``TASKS_PER_TRANSACTION`` a group."""
    groups: dict[tuple[str, int], list[Task | OpenEmail]] = {}
    for task in tasks:
        groups.setdefault((str(task.job_id), counter_shard(task.task_id)), []).append(task)
    for _, group in sorted(groups.items()):
        for start in range(0, len(group), TASKS_PER_TRANSACTION):
            yield group[start : start + TASKS_PER_TRANSACTION]


@dataclass(frozen=True)
class _Pending:
    """A task's ``Update``, what it adds to its counter shard and the examples it offers it."""

    task: Task | OpenEmail
    update: dict[str, Any]
    deltas: Mapping[str, int]
    firsts: Mapping[str, str]


def _write(table: str, pending: list[_Pending], outcome: BatchOutcome) -> list[str]:
    """One transaction of ``pending`` (one job, one shard), rewritten without the tasks whose condition
    failed; the task ids it moved."""
    conflicts = 0
    while pending:
        first = pending[0].task
        assert first.job_id is not None
        actions = [cast("TransactWriteItemTypeDef", {"Update": entry.update}) for entry in pending]
        deltas: Counter[str] = Counter()
        firsts: dict[str, str] = {}
        for entry in pending:
            deltas.update(entry.deltas)
            firsts = {**entry.firsts, **firsts}  # the first task of the transaction for each group
        shard = counter_shard(first.task_id)
        actions.append(counter_update(table, first.job_id, shard, deltas, firsts))
        try:
            clients.dynamodb().transact_write_items(TransactItems=actions)
        except ClientError as exc:
            codes = cancellation_codes(exc)[: len(pending)]
            failed = {i for i, code in enumerate(codes) if code == _CONDITION_FAILED}
            conflicted = any(code == _CONFLICT for code in codes)
            if not failed and not (conflicted and conflicts < CONFLICT_ATTEMPTS):
                raise
            conflicts += 0 if failed else 1
            outcome.rejected.extend(pending[i].task.task_id for i in sorted(failed))
            pending = [entry for i, entry in enumerate(pending) if i not in failed]
            continue
        return [entry.task.task_id for entry in pending]
    return []
