"""The tasks table: every status change is a conditional write, and the rules live here.

Each transition that changes a task's status runs in one TransactWriteItems together with the job's
progress counter, so the counts move exactly when the status moves: a duplicate delivery whose
condition fails changes neither (never a bare ``ADD`` that a retry could repeat). Counters are split
over ``COUNTER_SHARDS`` items per job so 140 concurrent scrapers do not contend for one item.

Open tasks (Pending, Running) carry ``open_key`` = ``<kind>#<status>``, the partition key of the sparse
``open-tasks`` index, with ``updated_at`` as its sort key. Terminal transitions remove it, so the index
holds only work that may still need healing and reconcilers query it instead of scanning the table.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from outreach import clients, clock, config
from outreach.email_task import PlannedEmail, email_task_id, utc_iso
from outreach.errors import (
    InvalidJobInputError,
    ItemTooLargeError,
    JobKindConflictError,
    OperatorRefusedError,
    TaskNotFoundError,
    TransitionRejectedError,
    UnreadableMessageError,
)
from outreach.item_size import ITEM_LIMIT_BYTES, TRANSACTION_ACTION_LIMIT, TRANSACTION_LIMIT_BYTES, item_size
from outreach.task_ids import normalise_url, scrape_task_id, validate_job_id, validate_url_list
from outreach.task_model import ALLOWED_TRANSITIONS, OPEN, Kind, MalformedTask, Status, Task, open_key

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

COUNTER_SHARDS = 10
OPEN_TASKS_INDEX = "open-tasks"
# What the transitions may add to a created row (lease fields, attempts, ses_message_id, expires_at,
# a last_error of up to 500 and a failure_reason of up to 1,000 characters at up to 4 UTF-8 bytes each):
# a row is created only with this much room left under DynamoDB's item limit, so no later update of it
# is refused for its size.
ROW_GROWTH_BYTES = 8 * 1024
MAX_ROW_BYTES = ITEM_LIMIT_BYTES - ROW_GROWTH_BYTES
# The items one creating transaction may carry: DynamoDB's 4 MB less a margin for what the estimate
# cannot see (item_size already counts high).
_CREATE_TRANSACTION_BYTES = TRANSACTION_LIMIT_BYTES - 256 * 1024
# A number of up to 38 digits, as item_size counts it: the bound of one counter of a counter shard.
_COUNTER_VALUE_BYTES = 21
_TERMINAL_RETENTION_SECONDS = 90 * 24 * 3600
_LAST_ERROR_CHARS = 500

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


@dataclass(frozen=True)
class JobCreation:
    job_id: str
    created: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)


def _av(value: Any) -> Any:
    return _serializer.serialize(value)


def _values(values: Mapping[str, Any]) -> dict[str, Any]:
    return {name: _av(value) for name, value in values.items()}


def _from_item(item: Mapping[str, Any]) -> dict[str, Any]:
    return {name: _deserializer.deserialize(value) for name, value in item.items()}


def counter_shard(task_id: str) -> int:
    return int(hashlib.sha256(task_id.encode()).hexdigest()[:8], 16) % COUNTER_SHARDS


def counter_key(job_id: str, shard: int) -> str:
    return f"job#{job_id}#{shard}"


def _counter_update(
    table: str, job_id: str, shard: int, deltas: Mapping[Status, int]
) -> TransactWriteItemTypeDef:
    changes = {status: delta for status, delta in deltas.items() if delta}
    names = {f"#c{i}": status.value for i, status in enumerate(changes)}
    values = {f":d{i}": _av(delta) for i, delta in enumerate(changes.values())}
    values[":job"] = _av(job_id)
    values[":kind"] = _av("job_counter")
    adds = ", ".join(f"#c{i} :d{i}" for i in range(len(changes)))
    return {
        "Update": {
            "TableName": table,
            "Key": {"task_id": _av(counter_key(job_id, shard))},
            "UpdateExpression": f"SET job_id = :job, kind = :kind ADD {adds}",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
        }
    }


def _cancellation_codes(error: ClientError) -> list[str]:
    reasons = error.response.get("CancellationReasons", [])
    return [str(reason.get("Code", "None")) for reason in reasons]


def _is_condition_failure(error: ClientError) -> bool:
    code = error.response.get("Error", {}).get("Code", "")
    if code == "ConditionalCheckFailedException":
        return True
    return code == "TransactionCanceledException" and "ConditionalCheckFailed" in _cancellation_codes(error)


# ---- reads ----------------------------------------------------------------------------------


def get_task(task_id: str) -> Task | None:
    """Read a task with a strongly consistent read; ``None`` if there is no such row."""
    response = clients.dynamodb().get_item(
        TableName=config.tasks_table(), Key={"task_id": _av(task_id)}, ConsistentRead=True
    )
    item = response.get("Item")
    if item is None:
        return None
    return Task.from_item(_from_item(item))


# Why a message naming a task of another kind cannot be handled (the handlers park it, the DLQ alarms).
_NOT_OF_KIND = {Kind.SCRAPE: "not_a_scrape_task", Kind.EMAIL: "not_an_email_task"}


def load_task(task_id: str, kind: Kind) -> Task:
    """The task a message names, of ``kind``; ``UnreadableMessageError`` naming why it cannot be handled.

    An email task must carry its rendered message. A throttled or failed read raises the SDK's error,
    for the retry machinery.
    """
    if not task_id.startswith(f"{kind.value}#"):
        # Never read: each role may read only its own kind's rows (dynamodb:LeadingKeys).
        raise UnreadableMessageError(_NOT_OF_KIND[kind])
    try:
        task = get_task(task_id)
    except ValueError as exc:
        raise UnreadableMessageError("malformed_task_row") from exc
    if task is None:
        raise UnreadableMessageError("unknown_task")
    if task.kind != kind.value or (kind is Kind.EMAIL and task.email is None):
        raise UnreadableMessageError(_NOT_OF_KIND[kind])
    return task


def job_counts(job_id: str) -> dict[str, int]:
    """Tasks per status for a job, summed over the counter shards (exact, see module docstring)."""
    table = config.tasks_table()
    keys = [{"task_id": _av(counter_key(job_id, shard))} for shard in range(COUNTER_SHARDS)]
    totals = {status.value: 0 for status in Status}
    pending_keys: list[dict[str, Any]] = keys
    while pending_keys:
        response = clients.dynamodb().batch_get_item(
            RequestItems={table: {"Keys": pending_keys, "ConsistentRead": True}}
        )
        for item in response.get("Responses", {}).get(table, []):
            row = _from_item(item)
            for status in Status:
                totals[status.value] += int(row.get(status.value, 0))
        unprocessed = response.get("UnprocessedKeys", {})
        pending_keys = list(unprocessed[table]["Keys"]) if table in unprocessed else []
    return totals


@dataclass
class IndexRead:
    """What reading the ``open-tasks`` index cost: items DynamoDB read and pages (Query calls)."""

    items: int = 0
    pages: int = 0


def open_tasks(
    kind: Kind,
    status: Status,
    updated_before: str,
    *,
    page_size: int = 100,
    cost: IndexRead | None = None,
) -> Iterator[Task | MalformedTask]:
    """Open tasks of one kind and status last changed before ``updated_before``, oldest first.

    Pages through the sparse ``open-tasks`` index (never the table), one Query per page, lazily: a
    caller that stops early reads no further page. ``cost`` accumulates what was read. A row that is
    not a valid task comes as a ``MalformedTask`` in its place, so one bad row stops nothing behind it.
    """
    if status not in (Status.PENDING, Status.RUNNING):
        raise ValueError(f"only open statuses are indexed, not {status}")
    paginator = clients.dynamodb().get_paginator("query")
    pages = paginator.paginate(
        TableName=config.tasks_table(),
        IndexName=OPEN_TASKS_INDEX,
        KeyConditionExpression="open_key = :key AND updated_at < :before",
        ExpressionAttributeValues={":key": _av(open_key(kind.value, status)), ":before": _av(updated_before)},
        ScanIndexForward=True,
        PaginationConfig={"PageSize": page_size},
    )
    for page in pages:
        if cost is not None:
            cost.pages += 1
            cost.items += int(page.get("ScannedCount", len(page.get("Items", []))))
        for item in page.get("Items", []):
            row = _from_item(item)
            try:
                yield Task.from_item(row)
            except ValueError as exc:  # outcome: yielded as a MalformedTask, the caller settles it
                yield MalformedTask.of(row, str(exc))


# ---- job creation ---------------------------------------------------------------------------


def create_scrape_job(job_id: str, urls: Iterable[str]) -> JobCreation:
    """Write one Pending scrape task per distinct normalised URL; running it again creates nothing twice.

    Invalid URLs are returned in ``rejected`` with the reason instead of being written. A job id that is
    not a valid string, or ``urls`` that is a single string or bytes rather than a collection, raises
    ``InvalidJobInputError`` before anything is written.
    """
    validate_job_id(job_id)
    validate_url_list(urls)
    result = JobCreation(job_id=job_id)
    wanted: dict[str, str] = {}
    for raw in urls:
        try:
            url = normalise_url(raw)
        except InvalidJobInputError as exc:  # outcome: returned in JobCreation.rejected
            result.rejected.append((str(raw), str(exc)))
            continue
        wanted.setdefault(scrape_task_id(job_id, url), url)
    rows = [
        (task_id, {"kind": Kind.SCRAPE.value, "url": url, "attempts": 0}) for task_id, url in wanted.items()
    ]
    _create_tasks(job_id, Kind.SCRAPE, rows, result)
    return result


def create_email_tasks(planned: Sequence[PlannedEmail]) -> JobCreation:
    """Write one Pending email task per planned email of one campaign; a re-run creates nothing twice.

    The campaign id is the tasks' ``job_id``, so the job's counter shards count the campaign's tasks
    per status. Task ids derive from campaign, recipient and step (``email_task.email_task_id``): an
    email planned twice, in one call or two, is written once and reported in ``existing``. Emails of
    more than one campaign, or an invalid campaign id, raise ``InvalidJobInputError`` before anything is
    written, and so does a row over ``MAX_ROW_BYTES`` (``ItemTooLargeError``, naming its task; see
    ``email_row_size``).
    """
    campaigns = {email.campaign_id for email in planned}
    if len(campaigns) > 1:
        raise InvalidJobInputError(
            f"emails of one campaign expected, got {len(campaigns)}: {sorted(campaigns)}"
        )
    if not campaigns:
        raise InvalidJobInputError("no emails planned")
    (campaign_id,) = campaigns
    validate_job_id(campaign_id)
    wanted: dict[str, dict[str, Any]] = {}
    for email in planned:
        wanted.setdefault(email.task_id, _email_row(email))
    result = JobCreation(job_id=campaign_id)
    _create_tasks(campaign_id, Kind.EMAIL, list(wanted.items()), result)
    return result


def _email_row(email: PlannedEmail) -> dict[str, Any]:
    row: dict[str, Any] = {
        "kind": Kind.EMAIL.value,
        "attempts": 0,
        "step": email.step,
        "recipient": email.message.to,
        "send_at": utc_iso(email.send_at),
        "timezone": email.timezone,
        "schedule_name": email.schedule_name,
        "message": email.message.to_item(),
    }
    if email.max_per_minute is not None:
        row["max_per_minute"] = email.max_per_minute
    return row


def email_row_size(email: PlannedEmail) -> int:
    """The size DynamoDB counts (``item_size``) of the task row ``create_email_tasks`` writes for
    ``email``; a row over ``MAX_ROW_BYTES`` is refused."""
    item = _new_item(email.campaign_id, Kind.EMAIL, email.task_id, _email_row(email), clock.iso())
    return item_size(_values(item))


def _new_item(job_id: str, kind: Kind, task_id: str, fields: Mapping[str, Any], now: str) -> dict[str, Any]:
    """The Pending row a creating transaction puts."""
    return {
        **fields,
        "task_id": task_id,
        "job_id": job_id,
        "status": Status.PENDING.value,
        "created_at": now,
        "updated_at": now,
        "open_key": open_key(kind.value, Status.PENDING),
    }


def _counter_item_bound(job_id: str) -> int:
    """The most a counter shard of ``job_id`` can weigh: its keys and a 38-digit count per status."""
    keys = {"task_id": counter_key(job_id, COUNTER_SHARDS - 1), "job_id": job_id, "kind": "job_counter"}
    counts = sum(len(status.value.encode()) + _COUNTER_VALUE_BYTES for status in Status)
    return item_size(_values(keys)) + counts


_Row = tuple[str, Mapping[str, Any]]


def _transactions(job_id: str, rows: Sequence[tuple[_Row, int]]) -> Iterator[list[_Row]]:
    """The rows (each with its size) in order, cut into transactions DynamoDB accepts: at most
    ``TRANSACTION_ACTION_LIMIT`` actions (the Put of every row and the Update of every counter shard
    the rows count in) whose items come to at most ``_CREATE_TRANSACTION_BYTES``."""
    counter_bytes = _counter_item_bound(job_id)
    chunk: list[_Row] = []
    shards: set[int] = set()
    size = 0
    for row, row_size in rows:
        with_row = shards | {counter_shard(row[0])}
        actions = len(chunk) + 1 + len(with_row)
        total = size + row_size + counter_bytes * len(with_row)
        if chunk and (actions > TRANSACTION_ACTION_LIMIT or total > _CREATE_TRANSACTION_BYTES):
            yield chunk
            chunk, size, with_row = [], 0, {counter_shard(row[0])}
        chunk.append(row)
        shards = with_row
        size += row_size
    if chunk:
        yield chunk


def _create_tasks(job_id: str, kind: Kind, rows: Sequence[_Row], result: JobCreation) -> None:
    """Every row sized first (``ItemTooLargeError`` before anything is written), then written in the
    transactions ``_transactions`` cuts."""
    now = clock.iso()
    sized: list[tuple[_Row, int]] = []
    for task_id, fields in rows:
        size = item_size(_values(_new_item(job_id, kind, task_id, fields, now)))
        if size > MAX_ROW_BYTES:
            raise ItemTooLargeError(task_id, size, MAX_ROW_BYTES)
        sized.append(((task_id, fields), size))
    for chunk in _transactions(job_id, sized):
        _create_chunk(job_id, kind, chunk, result)


def _create_chunk(job_id: str, kind: Kind, chunk: Sequence[_Row], result: JobCreation) -> None:
    """Put the chunk's rows (each only if absent) and count them, in one transaction; rows that exist
    already are reported in ``result.existing`` and the rest written again without them."""
    table = config.tasks_table()
    remaining = list(chunk)
    while remaining:
        now = clock.iso()
        actions: list[TransactWriteItemTypeDef] = []
        per_shard: dict[int, int] = {}
        for task_id, fields in remaining:
            item = _new_item(job_id, kind, task_id, fields, now)
            actions.append(
                {
                    "Put": {
                        "TableName": table,
                        "Item": _values(item),
                        "ConditionExpression": "attribute_not_exists(task_id)",
                    }
                }
            )
            shard = counter_shard(task_id)
            per_shard[shard] = per_shard.get(shard, 0) + 1
        for shard, count in sorted(per_shard.items()):
            actions.append(_counter_update(table, job_id, shard, {Status.PENDING: count}))
        try:
            clients.dynamodb().transact_write_items(TransactItems=actions)
        except ClientError as exc:
            if not _is_condition_failure(exc):
                raise
            codes = _cancellation_codes(exc)
            exists = {remaining[i][0] for i, code in enumerate(codes[: len(remaining)]) if code != "None"}
            if not exists:
                raise
            result.existing.extend(sorted(exists))
            remaining = [pair for pair in remaining if pair[0] not in exists]
            continue
        result.created.extend(task_id for task_id, _ in remaining)
        remaining = []


# ---- transitions ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Change:
    action: str
    to: Status
    condition: str
    set_values: dict[str, Any]
    remove: tuple[str, ...] = ()
    condition_values: dict[str, Any] = field(default_factory=dict)


def _apply(task: Task, change: _Change) -> None:
    """Run one transition: a conditional update of the task plus its counter shard, atomically."""
    if change.to not in ALLOWED_TRANSITIONS[task.status]:
        raise TransitionRejectedError(task.task_id, change.action)
    table = config.tasks_table()
    names = {"#status": "status"}
    set_values = dict(change.set_values)
    set_values["status"] = change.to.value
    set_values["updated_at"] = clock.iso()
    if change.to.is_terminal:
        set_values["expires_at"] = int(clock.now()) + _TERMINAL_RETENTION_SECONDS
    else:
        set_values["open_key"] = open_key(task.kind, change.to)
    assignments = []
    values: dict[str, Any] = {}
    for i, (name, value) in enumerate(set_values.items()):
        names[f"#s{i}"] = name
        values[f":s{i}"] = _av(value)
        assignments.append(f"#s{i} = :s{i}")
    removals = list(change.remove) + (["open_key"] if change.to.is_terminal else [])
    expression = "SET " + ", ".join(assignments)
    if removals:
        expression += " REMOVE " + ", ".join(removals)
    values[":expected"] = _av(task.status.value)
    values.update(_values(change.condition_values))
    update: TransactWriteItemTypeDef = {
        "Update": {
            "TableName": table,
            "Key": {"task_id": _av(task.task_id)},
            "UpdateExpression": expression,
            "ConditionExpression": f"#status = :expected AND ({change.condition})",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
        }
    }
    actions = [update]
    if change.to != task.status:
        deltas = {task.status: -1, change.to: 1}
        actions.append(_counter_update(table, task.job_id, counter_shard(task.task_id), deltas))
    try:
        clients.dynamodb().transact_write_items(TransactItems=actions)
    except ClientError as exc:
        if _is_condition_failure(exc):
            raise TransitionRejectedError(task.task_id, change.action) from exc
        raise


def claim(task: Task, *, message_id: str, receive_count: int, lease_seconds: int) -> Task:
    """Move a task to Running for one delivery; only one live delivery can hold it.

    A Pending task can be claimed once. A Running task can be claimed again when its lease has
    expired (its worker crashed) or by a later receive of the same message (its worker released or lost
    the claim on a retryable failure).
    """
    now = clock.now()
    owner = f"{message_id}#{receive_count}"
    expires = int(now) + lease_seconds
    if task.status is Status.PENDING:
        condition = "attribute_not_exists(lease_owner)"
        condition_values: dict[str, Any] = {}
    else:
        condition = "lease_expires_at < :now OR (lease_message = :message AND lease_receive < :receive)"
        condition_values = {":now": int(now), ":message": message_id, ":receive": receive_count}
    _apply(
        task,
        _Change(
            action="claim",
            to=Status.RUNNING,
            condition=condition,
            condition_values=condition_values,
            set_values={
                "lease_owner": owner,
                "lease_message": message_id,
                "lease_receive": receive_count,
                "lease_expires_at": expires,
                "attempts": task.attempts + 1,
            },
        ),
    )
    refreshed = get_task(task.task_id)
    if refreshed is None:
        raise TaskNotFoundError(task.task_id)
    return refreshed


def _holder_condition(task: Task) -> tuple[str, dict[str, Any]]:
    if task.lease is None:
        raise TransitionRejectedError(task.task_id, "holder check")
    return "lease_owner = :owner", {":owner": task.lease.owner}


_LEASE_FIELDS = ("lease_owner", "lease_message", "lease_receive", "lease_expires_at")


def finish(task: Task, *, result_key: str, summary: Mapping[str, Any]) -> None:
    """Running -> Finished, only by the delivery holding the claim (``task`` as returned by claim)."""
    condition, values = _holder_condition(task)
    _apply(
        task,
        _Change(
            action="finish",
            to=Status.FINISHED,
            condition=condition,
            condition_values=values,
            set_values={"result_key": result_key, "summary": dict(summary)},
            remove=_LEASE_FIELDS,
        ),
    )


def fail(task: Task, *, reason: str) -> None:
    """Running -> Failed with a reason, only by the delivery holding the claim."""
    condition, values = _holder_condition(task)
    _apply(
        task,
        _Change(
            action="fail",
            to=Status.FAILED,
            condition=condition,
            condition_values=values,
            set_values={"failure_reason": reason[:1000]},
            remove=_LEASE_FIELDS,
        ),
    )


def _touch(task: Task, action: str, *, update: str, condition: str, values: Mapping[str, Any]) -> None:
    """A conditional update that keeps the task's status (and so its counters); ``#status`` is bound."""
    try:
        clients.dynamodb().update_item(
            TableName=config.tasks_table(),
            Key={"task_id": _av(task.task_id)},
            UpdateExpression=update,
            ConditionExpression=condition,
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues=_values(values),
        )
    except ClientError as exc:
        if _is_condition_failure(exc):
            raise TransitionRejectedError(task.task_id, action) from exc
        raise


