"""Deleting what an inventory found, in the order that leaves no worker looking for a row that is gone.

1. **Email schedules** of Pending email tasks, so none fires for a deleted row.
2. **Table rows.** A job's rows (all of its tasks are terminal by then) go in BatchWriteItem calls of 25,
   its counter shards and its own row with them. An address's rows are deleted one transaction each,
   conditional on the row's ``updated_at`` as read (a row a worker changed meanwhile is left and
   reported), with the job's counter shard decremented for the row's status in the same transaction,
   so the job's counts stay exact.
3. **Result objects** and 4. **stream failure records**: every version and delete marker, in
   DeleteObjects calls of up to 1,000 (with versioning a plain delete would only add a delete marker).

A step that fails stops the run with ``ErasureStoppedError``: what was deleted and what is left, per store.
Running the same request again finds only what is left.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from outreach import clients
from outreach.email_schedules import ScheduleTarget, delete_schedule
from outreach.task_store import counter_key, counter_shard
from outreach_operator.erasure.inventory import FoundRow, Inventory, NoProgress, ObjectVersion, Tracker
from outreach_operator.errors import ErasureStoppedError, RowsChangedError

_BATCH_WRITE_LIMIT = 25
_DELETE_OBJECTS_LIMIT = 1000
_UNPROCESSED_RETRIES = 8


@dataclass
class Deleted:
    """What a run deleted, per store, and the rows it left because they changed after they were read."""

    counts: dict[str, int] = field(
        default_factory=lambda: {
            "table_rows": 0,
            "email_schedules": 0,
            "result_versions": 0,
            "failure_record_versions": 0,
        }
    )
    schedules_already_gone: int = 0
    changed_since_read: list[str] = field(default_factory=list)


def _condition(row: FoundRow) -> tuple[str, dict[str, Any]]:
    if row.updated_at is None:
        return "attribute_exists(task_id) AND attribute_not_exists(updated_at)", {}
    return "updated_at = :seen", {":seen": {"S": row.updated_at}}


def _delete_counted(table: str, row: FoundRow) -> None:
    """Delete one task row and take it off its job's counter shard, as one transaction."""
    condition, values = _condition(row)
    delete: dict[str, Any] = {
        "Delete": {
            "TableName": table,
            "Key": {"task_id": {"S": row.task_id}},
            "ConditionExpression": condition,
        }
    }
    if values:
        delete["Delete"]["ExpressionAttributeValues"] = values
    job_id, status = str(row.job_id), str(row.status)
    counter = {
        "Update": {
            "TableName": table,
            "Key": {"task_id": {"S": counter_key(job_id, counter_shard(row.task_id))}},
            "UpdateExpression": "SET job_id = :job, kind = :kind ADD #c :minus",
            "ExpressionAttributeNames": {"#c": status},
            "ExpressionAttributeValues": {
                ":job": {"S": job_id},
                ":kind": {"S": "job_counter"},
                ":minus": {"N": "-1"},
            },
        }
    }
    clients.dynamodb().transact_write_items(TransactItems=[delete, counter])  # type: ignore[list-item]


def _delete_uncounted(table: str, row: FoundRow) -> None:
    condition, values = _condition(row)
    request: dict[str, Any] = {
        "TableName": table,
        "Key": {"task_id": {"S": row.task_id}},
        "ConditionExpression": condition,
    }
    if values:
        request["ExpressionAttributeValues"] = values
    clients.dynamodb().delete_item(**request)


def _is_condition_failure(error: ClientError) -> bool:
    code = error.response.get("Error", {}).get("Code", "")
    if code == "ConditionalCheckFailedException":
        return True
    reasons = error.response.get("CancellationReasons", [])
    return code == "TransactionCanceledException" and any(
        reason.get("Code") == "ConditionalCheckFailed" for reason in reasons
    )


def delete_address_rows(table: str, rows: Sequence[FoundRow], deleted: Deleted, tracker: Tracker) -> None:
    tracker.start("deleting table rows", len(rows))
    for row in rows:
        try:
            if row.counted:
                _delete_counted(table, row)
            else:
                _delete_uncounted(table, row)
        except ClientError as exc:
            if not _is_condition_failure(exc):
                raise
            deleted.changed_since_read.append(row.task_id)  # left in place, reported; a re-run reads it again
        else:
            deleted.counts["table_rows"] += 1
        tracker.advance()


