"""What an erasure request finds in each store, read without changing anything.

- **Tasks table.** No index leads from a job or an address to its rows, so both read the table with a
  Scan (strongly consistent, every page): a job's rows carry its id (``job_id``, or keys
  ``scrape#<job>#…``, ``email#<job>#…``, ``job#<job>``, ``job#<job>#<shard>``); an address's rows are
  those with the address anywhere in them (an email task's ``recipient`` and message, a scrape task's
  summary or error texts), found by reading every row, since a filter cannot look inside the lists of
  maps a summary holds.
- **Results bucket.** A job's results are the objects under ``results/<job>/``; an address's are the
  result documents that mention it, found by reading every version of every object under
  ``results/``. A site whose result or task row mentions the address is erased whole: its task row and
  every version of its result object (the document is not rewritten without the address).
- **Stream failure records** (lambda dispatch mode): every version of every record that names one of
  the job's keys, or mentions the address.
- **Email schedules.** A Pending email task's one-time schedule is deleted before its row, so no
  invocation looks for a row that is gone.
- **What stops it.** An open task of a job (Pending or Running: cancel the job or campaign first), and
  for an address a Running task (a worker holds it now) or an open scrape task.
- **Kept.** An address on SES's account-level suppression list stays there (docs/security.md, Erasure).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from botocore.exceptions import ClientError

from outreach import clients, task_store
from outreach.email_task import email_schedule_name
from outreach.task_model import Kind, Status
from outreach_operator.erasure.request import ErasureRequest

RESULTS_PREFIX = "results/"
FAILURE_RECORDS_PREFIX = "aws/lambda/"
_READERS = 8
_OPEN = frozenset(status.value for status in Status.open())


class Tracker(Protocol):
    """Where progress goes (a progress bar on stderr, or nowhere)."""

    def start(self, what: str, total: int | None) -> None: ...

    def advance(self, steps: int = 1) -> None: ...


class NoProgress:
    def start(self, what: str, total: int | None) -> None:
        return None

    def advance(self, steps: int = 1) -> None:
        return None


@dataclass(frozen=True)
class FoundRow:
    """A tasks-table row to delete, with what its conditional delete and counter update need."""

    task_id: str
    kind: str
    job_id: str | None
    status: str | None
    updated_at: str | None
    why: str
    result_key: str | None = None
    schedule_name: str | None = None

    @property
    def is_task(self) -> bool:
        return self.kind in (Kind.SCRAPE.value, Kind.EMAIL.value)

    @property
    def counted(self) -> bool:
        """Whether a job counter shard counts this row (a task with a status and a job)."""
        return self.is_task and self.job_id is not None and self.status in {s.value for s in Status}

    def as_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "kind": self.kind,
            "job_id": self.job_id,
            "status": self.status,
            "why": self.why,
        }


@dataclass(frozen=True)
class ObjectVersion:
    """One version (or delete marker) of an object; ``"null"`` is the version of an unversioned bucket."""

    key: str
    version_id: str
    delete_marker: bool = False


# Stores that hold an address's data and that the command does not erase yet: the report names them,
# so that whoever keeps the record of the request knows what is left and where (docs/security.md,
# Erasure).
NOT_REACHED_FOR_AN_ADDRESS: tuple[dict[str, str], ...] = (
    {
        "store": "contact_ledger",
        "why": "its record address#<address> (a stop, replies, absence, last contact) is not erased: "
        "`outreach contacts show ADDRESS` lists it",
    },
    {
        "store": "inbound_bucket",
        "why": "received replies are not searched: they expire after the bucket's retention_days",
    },
)


@dataclass
class Inventory:
    request: ErasureRequest
    rows: list[FoundRow] = field(default_factory=list)
    schedules: list[str] = field(default_factory=list)
    results: list[ObjectVersion] = field(default_factory=list)
    failure_records: list[ObjectVersion] = field(default_factory=list)
    blocking: list[FoundRow] = field(default_factory=list)
    kept: list[dict[str, str]] = field(default_factory=list)
    not_checked: list[dict[str, str]] = field(default_factory=list)
    read: dict[str, int] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        """What was found, per store: rows, schedules, objects and their versions."""
        return {
            "table_rows": len(self.rows),
            "email_schedules": len(self.schedules),
            "result_objects": len({v.key for v in self.results}),
            "result_versions": len(self.results),
            "failure_records": len({v.key for v in self.failure_records}),
            "failure_record_versions": len(self.failure_records),
        }

    @property
    def empty(self) -> bool:
        return not any(self.counts().values())


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _found(row: Mapping[str, Any], why: str) -> FoundRow:
    task_id = str(row["task_id"])
    kind = _string(row.get("kind")) or ""
    status = _string(row.get("status"))
    schedule = None
    if kind == Kind.EMAIL.value and status == Status.PENDING.value:
        schedule = _string(row.get("schedule_name")) or email_schedule_name(task_id)
    return FoundRow(
        task_id=task_id,
        kind=kind,
        job_id=_string(row.get("job_id")),
        status=status,
        updated_at=_string(row.get("updated_at")),
        why=why,
        result_key=_string(row.get("result_key")),
        schedule_name=schedule,
    )


def scan_rows(table: str, tracker: Tracker, **filters: Any) -> Iterator[dict[str, Any]]:
    """Every row of the table (or those ``filters`` let through), deserialised, page by page."""
    tracker.start(f"reading {table}", None)
    for page in task_store.pages("scan", {"ConsistentRead": True, **filters}, table=table):
        for item in page.get("Items", []):
            yield task_store.from_item(item)
        tracker.advance(int(page.get("ScannedCount", 0)))


def _job_row_why(request: ErasureRequest, row: Mapping[str, Any]) -> str:
    kind = row.get("kind")
    if kind == "job":
        return "the job's own row"
    if kind == "job_counter":
        return "a counter shard of the job"
    if kind == Kind.EMAIL.value:
        return "an email task of the campaign"
    return "a task of the job"


def job_rows(request: ErasureRequest, table: str, tracker: Tracker) -> list[FoundRow]:
    """The job's rows: its tasks, its row and its counter shards (a filtered Scan)."""
    job = str(request.job_id)
    filters = {
        "FilterExpression": (
            "job_id = :job OR begins_with(task_id, :scrape) OR begins_with(task_id, :email) "
            "OR begins_with(task_id, :shard) OR task_id = :row"
        ),
        "ExpressionAttributeValues": {
            ":job": {"S": job},
            ":scrape": {"S": f"scrape#{job}#"},
            ":email": {"S": f"email#{job}#"},
            ":shard": {"S": f"job#{job}#"},
            ":row": {"S": f"job#{job}"},
        },
    }
    return [
        _found(row, _job_row_why(request, row))
        for row in scan_rows(table, tracker, **filters)
        if row.get("job_id") == job or request.task_id_is_of_job(str(row["task_id"]))
    ]