def release(task: Task, *, error: str) -> None:
    """Give up the claim after a retryable failure; the task stays Running so nothing re-dispatches it.

    The lease is expired rather than removed: the message's next receive (or, if the message is lost,
    the reconciler) can claim it again at once. ``error`` (reason and short detail of the failure) is
    kept as ``last_error``, so a task the reconciler abandons, and any look at the DLQ, says why.
    """
    if task.lease is None:
        raise TransitionRejectedError(task.task_id, "release")
    _touch(
        task,
        "release",
        update="SET lease_expires_at = :expired, updated_at = :now, last_error = :error",
        condition="#status = :running AND lease_owner = :owner",
        values={
            ":expired": 0,
            ":now": clock.iso(),
            ":running": Status.RUNNING.value,
            ":owner": task.lease.owner,
            ":error": error[:_LAST_ERROR_CHARS],
        },
    )


def mark_redispatched(task: Task) -> None:
    """Note that a Pending task's message is being sent again (reconciler), before it is sent.

    The write is conditional on the task being unchanged since it was read, so of two overlapping
    reconciler runs only one sends; the new ``updated_at`` keeps the next runs away until the
    threshold has passed again. Status and counters do not change, and the stream filter ignores a
    Pending -> Pending change, so the dispatcher sends nothing extra.
    """
    _touch(
        task,
        "redispatch",
        update="SET updated_at = :now ADD redispatches :one",
        condition="#status = :pending AND updated_at = :seen",
        values={":now": clock.iso(), ":one": 1, ":pending": Status.PENDING.value, ":seen": task.updated_at},
    )


