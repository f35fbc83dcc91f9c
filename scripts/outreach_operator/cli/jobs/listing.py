"""``job list``: the most recent jobs with their counts per status (a Scan of the table)."""

from __future__ import annotations

from outreach.task_model import Status
from outreach_operator import task_queries
from outreach_operator.cli.output import Session, table


def list_recent_jobs(s: Session, limit: int) -> None:
    """The ``limit`` most recent jobs, newest first, each with its total and counts, emitted."""
    s.targets.require("tasks_table", "--table")
    jobs = sorted(
        task_queries.list_jobs(), key=lambda j: (str(j.get("created_at", "")), j["job_id"]), reverse=True
    )
    shown = jobs[:limit]
    for entry in shown:
        entry["total"] = sum(int(entry[st.value]) for st in Status)
    columns = ["job_id", "created_at", "created_by", "total", *(st.value for st in Status)]
    s.emit(
        shown,
        lambda c: c.print(
            table(f"{len(shown)} of {len(jobs)} jobs", columns, [[j.get(k) for k in columns] for j in shown])
        ),
    )
