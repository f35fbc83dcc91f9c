"""The tasks table: every status change is a conditional write, and the rules live here.

- ``items``: attribute values, and the one paginated reader (Query, Scan, BatchGetItem) every read of
  the table goes through.
- ``counters``: a job's tasks per status (and per step and reason group, with each group's first
  failed task), in shards moved in the same transaction as the status.
- ``creation`` and ``job_rows``: a job's Pending tasks, created once, and the job's own row.
- ``rules`` and ``transitions``: the declared rule of each verb, and the verbs applying them;
  ``transitions_batched``: one rule applied to many tasks in few transactions (an operator's cancel).
- ``reads``: a task by id, the task a message names, open tasks through the sparse ``open-tasks``
  index (reconcilers query it instead of scanning the table), and every email to an address through
  the ``recipient-emails`` index.
- ``campaign_open``: one campaign's open emails through the sparse ``campaign-open`` index (by status
  and send time: the next send time), never another campaign's; ``open_emails``: the fields of them a
  cancel needs, projected.
- ``email_events``: SES's events marked on an email task and counted per step, exactly once.
"""

from outreach.task_store.campaign_open import (
    CAMPAIGN_OPEN_INDEX,
    CAMPAIGN_OPEN_KEY,
    campaign_open_key,
    next_send_at,
)
from outreach.task_store.counters import (
    COUNTER_SHARDS,
    FailureCounts,
    StepCounts,
    counter_key,
    counter_shard,
    counter_update,
    failure_counts,
    job_counts,
    reason_group,
    step_counter,
    step_counts,
)
from outreach.task_store.creation import (
    MAX_ROW_BYTES,
    ROW_GROWTH_BYTES,
    JobCreation,
    create_email_tasks,
    create_scrape_job,
    email_row_size,
)
from outreach.task_store.email_events import (
    EmailEvent,
    email_event_counts,
    event_counter,
    record_email_event,
)
from outreach.task_store.items import IndexRead, batch_get, from_item, pages, rows, to_av, to_avs
from outreach.task_store.job_rows import (
    JOBS_INDEX,
    check_job_kind,
    get_job,
    job_key,
    job_kind_of,
    job_rows,
    record_job,
)
from outreach.task_store.open_emails import OpenEmail, open_emails
from outreach.task_store.reads import (
    OPEN_TASKS_INDEX,
    RECIPIENT_EMAILS_INDEX,
    REPLY_HANDLES_INDEX,
    email_task_by_reply_handle,
    email_tasks_of,
    email_tasks_to,
    get_task,
    load_task,
    open_index_rows,
    open_tasks,
)
from outreach.task_store.rules import LEASE_FIELDS, MAY_HAVE_BEEN_SENT, RULES, Holder, Rule
from outreach.task_store.transitions import (
    TERMINAL_RETENTION_SECONDS,
    apply,
    cancel_for_stop,
    claim,
    claim_email,
    defer_email,
    deferral_cause,
    fail,
    fail_after_attempts,
    fail_malformed,
    fail_stale,
    finish,
    finish_email,
    mark_redispatched,
    postpone_email,
    record_retry,
    requeue_stuck,
    return_email_to_pending,
    skip_email,
)
from outreach.task_store.transitions_batched import BatchOutcome, apply_batched

__all__ = [
    "CAMPAIGN_OPEN_INDEX",
    "CAMPAIGN_OPEN_KEY",
    "COUNTER_SHARDS",
    "JOBS_INDEX",
    "LEASE_FIELDS",
    "MAX_ROW_BYTES",
    "MAY_HAVE_BEEN_SENT",
    "OPEN_TASKS_INDEX",
    "RECIPIENT_EMAILS_INDEX",
    "REPLY_HANDLES_INDEX",
    "ROW_GROWTH_BYTES",
    "RULES",
    "TERMINAL_RETENTION_SECONDS",
    "BatchOutcome",
    "EmailEvent",
    "FailureCounts",
    "Holder",
    "IndexRead",
    "JobCreation",
    "OpenEmail",
    "Rule",
    "StepCounts",
    "apply",
    "apply_batched",
    "batch_get",
    "campaign_open_key",
    "cancel_for_stop",
    "check_job_kind",
    "claim",
    "claim_email",
    "counter_key",
    "counter_shard",
    "counter_update",
    "create_email_tasks",
    "create_scrape_job",
    "defer_email",
    "deferral_cause",
    "email_event_counts",
    "email_row_size",
    "email_task_by_reply_handle",
    "email_tasks_of",
    "email_tasks_to",
    "event_counter",
    "fail",
    "fail_after_attempts",
    "fail_malformed",
    "fail_stale",
    "failure_counts",
    "finish",
    "finish_email",
    "from_item",
    "get_job",
    "get_task",
    "job_counts",
    "job_key",
    "job_kind_of",
    "job_rows",
    "load_task",
    "mark_redispatched",
    "next_send_at",
    "open_emails",
    "open_index_rows",
    "open_tasks",
    "pages",
    "postpone_email",
    "reason_group",
    "record_email_event",
    "record_job",
    "record_retry",
    "requeue_stuck",
    "return_email_to_pending",
    "rows",
    "skip_email",
    "step_counter",
    "step_counts",
    "to_av",
    "to_avs",
]