def _unchanged_and_unheld(task: Task) -> tuple[str, dict[str, Any]]:
    """Condition for a reconciler's write: nobody changed the task since it was read, no live lease."""
    return "updated_at = :seen AND (attribute_not_exists(lease_expires_at) OR lease_expires_at < :now)", {
        ":seen": task.updated_at,
        ":now": int(clock.now()),
    }


def requeue(task: Task) -> None:
    """Running -> Pending for a task whose worker and message are gone (reconciler).

    Only if the task is unchanged since it was read and holds no live lease; the stream then
    dispatches it again.
    """
    condition, values = _unchanged_and_unheld(task)
    _apply(
        task,
        _Change(
            action="requeue",
            to=Status.PENDING,
            condition=condition,
            condition_values=values,
            set_values={},
            remove=_LEASE_FIELDS,
        ),
    )


def abandon(task: Task, *, max_attempts: int) -> None:
    """Running -> Failed (``abandoned``) for a task that used up its attempts (reconciler)."""
    condition, values = _unchanged_and_unheld(task)
    reason = f"abandoned: {task.attempts} of {max_attempts} attempts used"
    if task.last_error:
        reason += f"; last error {task.last_error}"
    _apply(
        task,
        _Change(
            action="abandon",
            to=Status.FAILED,
            condition=condition,
            condition_values=values,
            set_values={"failure_reason": reason[:1000]},
            remove=_LEASE_FIELDS,
        ),
    )


