"""``campaign status``: emails per step and status, why emails were not sent, the next send time."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.console import Console

from outreach import task_store
from outreach.task_model import Status
from outreach_operator import task_queries
from outreach_operator.cli.output import BadInput, Session, table


def campaign_status(s: Session, campaign_id: str) -> None:
    """The campaign's counters and its email tasks read once (a Scan of the table), emitted."""
    s.targets.require("tasks_table", "--table")
    row = task_store.get_job(campaign_id)
    counts = task_store.job_counts(campaign_id)
    if row is None and not any(counts.values()):
        raise BadInput(f"no campaign {campaign_id!r} in {s.targets.tasks_table}")
    tasks = task_queries.campaign_tasks(campaign_id)
    per_step: dict[int, Counter[str]] = {}
    reasons: Counter[tuple[str, str]] = Counter()
    for task in tasks:
        assert task.email is not None  # Task.from_item gives every email row its email fields
        per_step.setdefault(task.email.step, Counter())[task.status.value] += 1
        if task.status in (Status.FAILED, Status.CANCELLED):
            reason = (task.failure_reason or "unknown").split(":", 1)[0].strip() or "unknown"
            reasons[(task.status.value, reason)] += 1
    pending = [t.email.send_at for t in tasks if t.status is Status.PENDING and t.email is not None]
    data: dict[str, Any] = {
        "campaign_id": campaign_id,
        "created_at": None if row is None else row.get("created_at"),
        "created_by": None if row is None else row.get("created_by"),
        "source": None if row is None else row.get("source"),
        "counts": counts,
        "steps": [
            {"step": step, **{st.value: per_step[step][st.value] for st in Status}}
            for step in sorted(per_step)
        ],
        "reasons": [{"status": st, "reason": r, "emails": n} for (st, r), n in reasons.most_common()],
        "next_send_at": min(pending) if pending else None,
    }

    def render(console: Console) -> None:
        columns = ["step", *(st.value for st in Status)]
        rows = [[entry[c] for c in columns] for entry in data["steps"]]
        rows.append(["all (counters)", *(counts[st.value] for st in Status)])
        console.print(table(f"campaign {campaign_id}", columns, rows))
        if data["reasons"]:
            console.print(
                table(
                    "why not sent",
                    ["status", "reason", "emails"],
                    [[r["status"], r["reason"], r["emails"]] for r in data["reasons"]],
                )
            )
        if data["next_send_at"]:
            console.print(f"next send: {data['next_send_at']}")

    s.emit(data, render)
