"""A job's progress counters: tasks per status, split over shards, moved with each status change.

Counters are split over ``COUNTER_SHARDS`` items per job so 140 concurrent scrapers do not contend for
one item. A shard's ``Update`` runs in the same transaction as the status change it counts, so the
counts move exactly when the status moves (never a bare ``ADD`` that a retry could repeat).

A task once Failed or Cancelled counts in the same ``Update`` under its status and reason group, the
failure reason's text before its first ``:`` when that is a lower-case name such as ``contact_stopped``
or ``dns_not_found``, else ``other`` (free text never becomes an attribute name): an email task under
its step too (``reasons_s<step>_<status>_<group>``), a scrape task without one
(``reasons_<status>_<group>``). An email task also counts under its step and status
(``steps_s<step>_<status>``). A task entering Failed offers itself as its group's example in the same
``Update`` (``first_Failed_<group>`` = ``<time>#<task id>``, set only if the shard holds none yet), so
each shard keeps the first task that failed for each reason. So ``campaign status`` reads a campaign's
steps, and ``job status`` a job's failure groups, from its shards, never from its tasks. Rows written
before these counters existed are not in them (``step_counts`` and ``failure_counts`` say how many
are missing).

The groups are bounded by the code that words the reasons: the scraper's are a fixed set of names
plus ``http_<status>`` for a final 4xx (at most a few hundred codes), the reconcilers' and the email
worker's fixed names; each group costs a shard two attributes of under 100 bytes, far inside the
400 KB item limit (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Constraints.html#limits-items).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from outreach import clock
from outreach.task_model import Status, shard_of
from outreach.task_store.items import batch_get, to_av

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

COUNTER_SHARDS = 10
_REASON_GROUP = re.compile(r"[a-z][a-z0-9_]{0,39}")
_STEP_COUNTER = re.compile(r"steps_s([1-9][0-9]*)_([A-Za-z]+)")
_REASON_COUNTER = re.compile(r"reasons_(?:s([1-9][0-9]*)_)?([A-Za-z]+)_([a-z][a-z0-9_]*)")
_FIRST_FAILED = re.compile(r"first_Failed_([a-z][a-z0-9_]*)")
_WITH_REASON = (Status.FAILED, Status.CANCELLED)
_STATUS_NAMES = frozenset(status.value for status in Status)


def counter_shard(task_id: str) -> int:
    """The shard of its job's counters a task counts in."""
    return shard_of(task_id, COUNTER_SHARDS)


def counter_key(job_id: str, shard: int) -> str:
    """Key of one counter shard of a job."""
    return f"job#{job_id}#{shard}"


def counter_update(
    table: str,
    job_id: str,
    shard: int,
    deltas: Mapping[Status, int] | Mapping[str, int],
    firsts: Mapping[str, str] | None = None,
) -> TransactWriteItemTypeDef:
    """The transaction action that adds ``deltas`` (per status, or per counter name such as an email
    event's ``events_s<step>_<kind>``; zeros left out) to one shard, and sets each of ``firsts`` (a
    group's example, ``first_failures``) the shard does not hold yet."""
    changes = {str(name): delta for name, delta in deltas.items() if delta}
    names = {f"#c{i}": name for i, name in enumerate(changes)}
    values = {f":d{i}": to_av(delta) for i, delta in enumerate(changes.values())}
    values[":job"] = to_av(job_id)
    values[":kind"] = to_av("job_counter")
    adds = ", ".join(f"#c{i} :d{i}" for i in range(len(changes)))
    sets = "".join(f", #f{i} = if_not_exists(#f{i}, :f{i})" for i in range(len(firsts or {})))
    for i, (name, value) in enumerate((firsts or {}).items()):
        names[f"#f{i}"], values[f":f{i}"] = name, to_av(value)
    return {
        "Update": {
            "TableName": table,
            "Key": {"task_id": to_av(counter_key(job_id, shard))},
            "UpdateExpression": f"SET job_id = :job, kind = :kind{sets} ADD {adds}",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
        }
    }


def job_counts(job_id: str) -> dict[str, int]:
    """Tasks per status for a job, summed over the counter shards (exact: see the module docstring)."""
    totals = {status.value: 0 for status in Status}
    for row in batch_get([counter_key(job_id, shard) for shard in range(COUNTER_SHARDS)]):
        for status in Status:
            totals[status.value] += int(row.get(status.value, 0))
    return totals


