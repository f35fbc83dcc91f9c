"""Re-dispatch from the table: a scrape task still Pending gets the message the dispatcher never sent.

Replays read the table, not the stream (stream records expire after 24 hours): only a task whose row
is still a Pending scrape task is sent, as the same message the dispatcher sends (the tenant its
row names as its message group, :mod:`outreach.scrape_messages`). A
task that moved on meanwhile needs nothing; a second message for a task already dispatched is
acknowledged by the scraper as a duplicate, so a replay never does work twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from outreach import clients, clock, task_store
from outreach.scrape_messages import scrape_batch_entry
from outreach.task_model import Kind, Status
from outreach_operator import task_queries


@dataclass
class Redispatch:
    """What one re-dispatch found and did, per task id."""

    to_send: list[str] = field(default_factory=list)
    # The tenant of each task to send (``Task.tenant``): its message group.
    groups: dict[str, str] = field(default_factory=dict)
    sent: list[str] = field(default_factory=list)
    not_pending: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "to_send": self.to_send,
            "sent": self.sent,
            "not_pending": self.not_pending,
            "missing": self.missing,
        }


def plan(task_ids: Iterable[str]) -> Redispatch:
    """Which of ``task_ids`` would be sent (still Pending scrape tasks), and why the rest would not."""
    result = Redispatch()
    for task_id in dict.fromkeys(task_ids):
        task = task_store.get_task(task_id)
        if task is None:
            result.missing.append(task_id)
        elif task.kind != Kind.SCRAPE.value or task.status is not Status.PENDING:
            result.not_pending[task_id] = task.status.value
        else:
            result.to_send.append(task_id)
            result.groups[task_id] = task.tenant
    return result


def send(queue_url: str, task_ids: list[str], result: Redispatch) -> None:
    """Send one message per task, ten at a time; ``result.sent`` grows as SQS accepts them.

    Raises RuntimeError naming the entries SQS refused; everything in ``result.sent`` was sent.
    """
    for start in range(0, len(task_ids), 10):
        chunk = task_ids[start : start + 10]
        response = clients.sqs().send_message_batch(
            QueueUrl=queue_url,
            Entries=[scrape_batch_entry(str(i), tid, result.groups[tid]) for i, tid in enumerate(chunk)],
        )
        result.sent.extend(chunk[int(entry["Id"])] for entry in response.get("Successful", []))
        failed = response.get("Failed", [])
        if failed:
            refused = [chunk[int(entry["Id"])] for entry in failed]
            raise RuntimeError(
                f"SQS refused {len(refused)} messages: {failed[0].get('Code')}: {', '.join(refused)}"
            )


def redispatch(queue_url: str, task_ids: Iterable[str], *, dry_run: bool = False) -> Redispatch:
    """Send the still-Pending tasks among ``task_ids`` (with ``dry_run`` only say which)."""
    result = plan(task_ids)
    if not dry_run:
        send(queue_url, result.to_send, result)
    return result


def pending_in_window(batch_info: Mapping[str, Any], jobs: Sequence[str] | None = None) -> list[str]:
    """Pending scrape tasks last changed while a stream batch arrived (its ``DDBStreamBatchInfo``);
    with ``jobs``, only those of these jobs.

    For dead-letter records that name a batch but not its records. A record arrives just after its
    write, and arrival times are approximate to the second, so the window reaches one second to
    either side of the batch's arrivals. The window holds every job's tasks written then, which is
    why ``dlq replay pipe`` passes the jobs it is scoped to.
    """

    def parse(text: Any) -> datetime:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00"))

    start = clock.iso(
        (parse(batch_info["approximateArrivalOfFirstRecord"]) - timedelta(seconds=1)).timestamp()
    )
    end = clock.iso((parse(batch_info["approximateArrivalOfLastRecord"]) + timedelta(seconds=1)).timestamp())
    found = task_queries.open_tasks_between(Kind.SCRAPE, Status.PENDING, start, end, job_ids=jobs)
    return [t.task_id for t in found]