def cancel(task: Task, *, reason: str = "cancelled") -> None:
    """Pending or Running -> Cancelled (an operator's decision); terminal tasks stay as they are."""
    _apply(
        task,
        _Change(
            action="cancel",
            to=Status.CANCELLED,
            condition="attribute_exists(task_id)",
            set_values={"failure_reason": reason[:1000]},
            remove=_LEASE_FIELDS,
        ),
    )


# ---- email transitions ----------------------------------------------------------------------
# An email is the one side effect that must happen at most once, so an email task is claimed only from
# Pending: a Running email task may have been sent already and is never claimed again (the email
# reconciler moves it to Failed ``delivery_unknown`` once its lease has run out).


def claim_email(task: Task, *, owner: str, lease_seconds: int) -> Task:
    """Pending -> Running for one invocation of the email worker, before anything is sent.

    Of any number of concurrent or repeated invocations exactly one claim succeeds; the others get
    ``TransitionRejectedError`` and must not send.
    """
    if task.status is not Status.PENDING:
        raise TransitionRejectedError(task.task_id, "claim email")
    _apply(
        task,
        _Change(
            action="claim email",
            to=Status.RUNNING,
            condition="attribute_not_exists(lease_owner)",
            set_values={
                "lease_owner": owner,
                "lease_expires_at": int(clock.now()) + lease_seconds,
                "attempts": task.attempts + 1,
            },
        ),
    )
    refreshed = get_task(task.task_id)
    if refreshed is None:
        raise TaskNotFoundError(task.task_id)
    return refreshed


