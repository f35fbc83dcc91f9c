"""Reading tasks: one by id, the one a message names, and the open ones through the sparse index.

Open tasks (Pending, Running) carry ``open_key`` = ``<kind>#<status>#<shard>``, the partition key of
the sparse ``open-tasks`` index, with ``updated_at`` as its sort key. Terminal transitions remove it, so
the index holds only work that may still need healing and reconcilers query it instead of scanning the
table. The shard (``task_model.shard_of`` the task id, over ``config.open_index_shards`` shards, chosen
at creation and kept by every status change) spreads a job's writes over that many keys, so creation
is not held to one partition's write rate; ``open_index_rows`` queries every shard and merges them.

Email tasks carry ``recipient_key`` (the normalised recipient), the partition key of the
``recipient-emails`` index (keys only): every email to one address, in every campaign, for a stop's
fan-out. Email tasks of a campaign with a reply domain carry ``reply_handle``, the partition key of
the sparse ``reply-handles`` index (keys only): the task a reply address names.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from outreach import clients, config
from outreach.contacts.keys import normalise
from outreach.email_task import email_reply_handle, email_task_id
from outreach.errors import UnreadableMessageError
from outreach.task_model import OPEN, Kind, MalformedTask, Status, Task, open_key
from outreach.task_store.items import IndexRead, batch_get, from_item, rows, to_av, to_avs

OPEN_TASKS_INDEX = "open-tasks"
RECIPIENT_EMAILS_INDEX = "recipient-emails"
REPLY_HANDLES_INDEX = "reply-handles"

# Why a message naming a task of another kind cannot be handled (the handlers park it, the DLQ alarms).
_NOT_OF_KIND = {Kind.SCRAPE: "not_a_scrape_task", Kind.EMAIL: "not_an_email_task"}


def get_task(task_id: str) -> Task | None:
    """Read a task with a strongly consistent read; ``None`` if there is no such row."""
    response = clients.dynamodb().get_item(
        TableName=config.tasks_table(), Key={"task_id": to_av(task_id)}, ConsistentRead=True
    )
    item = response.get("Item")
    if item is None:
        return None
    return Task.from_item(from_item(item))


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


def open_index_rows(
    kind: Kind,
    status: Status,
    *,
    updated: str = "",
    values: Mapping[str, Any] | None = None,
    filter_expression: str = "",
    page_size: int | None = None,
    cost: IndexRead | None = None,
    attributes: tuple[str, ...] = (),
) -> Iterator[dict[str, Any]]:
    """The rows of the ``open-tasks`` index under one kind and open status, oldest first, lazily.

    Every shard of the key (``config.open_index_shards``) is queried, each page by page, and the rows
    are the union of all of them, merged on ``updated_at`` so the oldest comes first: the first page of
    every shard is read before the first row is given, no further page before it is needed.
    ``updated`` is a condition on ``updated_at`` for the key (``updated_at < :before``),
    ``filter_expression`` a filter on the rows read; ``values`` binds what either names; ``page_size``
    is the Limit of each shard's Query. With ``attributes``, each row holds only those (a
    ``ProjectionExpression``; ``updated_at`` is added, the merge's order needs it).
    """
    if status not in OPEN:
        raise ValueError(f"only open statuses are indexed, not {status}")
    requests: list[dict[str, Any]] = []
    for shard in range(config.open_index_shards()):
        request: dict[str, Any] = {
            "IndexName": OPEN_TASKS_INDEX,
            "KeyConditionExpression": "open_key = :key" + (f" AND {updated}" if updated else ""),
            "ExpressionAttributeValues": to_avs(
                {":key": open_key(kind.value, status, shard), **(values or {})}
            ),
            "ScanIndexForward": True,
        }
        if filter_expression:
            request["FilterExpression"] = filter_expression
        if attributes:
            names = list(dict.fromkeys([*attributes, "updated_at"]))
            request["ProjectionExpression"] = ", ".join(f"#p{i}" for i in range(len(names)))
            request["ExpressionAttributeNames"] = {f"#p{i}": name for i, name in enumerate(names)}
        if page_size is not None:
            request["Limit"] = page_size
        requests.append(request)
    shards = [rows("query", request, cost=cost) for request in requests]
    yield from heapq.merge(*shards, key=lambda row: str(row.get("updated_at", "")))


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
    found = open_index_rows(
        kind,
        status,
        updated="updated_at < :before",
        values={":before": updated_before},
        page_size=page_size,
        cost=cost,
    )
    for row in found:
        try:
            yield Task.from_item(row)
        except ValueError as exc:  # outcome: yielded as a MalformedTask, the caller settles it
            yield MalformedTask.of(row, str(exc))


def email_tasks_of(campaign_id: str, recipient: str, steps: Iterable[int]) -> list[Task]:
    """The campaign's tasks for ``recipient`` at ``steps`` that exist (strongly consistent reads)."""
    found = (get_task(email_task_id(campaign_id, recipient, step)) for step in steps)
    return [task for task in found if task is not None]


def email_tasks_to(address: str) -> list[Task]:
    """Every email task to ``address`` (any spelling of it), in every campaign, in task id order.

    The ``recipient-emails`` index projects keys only: its rows name the tasks, which are then read
    with strongly consistent reads (``batch_get``), so each task comes in its current status. The index
    itself is eventually consistent: a task written a moment ago may be missing, which is why the
    email worker reads the ledger after its claim as well.
    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html
    A row that is not a valid task raises ``ValueError`` (naming the field) for the retry machinery.
    """
    request = {
        "IndexName": RECIPIENT_EMAILS_INDEX,
        "KeyConditionExpression": "recipient_key = :key",
        "ExpressionAttributeValues": to_avs({":key": normalise(address)}),
    }
    task_ids = sorted({str(row["task_id"]) for row in rows("query", request)})
    found = {str(row["task_id"]): row for row in batch_get(task_ids)}
    return [Task.from_item(found[task_id]) for task_id in task_ids if task_id in found]


def email_task_by_reply_handle(handle: str) -> Task | None:
    """The email task whose reply address carries ``handle`` (``email_task.email_reply_handle``), read
    with a strongly consistent GetItem after the ``reply-handles`` index named it; ``None`` if no task
    has it.

    The index projects keys only and is eventually consistent: a task written a moment ago may be
    missing (a reply comes days after its email was sent, its task long written). Only a task whose id
    derives the handle is taken, so a row that merely carries someone else's handle names nothing.
    A row that is not a valid task raises ``ValueError`` (naming the field) for the retry machinery.
    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html
    """
    request = {
        "IndexName": REPLY_HANDLES_INDEX,
        "KeyConditionExpression": "reply_handle = :handle",
        "ExpressionAttributeValues": to_avs({":handle": handle}),
    }
    task_ids = sorted({str(row["task_id"]) for row in rows("query", request)})
    for task_id in task_ids:
        if email_reply_handle(task_id) != handle:
            continue
        task = get_task(task_id)
        if task is not None and task.email is not None and task.email.reply_handle == handle:
            return task
    return None
