"""The operator's queries of the tasks table: every job, a job's tasks in one status, a campaign's open
emails, open tasks in a time window, open emails to a domain; built on the task store's readers.

The Lambda functions never ask these questions (they read one task, or the open ones through
``task_store.open_tasks``), so they live with the command line and no function's zip carries them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from outreach import contacts, task_store
from outreach.errors import MalformedFieldError
from outreach.task_model import Kind, Status, Task


def list_jobs() -> list[dict[str, Any]]:
    """Every job's row, newest first, from the sparse ``jobs`` index (a Query per kind of job: the tasks
    are never read). Counts are not included: ``with_counts`` adds them to the jobs shown."""
    found = [row for kind in Kind for row in task_store.job_rows(kind)]
    jobs = []
    for row in sorted(found, key=lambda r: (str(r.get("created_at", "")), str(r["job_id"])), reverse=True):
        job: dict[str, Any] = {"job_id": str(row["job_id"]), "job_kind": task_store.job_kind_of(row).value}
        for name in ("created_at", "created_by", "source", "task_count"):
            if name in row:
                job[name] = int(row[name]) if name == "task_count" else str(row[name])
        jobs.append(job)
    return jobs


def with_counts(job: dict[str, Any]) -> dict[str, Any]:
    """``job`` with its tasks per status, from its counter shards (a BatchGetItem)."""
    return {**job, **task_store.job_counts(str(job["job_id"]))}


def job_tasks_with_status(job_id: str, status: Status) -> list[Task]:
    """A job's tasks in one status. Open statuses come from the ``open-tasks`` index (a Query per
    kind); terminal ones need a Scan, since the table has no index by job."""
    if status.is_open:
        return [
            Task.from_item(row)
            for kind in Kind
            for row in task_store.open_index_rows(
                kind, status, filter_expression="job_id = :job", values={":job": job_id}
            )
        ]
    found = task_store.rows(
        "scan",
        {
            "FilterExpression": "job_id = :job AND #status = :status AND kind <> :counter",
            "ExpressionAttributeNames": {"#status": "status"},
            "ExpressionAttributeValues": task_store.to_avs(
                {":job": job_id, ":status": status.value, ":counter": "job_counter"}
            ),
        },
    )
    return [Task.from_item(row) for row in found]


def open_tasks_between(
    kind: Kind, status: Status, start: str, end: str, *, job_ids: Sequence[str] | None = None
) -> list[Task]:
    """Open tasks of one kind and status last changed in [start, end] (``clock.iso`` strings); with
    ``job_ids``, only the tasks of those jobs (an empty list: none)."""
    if not status.is_open:
        raise ValueError(f"only open statuses are indexed, not {status}")
    if job_ids is not None and not job_ids:
        return []
    values: dict[str, Any] = {":start": start, ":end": end}
    only = ""
    if job_ids is not None:
        chosen = sorted(set(job_ids))
        values.update({f":job{i}": job for i, job in enumerate(chosen)})
        only = f"job_id IN ({', '.join(f':job{i}' for i in range(len(chosen)))})"
    found = task_store.open_index_rows(
        kind, status, updated="updated_at BETWEEN :start AND :end", values=values, filter_expression=only
    )
    return [Task.from_item(row) for row in found]


def open_emails_to_domain(domain: str, status: Status) -> list[Task]:
    """Open email tasks in ``status`` whose recipient is at ``domain`` (exactly that domain, as
    ``contacts.normalise_domain`` gives it), in every campaign: a Query of the ``open-tasks`` index,
    filtered on ``@<domain>`` in the recipient (DynamoDB has no ends-with; each row's domain is then
    compared exactly)."""
    if not status.is_open:
        raise ValueError(f"only open statuses are indexed, not {status}")
    wanted = contacts.normalise_domain(domain)
    found = task_store.open_index_rows(
        Kind.EMAIL,
        status,
        filter_expression="contains(recipient, :at) OR contains(recipient_key, :at)",
        values={":at": f"@{wanted}"},
    )
    tasks = []
    for row in found:
        task = Task.from_item(row)
        if task.email is None:
            continue
        try:
            at = contacts.normalise_domain(task.email.recipient, field="recipient")
        except MalformedFieldError:  # outcome: no domain to compare (Task.from_item checked the address)
            continue
        if at == wanted:
            tasks.append(task)
    return tasks


def task_rows(task_ids: Sequence[str], attributes: Sequence[str] = ()) -> dict[str, dict[str, Any]]:
    """The rows of ``task_ids`` that exist, by task id, with ``task_id`` and ``attributes`` only
    (BatchGetItem, consistent reads)."""
    return {str(row["task_id"]): row for row in task_store.batch_get(task_ids, attributes=attributes)}