def finish_email(task: Task, *, ses_message_id: str) -> None:
    """Running -> Finished with SES's message id, only by the invocation holding the claim."""
    condition, values = _holder_condition(task)
    _apply(
        task,
        _Change(
            action="finish email",
            to=Status.FINISHED,
            condition=condition,
            condition_values=values,
            set_values={"ses_message_id": ses_message_id},
            remove=_LEASE_FIELDS,
        ),
    )


def release_email(task: Task, *, error: str) -> None:
    """Running -> Pending after a transient failure before anything was sent (holder only).

    The retry (Lambda's async retry, or the schedule's) then claims it again; ``error`` is kept as
    ``last_error``.
    """
    condition, values = _holder_condition(task)
    _apply(
        task,
        _Change(
            action="release email",
            to=Status.PENDING,
            condition=condition,
            condition_values=values,
            set_values={"last_error": error[:_LAST_ERROR_CHARS]},
            remove=_LEASE_FIELDS,
        ),
    )


def skip_email(task: Task, *, reason: str) -> None:
    """Running -> Cancelled for a claimed follow-up that must not go out (bounce, complaint,
    suppression), holder only; ``reason`` says which."""
    condition, values = _holder_condition(task)
    _apply(
        task,
        _Change(
            action="skip email",
            to=Status.CANCELLED,
            condition=condition,
            condition_values=values,
            set_values={"failure_reason": reason[:1000]},
            remove=_LEASE_FIELDS,
        ),
    )