def address_rows(
    request: ErasureRequest, table: str, tracker: Tracker
) -> tuple[list[FoundRow], dict[str, FoundRow]]:
    """The rows that mention the address, and every row with a result key by that key (so the task of
    a site whose result mentions the address can be erased with it)."""
    mentioning: list[FoundRow] = []
    by_result: dict[str, FoundRow] = {}
    for row in scan_rows(table, tracker):
        if row.get("kind") == "job_counter":
            continue
        if request.mentions(row):
            is_recipient = request.mentions(row.get("recipient"))
            mentioning.append(
                _found(row, "email task to the address" if is_recipient else "mentions the address")
            )
        elif isinstance(row.get("result_key"), str):
            by_result[str(row["result_key"])] = _found(
                row, "task of a site whose result mentions the address"
            )
    return mentioning, by_result


def versions(bucket: str, prefix: str) -> list[ObjectVersion]:
    """Every version and delete marker under ``prefix`` (an unversioned bucket's objects as ``null``)."""
    found: list[ObjectVersion] = []
    for page in clients.s3().get_paginator("list_object_versions").paginate(Bucket=bucket, Prefix=prefix):
        found.extend(
            ObjectVersion(key=str(entry["Key"]), version_id=str(entry.get("VersionId") or "null"))
            for entry in page.get("Versions", [])
        )
        found.extend(
            ObjectVersion(key=str(m["Key"]), version_id=str(m.get("VersionId") or "null"), delete_marker=True)
            for m in page.get("DeleteMarkers", [])
        )
    return found


