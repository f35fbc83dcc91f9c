"""Creating a job's tasks: one Pending row per distinct task, counted, in transactions DynamoDB accepts.

Each row is put only if absent, in one transaction with the counter shards it counts in, so running
a creation again creates nothing twice and the counts stay exact.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from outreach import clients, clock, config
from outreach.contacts.keys import normalise
from outreach.email_task import PlannedEmail, utc_iso
from outreach.errors import InvalidJobInputError, ItemTooLargeError, MalformedFieldError
from outreach.item_size import ITEM_LIMIT_BYTES, TRANSACTION_ACTION_LIMIT, TRANSACTION_LIMIT_BYTES, item_size
from outreach.scrape_tenants import tenant_count, tenant_of
from outreach.task_ids import normalise_url, scrape_task_id, validate_job_id, validate_url_list
from outreach.task_model import Kind, Status, open_key, shard_of
from outreach.task_store.campaign_open import campaign_key_fields
from outreach.task_store.counters import (
    COUNTER_SHARDS,
    counter_key,
    counter_shard,
    counter_update,
    step_counter,
)
from outreach.task_store.items import cancellation_codes, is_condition_failure, is_throttled, to_avs

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

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
# A creating transaction cancelled for throttling (a hot partition key of the table or an index) is
# sent again after a random pause of up to 0.05 s, doubling each time up to 2 s, at most this many
# times in a row; then the throttling error is raised (the creation can be run again: it creates
# nothing twice). The SDK's own retries do not repeat a cancelled transaction.
THROTTLED_ATTEMPTS = 12
_BACKOFF_FIRST_SECONDS = 0.05
_BACKOFF_MAX_SECONDS = 2.0


@dataclass
class CreationThrottling:
    """What throttling cost a creation: transactions cancelled and sent again, seconds paused."""

    retries: int = 0
    paused_seconds: float = 0.0


@dataclass(frozen=True)
class JobCreation:
    job_id: str
    created: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)
    throttling: CreationThrottling = field(default_factory=CreationThrottling)


def create_scrape_job(job_id: str, urls: Iterable[str], *, job_sites: int | None = None) -> JobCreation:
    """Write one Pending scrape task per distinct normalised URL; running it again creates nothing twice.

    Invalid URLs are returned in ``rejected`` with the reason instead of being written. A job id that is
    not a valid string, or ``urls`` that is a single string or bytes rather than a collection, raises
    ``InvalidJobInputError`` before anything is written.

    Each row names its tenant on the scrape queue (``message_group``, ``scrape_tenants.tenant_of``),
    the job being spread over ``scrape_tenants.tenant_count(job_sites)`` tenants: ``job_sites`` is the
    size of the whole job when it is created over several calls (``outreach job create`` writes it in
    chunks), by default the distinct sites of this call.
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
    tenants = tenant_count(job_sites if job_sites is not None else max(1, len(wanted)))
    rows = [
        (
            task_id,
            {
                "kind": Kind.SCRAPE.value,
                "url": url,
                "attempts": 0,
                "message_group": tenant_of(job_id, task_id, tenants),
            },
        )
        for task_id, url in wanted.items()
    ]
    _create_tasks(job_id, Kind.SCRAPE, rows, result)
    return result