def give_up(task: Task, *, reason: str) -> None:
    """Pending or Running -> Failed with ``reason`` (the email reconciler: ``too_late``,
    ``delivery_unknown``), only if nobody changed the task since it was read and no lease is live."""
    condition, values = _unchanged_and_unheld(task)
    _apply(
        task,
        _Change(
            action="give up",
            to=Status.FAILED,
            condition=condition,
            condition_values=values,
            set_values={"failure_reason": reason[:1000]},
            remove=_LEASE_FIELDS,
        ),
    )


def fail_malformed(row: MalformedTask) -> None:
    """An open row that is not a valid task -> ``Failed`` (``malformed_task_row: <field>: <why>``).

    Conditional on the status and ``updated_at`` that were read, with the counter move, so a row
    changed meanwhile is left as it is (``TransitionRejectedError``). A row whose status or job cannot be
    read cannot be counted and raises ``TransitionRejectedError`` without a write.
    """
    if row.status not in OPEN or row.job_id is None or row.updated_at is None:
        raise TransitionRejectedError(row.task_id, "fail malformed row")
    table = config.tasks_table()
    update: TransactWriteItemTypeDef = {
        "Update": {
            "TableName": table,
            "Key": {"task_id": _av(row.task_id)},
            "UpdateExpression": "SET #status = :failed, failure_reason = :reason, updated_at = :now, "
            f"expires_at = :expires REMOVE open_key, {', '.join(_LEASE_FIELDS)}",
            "ConditionExpression": "#status = :expected AND updated_at = :updated",
            "ExpressionAttributeNames": {"#status": "status"},
            "ExpressionAttributeValues": _values(
                {
                    ":failed": Status.FAILED.value,
                    ":reason": f"malformed_task_row: {row.problem}"[:_LAST_ERROR_CHARS],
                    ":now": clock.iso(),
                    ":expires": int(clock.now()) + _TERMINAL_RETENTION_SECONDS,
                    ":expected": row.status.value,
                    ":updated": row.updated_at,
                }
            ),
        }
    }
    deltas = {row.status: -1, Status.FAILED: 1}
    actions = [update, _counter_update(table, row.job_id, counter_shard(row.task_id), deltas)]
    try:
        clients.dynamodb().transact_write_items(TransactItems=actions)
    except ClientError as exc:
        if _is_condition_failure(exc):
            raise TransitionRejectedError(row.task_id, "fail malformed row") from exc
        raise


def email_tasks_of(campaign_id: str, recipient: str, steps: Iterable[int]) -> list[Task]:
    """The campaign's tasks for ``recipient`` at ``steps`` that exist (strongly consistent reads)."""
    found = (get_task(email_task_id(campaign_id, recipient, step)) for step in steps)
    return [task for task in found if task is not None]


# ---- operator actions (the `outreach` command line) -----------------------------------------


def job_key(job_id: str) -> str:
    """Key of a job's own row (who created it, when, from what); distinct from every counter key."""
    return f"job#{job_id}"


# Rows recorded before ``job_kind`` existed: a campaign's source always names its recipients
# (``<campaign file> sha256:<hex>; recipients <...>``, written by ``outreach campaign schedule``), a
# scrape job's never does (``<sites file> sha256:<hex>``, by ``outreach job create``).
_LEGACY_CAMPAIGN_SOURCE = "; recipients "


def job_kind_of(row: Mapping[str, Any]) -> Kind:
    """The kind of a job's row: its ``job_kind``, or for a row recorded before it, what its source says."""
    recorded = row.get("job_kind")
    if recorded is not None:
        return Kind(str(recorded))
    return Kind.EMAIL if _LEGACY_CAMPAIGN_SOURCE in str(row.get("source", "")) else Kind.SCRAPE


def check_job_kind(job_id: str, kind: Kind) -> None:
    """Raise ``JobKindConflictError`` if ``job_id`` is recorded as a job of another kind (a read; the write
    in ``record_job`` holds the same rule as its condition)."""
    row = get_job(job_id)
    if row is not None and job_kind_of(row) is not kind:
        raise JobKindConflictError(job_id, job_kind_of(row), kind)