def _document(bucket: str, version: ObjectVersion) -> Any:
    body = (
        clients.s3().get_object(Bucket=bucket, Key=version.key, VersionId=version.version_id)["Body"].read()
    )
    text = body.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except json.JSONDecodeError:  # not JSON (a hand-made object): its text is searched as it is
        return text


def matching_keys(
    bucket: str,
    candidates: list[ObjectVersion],
    matches: Callable[[Any], bool],
    tracker: Tracker,
    what: str,
) -> set[str]:
    """The keys of which some stored version's document ``matches`` (delete markers have none to read;
    a few requests at a time)."""
    readable = [version for version in candidates if not version.delete_marker]
    tracker.start(what, len(readable))

    def check(version: ObjectVersion) -> str | None:
        try:
            document = _document(bucket, version)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "NoSuchVersion"):
                return None  # deleted since it was listed: nothing left to read
            raise
        return version.key if matches(document) else None

    found: set[str] = set()
    with ThreadPoolExecutor(max_workers=_READERS) as pool:
        for key in pool.map(check, readable):
            tracker.advance()
            if key is not None:
                found.add(key)
    return found


def _suppression(address: str) -> dict[str, str]:
    """Whether SES's account-level suppression list holds the address (it is kept there)."""
    try:
        entry = clients.sesv2().get_suppressed_destination(EmailAddress=address)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "NotFoundException":
            return {"store": "ses_suppression_list", "state": "not listed"}
        return {"store": "ses_suppression_list", "state": f"not checked: {exc}"}
    reason = str(entry["SuppressedDestination"].get("Reason", "?"))
    return {
        "store": "ses_suppression_list",
        "state": f"kept ({reason}): the record that this address must not be mailed again",
    }


def _blocking(request: ErasureRequest, rows: Iterable[FoundRow]) -> list[FoundRow]:
    if request.job_id is not None:
        return [row for row in rows if row.is_task and row.status in _OPEN]
    return [
        row
        for row in rows
        if row.status == Status.RUNNING.value or (row.kind == Kind.SCRAPE.value and row.status in _OPEN)
    ]


def find(
    request: ErasureRequest,
    *,
    table: str,
    results_bucket: str | None,
    failure_bucket: str | None,
    tracker: Tracker | None = None,
) -> Inventory:
    """Everything the request covers in every store named; nothing is changed."""
    progress = tracker or NoProgress()
    inventory = Inventory(request=request)
    if request.job_id is not None:
        inventory.rows = job_rows(request, table, progress)
        if results_bucket is not None:
            inventory.results = versions(results_bucket, f"{RESULTS_PREFIX}{request.job_id}/")
    else:
        rows, by_result = address_rows(request, table, progress)
        if results_bucket is not None:
            every = versions(results_bucket, RESULTS_PREFIX)
            keys = matching_keys(results_bucket, every, request.mentions, progress, "reading results")
            inventory.read["result_versions"] = sum(not v.delete_marker for v in every)
            keys |= {row.result_key for row in rows if row.result_key}
            rows += [by_result[key] for key in sorted(keys) if key in by_result]
            inventory.results = [v for v in every if v.key in keys]
        inventory.rows = rows
        inventory.kept.append(_suppression(str(request.address)))
        inventory.not_checked.extend(NOT_REACHED_FOR_AN_ADDRESS)
    if results_bucket is None:
        inventory.not_checked.append(
            {"store": "results_bucket", "why": "no results bucket named (--results-bucket)"}
        )
    inventory.schedules = [row.schedule_name for row in inventory.rows if row.schedule_name]
    inventory.blocking = _blocking(request, inventory.rows)
    if failure_bucket is None:
        inventory.not_checked.append(
            {
                "store": "failure_bucket",
                "why": "no stream failure bucket named (--failure-bucket; a pipe-mode root has none)",
            }
        )
    else:
        every = versions(failure_bucket, FAILURE_RECORDS_PREFIX)
        matches = request.record_mentions_job if request.job_id is not None else request.mentions
        keys = matching_keys(failure_bucket, every, matches, progress, "reading failure records")
        inventory.read["failure_record_versions"] = sum(not v.delete_marker for v in every)
        inventory.failure_records = [v for v in every if v.key in keys]
    return inventory
