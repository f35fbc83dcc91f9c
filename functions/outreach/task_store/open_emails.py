"""A campaign's open emails as a cancel reads them: the ``campaign-open`` index, only the fields it needs.

``campaign cancel`` moves every Pending email of a campaign to Cancelled with the conditional write of
the ``cancel`` rule, and reports each email it moved. What that write and its counter shard need of a
task is what ``transitions`` holds it to (id, kind, campaign, status, ``updated_at``, lease holder,
``open-tasks`` shard, step and failure reason); the report adds recipient, send time and schedule
name. The message, the sequence rules and the rest of the row are never needed, so the Query names
exactly those attributes in its ``ProjectionExpression``: DynamoDB returns only the named attributes,
and reads (and bills) the whole entries all the same ("The projection expression has no effect on
provisioned throughput consumption",
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ProjectionExpressions.html),
so the pages carry a fraction of a row each and a big campaign's cancel is written sooner.

Each entry is checked as ``Task.from_item`` checks those fields, and one that is not what the task
store writes raises ``MalformedFieldError`` naming its field and task: the cancel writes nothing
rather than a counter move computed from a field nobody can trust.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from outreach import config
from outreach.errors import MalformedFieldError
from outreach.task_model import Kind, Status, addressed_fields, open_key_shard, text_field, whole_number_field
from outreach.task_store.campaign_open import campaign_open_request
from outreach.task_store.items import IndexRead, rows

# The attributes a cancel reads of each email: its write's condition and counters, then its report.
OPEN_EMAIL_ATTRIBUTES = (
    "task_id", "kind", "job_id", "status", "updated_at", "lease_owner", "open_key", "step",
    "failure_reason", "recipient", "send_at", "schedule_name",
)  # fmt: skip


@dataclass(frozen=True)
class OpenEmail:
    """An open email task as the ``campaign-open`` index returns its projected fields."""

    task_id: str
    kind: str
    job_id: str
    status: Status
    updated_at: str
    lease_owner: str | None
    open_shard: int | None
    step: int
    failure_reason: str | None
    recipient: str
    send_at: str
    schedule_name: str

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> OpenEmail:
        """The fields of a projected entry; ``MalformedFieldError`` naming the first wrong one."""
        task_id = text_field(item, "task_id")
        try:
            return cls._checked(task_id, item)
        except MalformedFieldError as exc:
            raise MalformedFieldError(exc.field, f"{exc.reason} (task {task_id[:200]})") from exc

    @classmethod
    def _checked(cls, task_id: str, item: dict[str, Any]) -> OpenEmail:
        if item.get("kind") != Kind.EMAIL.value:
            raise MalformedFieldError("kind", "not an email task")
        status_text = text_field(item, "status")
        if status_text not in {s.value for s in Status}:
            raise MalformedFieldError("status", f"not a status: {status_text[:40]!r}")
        recipient, send_at, schedule_name = addressed_fields(item, task_id)
        reason = item.get("failure_reason")
        if reason is not None and not isinstance(reason, str):
            raise MalformedFieldError("failure_reason", "not text")
        owner = item.get("lease_owner")
        return cls(
            task_id=task_id,
            kind=Kind.EMAIL.value,
            job_id=text_field(item, "job_id"),
            status=Status(status_text),
            updated_at=text_field(item, "updated_at"),
            lease_owner=None if owner is None else str(owner),
            open_shard=open_key_shard(item["open_key"]) if "open_key" in item else None,
            step=whole_number_field("step", item.get("step"), 1),
            failure_reason=reason,
            recipient=recipient,
            send_at=send_at,
            schedule_name=schedule_name,
        )


def open_emails(campaign_id: str, status: Status, *, cost: IndexRead | None = None) -> Iterator[OpenEmail]:
    """The campaign's email tasks in an open ``status``, their projected fields, shard after shard
    (each shard in ``send_at`` order), lazily: only the campaign's own entries are read."""
    names = {f"#p{i}": name for i, name in enumerate(OPEN_EMAIL_ATTRIBUTES)}
    for shard in range(config.open_index_shards()):
        request = campaign_open_request(campaign_id, status, shard)
        request["ExpressionAttributeNames"].update(names)
        request["ProjectionExpression"] = ", ".join(names)
        for item in rows("query", request, cost=cost):
            yield OpenEmail.from_item(item)
