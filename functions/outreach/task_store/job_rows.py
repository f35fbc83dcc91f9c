"""A job's own row: who recorded it, when, from what source, and of which kind its tasks are.

The row's key ``job#<job>`` is distinct from every counter key (``job#<job>#<shard>``). A job id
names one kind of job: a scrape job and a campaign never share an id, so their rows and counters
never merge. Only a job's row carries ``job_kind``: it is the hash key of the sparse ``jobs`` index
(range ``created_at``, modules/tasks-table), so the jobs are read without reading the tasks.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from botocore.exceptions import ClientError

from outreach import clients, clock, config
from outreach.errors import JobKindConflictError
from outreach.task_ids import validate_job_id
from outreach.task_model import Kind
from outreach.task_store.items import from_item, is_condition_failure, rows, to_av, to_avs

# Rows recorded before ``job_kind`` existed: a campaign's source always names its recipients
# (``<campaign file> sha256:<hex>; recipients <...>``, written by ``outreach campaign schedule``), a
# scrape job's never does (``<sites file> sha256:<hex>``, by ``outreach job create``).
_LEGACY_CAMPAIGN_SOURCE = "; recipients "


# The sparse index of the jobs' own rows (modules/tasks-table's ``jobs_index_name``).
JOBS_INDEX = "jobs"


def job_key(job_id: str) -> str:
    """Key of a job's own row (who created it, when, from what); distinct from every counter key."""
    return f"job#{job_id}"


def get_job(job_id: str) -> dict[str, Any] | None:
    """The job's own row (see ``record_job``); ``None`` for a job created without one."""
    response = clients.dynamodb().get_item(
        TableName=config.tasks_table(), Key={"task_id": to_av(job_key(job_id))}, ConsistentRead=True
    )
    item = response.get("Item")
    return None if item is None else from_item(item)


def job_kind_of(row: Mapping[str, Any]) -> Kind:
    """The kind of a job's row: its ``job_kind``, or for a row recorded before it, what its source says."""
    recorded = row.get("job_kind")
    if recorded is not None:
        return Kind(str(recorded))
    return Kind.EMAIL if _LEGACY_CAMPAIGN_SOURCE in str(row.get("source", "")) else Kind.SCRAPE


def job_rows(kind: Kind) -> Iterator[dict[str, Any]]:
    """The rows of every job of ``kind``, newest first, page by page from the ``jobs`` index (eventually
    consistent: a job recorded a moment ago may be missing from one reading)."""
    request = {
        "IndexName": JOBS_INDEX,
        "KeyConditionExpression": "job_kind = :kind",
        "ExpressionAttributeValues": to_avs({":kind": kind.value}),
        "ScanIndexForward": False,
    }
    yield from rows("query", request)


def check_job_kind(job_id: str, kind: Kind) -> None:
    """Raise ``JobKindConflictError`` if ``job_id`` is recorded as a job of another kind (a read; the write
    in ``record_job`` holds the same rule as its condition)."""
    row = get_job(job_id)
    if row is not None and job_kind_of(row) is not kind:
        raise JobKindConflictError(job_id, job_kind_of(row), kind)


def record_job(
    job_id: str,
    *,
    kind: Kind,
    source: str,
    tasks: int,
    created_by: str,
    waivers: Mapping[str, str] | None = None,
) -> None:
    """Write or refresh the job's row; the first creation time and creator are kept on a re-run.

    ``waivers`` (a campaign's lint rules turned off, each with its reason) are kept as
    ``compliance_waivers``, those of the latest run.

    ``kind`` is what the job's tasks are (``scrape`` for ``job create``, ``email`` for a campaign),
    kept as ``job_kind``. The write is conditional: no row yet, or a row of the same kind (a row
    recorded before ``job_kind`` counts as the kind its source shows, see ``job_kind_of``, and gets
    ``job_kind`` now). A row of another kind raises ``JobKindConflictError`` and nothing is written.
    """
    validate_job_id(job_id)
    now = clock.iso()
    legacy_match = "contains(#source, :marker)" if kind is Kind.EMAIL else "NOT contains(#source, :marker)"
    try:
        clients.dynamodb().update_item(
            TableName=config.tasks_table(),
            Key={"task_id": to_av(job_key(job_id))},
            UpdateExpression=(
                "SET kind = :kind, job_id = :job, job_kind = :job_kind, "
                "created_at = if_not_exists(created_at, :now), "
                "created_by = if_not_exists(created_by, :by), updated_at = :now, #source = :source, "
                "task_count = :tasks" + (", compliance_waivers = :waivers" if waivers is not None else "")
            ),
            ConditionExpression=(
                "attribute_not_exists(task_id) OR job_kind = :job_kind "
                f"OR (attribute_not_exists(job_kind) AND {legacy_match})"
            ),
            ExpressionAttributeNames={"#source": "source"},
            ExpressionAttributeValues=to_avs(
                {
                    ":kind": "job",
                    ":job": job_id,
                    ":job_kind": kind.value,
                    ":marker": _LEGACY_CAMPAIGN_SOURCE,
                    ":now": now,
                    ":by": created_by,
                    ":source": source,
                    ":tasks": tasks,
                    **({":waivers": dict(waivers)} if waivers is not None else {}),
                }
            ),
        )
    except ClientError as exc:
        if not is_condition_failure(exc):
            raise
        row = get_job(job_id)
        existing = job_kind_of(row) if row is not None else kind
        raise JobKindConflictError(job_id, existing, kind) from exc
