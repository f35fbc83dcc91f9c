"""A job's tenants on the scrape queue: how many a job is spread over, and which one each task is in.

SQS fair queues share a standard queue among tenants, a tenant being a ``MessageGroupId``: while a
tenant holds a disproportionate share of the consumers, the other tenants' messages are returned
first, and among several such noisy tenants, those of the one with the fewest messages in flight
("How Amazon SQS fair queues work",
https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-fair-queues-detailed.html).
With one tenant per job, a small job started beside a big one is one tenant against one: once both
are noisy, the slots split evenly between them. Spread over ``tenant_count(sites)`` tenants instead,
``TENANT_SITES / sites`` of them (at least 1, at most ``MAX_TENANTS``), a job of few sites is many
small tenants and a job of many sites few big ones. The small job's tenants then stay quiet (each
holds a message or two) and come first, or, noisy too, each has fewer in flight than a big job's
tenant and so still comes first: while both jobs have messages waiting, the small job takes about
``G_small / (G_small + G_big)`` of the slots, which for jobs below ``TENANT_SITES`` sites is the big
job's sites over both jobs' (docs/performance.md, "Two jobs at once"). A job alone is never held back:
fair queues order messages, they never throttle them.

The count is chosen once, when the job is created, from the sites of the whole job, and each task's
tenant (``tenant_of``) is written on its row as ``message_group``: the dispatcher, the EventBridge
pipe, the scrape reconciler and the operator's re-dispatch send what the row says
(``row_tenant``), so a task's tenant never depends on who sends its message. A row written before
tenants were stored has none; its tenant is its job, as every message's group was then.

A tenant is ``<job id>#<n>``, n a stable hash of the task id modulo the count (a count of 1 is the
job id alone). A job id has no ``#`` (``task_ids.validate_job_id``), so the job is the text before
it. ``MessageGroupId`` is at most 128 characters, alphanumerics and punctuation
(https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html): a job id
of more than 125 characters gives up its last ones to the suffix, so two such jobs with the same first
125 characters share their tenants, which only evens out their share of the slots.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

from outreach.errors import MalformedFieldError

# Sites a job is spread over tenants for: a job of s sites gets ceil(TENANT_SITES / s) tenants.
TENANT_SITES = 1000
# The most tenants one job is spread over; at most two decimal digits of suffix.
MAX_TENANTS = 32
# SendMessage's bound on MessageGroupId (see the module docstring).
MESSAGE_GROUP_CHARS = 128
_SEPARATOR = "#"
# Alphanumerics and the punctuation SendMessage lists: !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~
_MESSAGE_GROUP = re.compile(r"[A-Za-z0-9!-/:-@\[-`{-~]{1,128}")


def tenant_count(sites: int) -> int:
    """The tenants a job of ``sites`` sites is spread over: ceil(TENANT_SITES / sites), 1 to MAX_TENANTS."""
    if sites < 1:
        raise ValueError(f"a job has at least one site, got {sites}")
    return max(1, min(MAX_TENANTS, math.ceil(TENANT_SITES / sites)))


def tenant_name(job_id: str, index: int, tenants: int) -> str:
    """Tenant ``index`` of ``tenants`` of ``job_id``: the job id for a single tenant, else ``<job>#<n>``."""
    if not 0 <= index < tenants <= MAX_TENANTS:
        raise ValueError(f"tenant {index} of {tenants} (at most {MAX_TENANTS})")
    if tenants == 1:
        return job_id
    suffix = f"{_SEPARATOR}{index}"
    return job_id[: MESSAGE_GROUP_CHARS - len(suffix)] + suffix


def tenant_of(job_id: str, task_id: str, tenants: int) -> str:
    """The tenant of task ``task_id`` in ``job_id`` spread over ``tenants``: the same on every call.

    The hash is of other digits of the task id's SHA-256 than its ``open-tasks`` shard's
    (``task_model.shard_of``), so the two do not follow each other.
    """
    index = int(hashlib.sha256(task_id.encode()).hexdigest()[8:16], 16) % tenants
    return tenant_name(job_id, index, tenants)


def _is_tenant_of(value: str, job_id: str) -> bool:
    if value == job_id:
        return True
    prefix, separator, index = value.rpartition(_SEPARATOR)
    if not separator or not index.isdigit() or index != str(int(index)) or int(index) >= MAX_TENANTS:
        return False
    return bool(prefix) and value == tenant_name(job_id, int(index), MAX_TENANTS)


def row_tenant(value: Any, job_id: str) -> str:
    """The tenant a row's ``message_group`` names, or ``job_id`` for a row that has none.

    ``MalformedFieldError`` (field ``message_group``) unless it is a ``MessageGroupId`` (1 to 128
    alphanumerics and punctuation) and one of ``job_id``'s tenants.
    """
    if value is None:
        return job_id
    if not isinstance(value, str) or not _MESSAGE_GROUP.fullmatch(value):
        shown = value[:40] if isinstance(value, str) else type(value).__name__
        raise MalformedFieldError(
            "message_group", f"not 1-{MESSAGE_GROUP_CHARS} alphanumerics and punctuation: {shown!r}"
        )
    if not _is_tenant_of(value, job_id):
        raise MalformedFieldError("message_group", f"not a tenant of its job: {value[:40]!r}")
    return value