def record_job(job_id: str, *, kind: Kind, source: str, tasks: int, created_by: str) -> None:
    """Write or refresh the job's row; the first creation time and creator are kept on a re-run.

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
            Key={"task_id": _av(job_key(job_id))},
            UpdateExpression=(
                "SET kind = :kind, job_id = :job, job_kind = :job_kind, "
                "created_at = if_not_exists(created_at, :now), "
                "created_by = if_not_exists(created_by, :by), updated_at = :now, #source = :source, "
                "task_count = :tasks"
            ),
            ConditionExpression=(
                "attribute_not_exists(task_id) OR job_kind = :job_kind "
                f"OR (attribute_not_exists(job_kind) AND {legacy_match})"
            ),
            ExpressionAttributeNames={"#source": "source"},
            ExpressionAttributeValues=_values(
                {
                    ":kind": "job",
                    ":job": job_id,
                    ":job_kind": kind.value,
                    ":marker": _LEGACY_CAMPAIGN_SOURCE,
                    ":now": now,
                    ":by": created_by,
                    ":source": source,
                    ":tasks": tasks,
                }
            ),
        )
    except ClientError as exc:
        if not _is_condition_failure(exc):
            raise
        row = get_job(job_id)
        existing = job_kind_of(row) if row is not None else kind
        raise JobKindConflictError(job_id, existing, kind) from exc


def _scan(
    filter_expression: str, values: Mapping[str, Any], names: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    request: dict[str, Any] = {
        "TableName": config.tasks_table(),
        "FilterExpression": filter_expression,
        "ExpressionAttributeValues": _values(values),
    }
    if names:
        request["ExpressionAttributeNames"] = dict(names)
    while True:
        response = clients.dynamodb().scan(**request)
        rows.extend(_from_item(item) for item in response.get("Items", []))
        last = response.get("LastEvaluatedKey")
        if not last:
            return rows
        request["ExclusiveStartKey"] = last


def list_jobs() -> list[dict[str, Any]]:
    """Every job's row and counter rows, merged per job (a Scan: it reads the whole table)."""
    rows = _scan("kind IN (:job, :counter)", {":job": "job", ":counter": "job_counter"})
    jobs: dict[str, dict[str, Any]] = {}
    for row in rows:
        job = jobs.setdefault(
            str(row["job_id"]), {"job_id": str(row["job_id"]), **{s.value: 0 for s in Status}}
        )
        if row["kind"] == "job":
            for name in ("created_at", "created_by", "source", "task_count"):
                if name in row:
                    job[name] = int(row[name]) if name == "task_count" else str(row[name])
            job["job_kind"] = job_kind_of(row).value
        else:
            for status in Status:
                job[status.value] += int(row.get(status.value, 0))
    return list(jobs.values())


def job_tasks_with_status(job_id: str, status: Status) -> list[Task]:
    """A job's tasks in one status. Open statuses come from the ``open-tasks`` index (a Query per
    kind); terminal ones need a Scan, since the table has no index by job."""
    if status in (Status.PENDING, Status.RUNNING):
        tasks: list[Task] = []
        for kind in Kind:
            request: dict[str, Any] = {
                "TableName": config.tasks_table(),
                "IndexName": OPEN_TASKS_INDEX,
                "KeyConditionExpression": "open_key = :key",
                "FilterExpression": "job_id = :job",
                "ExpressionAttributeValues": _values({":key": open_key(kind.value, status), ":job": job_id}),
            }
            while True:
                response = clients.dynamodb().query(**request)
                tasks.extend(Task.from_item(_from_item(item)) for item in response.get("Items", []))
                last = response.get("LastEvaluatedKey")
                if not last:
                    break
                request["ExclusiveStartKey"] = last
        return tasks
    rows = _scan(
        "job_id = :job AND #status = :status AND kind <> :counter",
        {":job": job_id, ":status": status.value, ":counter": "job_counter"},
        {"#status": "status"},
    )
    return [Task.from_item(row) for row in rows]


# A failure reason that does not prove the email was not sent: the worker claimed it and never
# recorded the outcome (the email reconciler's ``delivery_unknown``), so SES may have it.
_MAY_HAVE_BEEN_SENT = "delivery_unknown"


def requeue_refusal(task: Task) -> str | None:
    """Why ``operator_requeue`` never takes this task (``None`` when it may).

    An email may go out at most once, so an email task goes back to Pending only from Failed or
    Cancelled with a failure reason that proves nothing was sent: never while Running (a worker may be
    sending it), never once Finished (it was sent), never with an SES message id, and never with a
    reason starting ``delivery_unknown`` or with no reason at all. Scrape tasks may always be
    requeued (a scrape done twice is only work).
    """
    if task.kind != Kind.EMAIL.value:
        return None
    if task.status is Status.RUNNING:
        return (
            "an email task that is Running may be being sent right now; it is never requeued, "
            "--force or not (the email reconciler settles it as delivery_unknown once its lease runs out)"
        )
    if task.status is Status.FINISHED:
        return "this email was sent (Finished); requeuing it would send it a second time"
    if task.email is not None and task.email.ses_message_id:
        return f"SES accepted this email (message id {task.email.ses_message_id}); it would go out twice"
    reason = (task.failure_reason or "").strip()
    if task.status in (Status.FAILED, Status.CANCELLED) and not reason:
        return f"{task.status.value} without a failure reason: nothing proves the email was not sent"
    if reason.startswith(_MAY_HAVE_BEEN_SENT):
        return (
            "delivery_unknown: the worker may have sent this email before it stopped; "
            "requeuing it could send it a second time"
        )
    return None