def reason_group(reason: str | None) -> str:
    """The group a failure reason counts in: its text before the first ``:`` when that is a lower-case
    name of at most 40 characters (``contact_stopped``, ``too_late``), ``unknown`` for none, else
    ``other``."""
    if reason is None or not reason.strip():
        return "unknown"
    head = reason.split(":", 1)[0].strip()
    return head if _REASON_GROUP.fullmatch(head) else "other"


def step_counter(step: int, status: Status) -> str:
    """The counter of a campaign step's emails in one status, on each counter shard."""
    return f"steps_s{step}_{status.value}"


def reason_counter(step: int | None, status: Status, group: str) -> str:
    """The counter of a reason group's tasks in one status: per step for an email task, else the job's."""
    return f"reasons_{status.value}_{group}" if step is None else f"reasons_s{step}_{status.value}_{group}"


def task_deltas(
    step: int | None, before: Status, after: Status, *, reason_before: str | None, reason_after: str | None
) -> dict[str, int]:
    """What a task (an email task of ``step``, or a scrape task: ``None``) moving from ``before`` to
    ``after`` adds to its shard: the job's statuses, the step's, and the reason groups of the Failed or
    Cancelled statuses it leaves and enters."""
    deltas: dict[str, int] = {before.value: -1, after.value: 1}
    if step is not None:
        deltas[step_counter(step, before)] = -1
        deltas[step_counter(step, after)] = 1
    if before in _WITH_REASON:
        deltas[reason_counter(step, before, reason_group(reason_before))] = -1
    if after in _WITH_REASON:
        name = reason_counter(step, after, reason_group(reason_after))
        deltas[name] = deltas.get(name, 0) + 1
    return deltas


def first_failures(task_id: str, after: Status, reason_after: str | None) -> dict[str, str]:
    """The example a task entering ``after`` offers its reason group when that is Failed:
    ``first_Failed_<group>`` = ``<time>#<task id>`` (``clock.iso``, so the earliest sorts first), which
    ``counter_update`` sets only where the shard holds none yet."""
    if after is not Status.FAILED:
        return {}
    return {f"first_{after.value}_{reason_group(reason_after)}": f"{clock.iso()}#{task_id}"}


@dataclass
class StepCounts:
    """A campaign's emails per step and status, and per step, status and reason group, from its
    counter shards; ``uncounted``: tasks the job's counters hold that no step counter does (written
    before the step counters)."""

    statuses: dict[int, dict[str, int]] = field(default_factory=dict)
    reasons: dict[int, dict[tuple[str, str], int]] = field(default_factory=dict)
    uncounted: int = 0


def step_counts(job_id: str) -> StepCounts:
    """The campaign's step counters summed over its shards (one BatchGetItem)."""
    counts = StepCounts()
    total = 0
    for row in batch_get([counter_key(job_id, shard) for shard in range(COUNTER_SHARDS)]):
        for name, value in row.items():
            total += int(value) if name in _STATUS_NAMES else 0
            if matched := _STEP_COUNTER.fullmatch(name):
                step = counts.statuses.setdefault(int(matched[1]), {})
                step[matched[2]] = step.get(matched[2], 0) + int(value)
            elif (matched := _REASON_COUNTER.fullmatch(name)) and matched[1] is not None:
                reasons = counts.reasons.setdefault(int(matched[1]), {})
                key = (matched[2], matched[3])
                reasons[key] = reasons.get(key, 0) + int(value)
    counts.uncounted = total - sum(sum(step.values()) for step in counts.statuses.values())
    return counts


@dataclass
class FailureCounts:
    """A job's Failed tasks per reason group (over every step), from its counter shards: ``examples``,
    per group, the task ids its shards hold as the first to fail for it, earliest first; ``uncounted``:
    Failed tasks no group counts (failed before the reason counters)."""

    groups: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)
    uncounted: int = 0


def failure_counts(job_id: str) -> FailureCounts:
    """The job's Failed reason groups and their first examples, summed over its shards (one
    BatchGetItem)."""
    counts = FailureCounts()
    failed = 0
    marks: dict[str, list[str]] = {}
    for row in batch_get([counter_key(job_id, shard) for shard in range(COUNTER_SHARDS)]):
        for name, value in row.items():
            failed += int(value) if name == Status.FAILED.value else 0
            if (matched := _REASON_COUNTER.fullmatch(name)) and matched[2] == Status.FAILED.value:
                counts.groups[matched[3]] = counts.groups.get(matched[3], 0) + int(value)
            elif matched := _FIRST_FAILED.fullmatch(name):
                marks.setdefault(matched[1], []).append(str(value))
    counts.examples = {group: [m.partition("#")[2] for m in sorted(found)] for group, found in marks.items()}
    counts.uncounted = failed - sum(counts.groups.values())
    return counts