def create_email_tasks(planned: Sequence[PlannedEmail]) -> JobCreation:
    """Write one Pending email task per planned email of one campaign; a re-run creates nothing twice.

    The campaign id is the tasks' ``job_id``, so the job's counter shards count the campaign's tasks
    per status. Task ids derive from campaign, recipient and step (``email_task.email_task_id``): an
    email planned twice, in one call or two, is written once and reported in ``existing``. Emails of
    more than one campaign, an invalid campaign id, or a recipient that is not exactly one address
    raise ``InvalidJobInputError`` before anything is written, and so does a row over ``MAX_ROW_BYTES``
    (``ItemTooLargeError``, naming its task; see ``email_row_size``). Each row carries
    ``recipient_key``, the normalised recipient (``contacts.normalise``): the ``recipient-emails`` index
    finds every email to an address, in every campaign (``email_tasks_to``); and ``campaign_open_key``,
    the key of the sparse ``campaign-open`` index while it is open (``campaign_open``). Each row carries
    the campaign's sequence rules (``rules``, when planned with them) and ``threaded``, and a row whose
    Reply-To is its reply address carries ``reply_handle``, the key of the sparse ``reply-handles``
    index (``email_task_by_reply_handle``).
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


def _recipient_key(email: PlannedEmail) -> str:
    try:
        return normalise(email.message.to, field="recipient")
    except MalformedFieldError as exc:
        raise InvalidJobInputError(f"{email.task_id}: {exc}") from exc


def _email_row(email: PlannedEmail) -> dict[str, Any]:
    row: dict[str, Any] = {
        "kind": Kind.EMAIL.value,
        "attempts": 0,
        "step": email.step,
        "recipient": email.message.to,
        "recipient_key": _recipient_key(email),
        "send_at": utc_iso(email.send_at),
        "timezone": email.timezone,
        "schedule_name": email.schedule_name,
        "message": email.message.to_item(),
        "threaded": email.threaded,
    }
    if email.max_per_minute is not None:
        row["max_per_minute"] = email.max_per_minute
    if email.rules is not None:
        row["rules"] = email.rules.to_item()
    handle = email.reply_handle
    if handle is not None:
        row["reply_handle"] = handle
    return row


def email_row_size(email: PlannedEmail) -> int:
    """The size DynamoDB counts (``item_size``) of the task row ``create_email_tasks`` writes for
    ``email``; a row over ``MAX_ROW_BYTES`` is refused."""
    item = _new_item(email.campaign_id, Kind.EMAIL, email.task_id, _email_row(email), clock.iso())
    return item_size(to_avs(item))


def _new_item(job_id: str, kind: Kind, task_id: str, fields: Mapping[str, Any], now: str) -> dict[str, Any]:
    """The Pending row a creating transaction puts, in the ``open-tasks`` shard its id falls in
    (``config.open_index_shards``); every later status change keeps that shard. An email task is in
    its campaign's ``campaign-open`` index too, in the same shard (``campaign_open``)."""
    shard = shard_of(task_id, config.open_index_shards())
    item = {
        **fields,
        "task_id": task_id,
        "job_id": job_id,
        "status": Status.PENDING.value,
        "created_at": now,
        "updated_at": now,
        "open_key": open_key(kind.value, Status.PENDING, shard),
    }
    return {**item, **campaign_key_fields(kind.value, job_id, Status.PENDING, shard)}


def _counter_item_bound(job_id: str) -> int:
    """The most a counter shard of ``job_id`` can weigh: its keys and a 38-digit count per status."""
    keys = {"task_id": counter_key(job_id, COUNTER_SHARDS - 1), "job_id": job_id, "kind": "job_counter"}
    counts = sum(len(status.value.encode()) + _COUNTER_VALUE_BYTES for status in Status)
    return item_size(to_avs(keys)) + counts


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
        size = item_size(to_avs(_new_item(job_id, kind, task_id, fields, now)))
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
    throttled = 0
    while remaining:
        now = clock.iso()
        actions: list[TransactWriteItemTypeDef] = []
        per_shard: dict[int, Counter[str]] = {}
        for task_id, fields in remaining:
            item = _new_item(job_id, kind, task_id, fields, now)
            actions.append(
                {
                    "Put": {
                        "TableName": table,
                        "Item": to_avs(item),
                        "ConditionExpression": "attribute_not_exists(task_id)",
                    }
                }
            )
            counts = per_shard.setdefault(counter_shard(task_id), Counter())
            counts[Status.PENDING.value] += 1
            if "step" in fields:  # an email task counts under its step too
                counts[step_counter(int(fields["step"]), Status.PENDING)] += 1
        for shard, counts in sorted(per_shard.items()):
            actions.append(counter_update(table, job_id, shard, counts))
        try:
            clients.dynamodb().transact_write_items(TransactItems=actions)
        except ClientError as exc:
            if is_throttled(exc) and throttled < THROTTLED_ATTEMPTS - 1:
                throttled += 1
                _pause(throttled, result.throttling)
                continue
            if not is_condition_failure(exc):
                raise
            codes = cancellation_codes(exc)
            exists = {remaining[i][0] for i, code in enumerate(codes[: len(remaining)]) if code != "None"}
            if not exists:
                raise
            result.existing.extend(sorted(exists))
            remaining = [pair for pair in remaining if pair[0] not in exists]
            continue
        result.created.extend(task_id for task_id, _ in remaining)
        remaining = []


def _pause(attempt: int, throttling: CreationThrottling) -> None:
    """Wait before sending a throttled transaction again: full jitter over an exponential ceiling."""
    ceiling = min(_BACKOFF_MAX_SECONDS, _BACKOFF_FIRST_SECONDS * 2 ** (attempt - 1))
    seconds = random.uniform(0, ceiling)
    throttling.retries += 1
    throttling.paused_seconds += seconds
    time.sleep(seconds)