def operator_requeue(task: Task, *, by: str, reason: str) -> None:
    """An operator's override: a task back to Pending, recorded with who and why.

    This is the one way out of a terminal status, and it is not a transition in ALLOWED_TRANSITIONS:
    the pipeline itself never makes it. The write is conditional on the row being exactly as read
    (status, kind and ``updated_at``), so a task that moved meanwhile is rejected, not overwritten. The
    result, summary, failure reason, lease and retention time go; the stream then dispatches the task
    again as a scrape task that became Pending. An email task ``requeue_refusal`` names a reason for
    raises ``OperatorRefusedError``; its rule is part of the write's condition too (no SES message id, a
    failure reason not starting ``delivery_unknown``), so no row that may have been sent is requeued.
    """
    if task.status is Status.PENDING:
        raise TransitionRejectedError(task.task_id, "operator requeue")
    why = requeue_refusal(task)
    if why is not None:
        raise OperatorRefusedError(task.task_id, "operator requeue", why)
    table = config.tasks_table()
    now = clock.iso()
    condition = "#status = :from AND updated_at = :seen AND kind = :kind"
    values: dict[str, Any] = {
        ":pending": Status.PENDING.value,
        ":open": open_key(task.kind, Status.PENDING),
        ":now": now,
        ":by": by[:200],
        ":reason": reason[:1000],
        ":from": task.status.value,
        ":seen": task.updated_at,
        ":kind": task.kind,
    }
    if task.kind == Kind.EMAIL.value:
        condition += (
            " AND attribute_not_exists(ses_message_id) AND attribute_exists(failure_reason)"
            " AND NOT begins_with(failure_reason, :unknown)"
        )
        values[":unknown"] = _MAY_HAVE_BEEN_SENT
    update: TransactWriteItemTypeDef = {
        "Update": {
            "TableName": table,
            "Key": {"task_id": _av(task.task_id)},
            "UpdateExpression": (
                "SET #status = :pending, open_key = :open, updated_at = :now, override_by = :by, "
                "override_reason = :reason, override_at = :now, override_from = :from "
                "REMOVE result_key, summary, failure_reason, expires_at, " + ", ".join(_LEASE_FIELDS)
            ),
            "ConditionExpression": condition,
            "ExpressionAttributeNames": {"#status": "status"},
            "ExpressionAttributeValues": _values(values),
        }
    }
    counter = _counter_update(
        table, task.job_id, counter_shard(task.task_id), {task.status: -1, Status.PENDING: 1}
    )
    try:
        clients.dynamodb().transact_write_items(TransactItems=[update, counter])
    except ClientError as exc:
        if _is_condition_failure(exc):
            raise TransitionRejectedError(task.task_id, "operator requeue") from exc
        raise


def operator_cancel(task: Task, *, reason: str) -> None:
    """An operator's cancel of an open task (``job cancel``): Pending or Running -> Cancelled.

    An email task that is Running is never cancelled (``OperatorRefusedError``): its worker may be sending
    it, and a Cancelled row would then refuse the worker's Finished and stand for an email that went
    out. The write is conditional on the status and kind that were read, so an email claimed since it
    was read as Pending is left to its worker (``TransitionRejectedError``).
    """
    if task.kind == Kind.EMAIL.value and task.status is Status.RUNNING:
        raise OperatorRefusedError(
            task.task_id, "operator cancel", "an email task that is Running may be being sent right now"
        )
    _apply(
        task,
        _Change(
            action="operator cancel",
            to=Status.CANCELLED,
            condition="kind = :kind",
            condition_values={":kind": task.kind},
            set_values={"failure_reason": reason[:1000]},
            remove=_LEASE_FIELDS,
        ),
    )


def get_job(job_id: str) -> dict[str, Any] | None:
    """The job's own row (see ``record_job``); ``None`` for a job created without one."""
    response = clients.dynamodb().get_item(
        TableName=config.tasks_table(), Key={"task_id": _av(job_key(job_id))}, ConsistentRead=True
    )
    item = response.get("Item")
    return None if item is None else _from_item(item)


def open_tasks_between(
    kind: Kind, status: Status, start: str, end: str, *, job_ids: Sequence[str] | None = None
) -> list[Task]:
    """Open tasks of one kind and status last changed in [start, end] (``clock.iso`` strings); with
    ``job_ids``, only the tasks of those jobs (an empty list: none)."""
    if status not in (Status.PENDING, Status.RUNNING):
        raise ValueError(f"only open statuses are indexed, not {status}")
    if job_ids is not None and not job_ids:
        return []
    values: dict[str, Any] = {":key": open_key(kind.value, status), ":start": start, ":end": end}
    request: dict[str, Any] = {
        "TableName": config.tasks_table(),
        "IndexName": OPEN_TASKS_INDEX,
        "KeyConditionExpression": "open_key = :key AND updated_at BETWEEN :start AND :end",
    }
    if job_ids is not None:
        chosen = sorted(set(job_ids))
        values.update({f":job{i}": job for i, job in enumerate(chosen)})
        request["FilterExpression"] = f"job_id IN ({', '.join(f':job{i}' for i in range(len(chosen)))})"
    request["ExpressionAttributeValues"] = _values(values)
    tasks: list[Task] = []
    while True:
        response = clients.dynamodb().query(**request)
        tasks.extend(Task.from_item(_from_item(item)) for item in response.get("Items", []))
        last = response.get("LastEvaluatedKey")
        if not last:
            return tasks
        request["ExclusiveStartKey"] = last
