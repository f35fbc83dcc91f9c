"""A job's progress counters: tasks per status, split over shards, moved with each status change.

Counters are split over ``COUNTER_SHARDS`` items per job so 140 concurrent scrapers do not contend for
one item. A shard's ``Update`` runs in the same transaction as the status change it counts, so the
counts move exactly when the status moves (never a bare ``ADD`` that a retry could repeat).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from outreach.task_model import Status, shard_of
from outreach.task_store.items import batch_get, to_av

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

COUNTER_SHARDS = 10


def counter_shard(task_id: str) -> int:
    """The shard of its job's counters a task counts in."""
    return shard_of(task_id, COUNTER_SHARDS)


def counter_key(job_id: str, shard: int) -> str:
    """Key of one counter shard of a job."""
    return f"job#{job_id}#{shard}"


def counter_update(
    table: str, job_id: str, shard: int, deltas: Mapping[Status, int] | Mapping[str, int]
) -> TransactWriteItemTypeDef:
    """The transaction action that adds ``deltas`` (per status, or per counter name such as an email
    event's ``events_s<step>_<kind>``; zeros left out) to one shard."""
    changes = {str(name): delta for name, delta in deltas.items() if delta}
    names = {f"#c{i}": name for i, name in enumerate(changes)}
    values = {f":d{i}": to_av(delta) for i, delta in enumerate(changes.values())}
    values[":job"] = to_av(job_id)
    values[":kind"] = to_av("job_counter")
    adds = ", ".join(f"#c{i} :d{i}" for i in range(len(changes)))
    return {
        "Update": {
            "TableName": table,
            "Key": {"task_id": to_av(counter_key(job_id, shard))},
            "UpdateExpression": f"SET job_id = :job, kind = :kind ADD {adds}",
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