def delete_job_rows(table: str, rows: Sequence[FoundRow], deleted: Deleted, tracker: Tracker) -> None:
    tracker.start("deleting table rows", len(rows))
    for start in range(0, len(rows), _BATCH_WRITE_LIMIT):
        chunk = rows[start : start + _BATCH_WRITE_LIMIT]
        requests: list[Any] = [{"DeleteRequest": {"Key": {"task_id": {"S": row.task_id}}}} for row in chunk]
        for attempt in range(_UNPROCESSED_RETRIES + 1):
            response = clients.dynamodb().batch_write_item(RequestItems={table: requests})
            requests = list(response.get("UnprocessedItems", {}).get(table, []))
            if not requests:
                break
            if attempt == _UNPROCESSED_RETRIES:
                raise RuntimeError(
                    f"DynamoDB left {len(requests)} deletes unprocessed after {attempt} retries"
                )
            time.sleep(min(2.0, 0.05 * 2**attempt))
        deleted.counts["table_rows"] += len(chunk)
        tracker.advance(len(chunk))


def delete_versions(
    bucket: str, found: Sequence[ObjectVersion], deleted: Deleted, store: str, tracker: Tracker
) -> None:
    """Delete every listed version and delete marker of ``bucket``; any object S3 refuses raises."""
    tracker.start(f"deleting from {bucket}", len(found))
    for start in range(0, len(found), _DELETE_OBJECTS_LIMIT):
        chunk = found[start : start + _DELETE_OBJECTS_LIMIT]
        response = clients.s3().delete_objects(
            Bucket=bucket,
            Delete={"Objects": [{"Key": v.key, "VersionId": v.version_id} for v in chunk], "Quiet": True},
        )
        errors = response.get("Errors", [])
        deleted.counts[store] += len(chunk) - len(errors)
        tracker.advance(len(chunk))
        if errors:
            first = errors[0]
            raise RuntimeError(
                f"S3 refused {len(errors)} deletes in {bucket}, first {first.get('Key')}: "
                f"{first.get('Code')} {first.get('Message')}"
            )


def _left(inventory: Inventory, deleted: Deleted) -> dict[str, int]:
    found = inventory.counts()
    return {
        "table_rows": found["table_rows"] - deleted.counts["table_rows"],
        "email_schedules": found["email_schedules"]
        - deleted.counts["email_schedules"]
        - deleted.schedules_already_gone,
        "result_versions": found["result_versions"] - deleted.counts["result_versions"],
        "failure_record_versions": found["failure_record_versions"]
        - deleted.counts["failure_record_versions"],
    }


def erase(
    inventory: Inventory,
    *,
    table: str,
    results_bucket: str | None,
    failure_bucket: str | None,
    schedule_group: str | None,
    tracker: Tracker | None = None,
) -> Deleted:
    """Delete everything ``inventory`` found (see the module docstring for the order)."""
    progress = tracker or NoProgress()
    deleted = Deleted()
    if inventory.schedules and schedule_group is None:
        raise ValueError("email schedules to delete, but no schedule group named: nothing deleted")
    try:
        if inventory.schedules:
            target = ScheduleTarget(group=str(schedule_group), worker_arn="", role_arn="", dlq_arn="")
            progress.start("deleting email schedules", len(inventory.schedules))
            for name in inventory.schedules:
                if delete_schedule(name, target):
                    deleted.counts["email_schedules"] += 1
                else:
                    deleted.schedules_already_gone += 1
                progress.advance()
        if inventory.request.job_id is not None:
            delete_job_rows(table, inventory.rows, deleted, progress)
        else:
            delete_address_rows(table, inventory.rows, deleted, progress)
        if inventory.results and results_bucket is not None:
            delete_versions(results_bucket, inventory.results, deleted, "result_versions", progress)
        if inventory.failure_records and failure_bucket is not None:
            delete_versions(
                failure_bucket, inventory.failure_records, deleted, "failure_record_versions", progress
            )
    except Exception as exc:
        raise ErasureStoppedError(deleted, _left(inventory, deleted), exc) from exc
    if deleted.changed_since_read:
        changed = RowsChangedError(
            f"{len(deleted.changed_since_read)} rows changed after they were read and were left: "
            f"{', '.join(deleted.changed_since_read)}"
        )
        raise ErasureStoppedError(deleted, _left(inventory, deleted), changed)
    return deleted
