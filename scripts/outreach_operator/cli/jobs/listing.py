"""``job list``: the most recent jobs with their counts per status (the ``jobs`` index, then each shown
job's counter shards; never a Scan)."""

from __future__ import annotations

from outreach.task_model import Status
from outreach_operator import task_queries
from outreach_operator.cli.output import Session, table


def list_recent_jobs(s: Session, limit: int) -> None:
    """The ``limit`` most recent jobs, newest first, each with its total and counts, emitted."""
    s.targets.require("tasks_table", "--table")
    jobs = task_queries.list_jobs()
    shown = [task_queries.with_counts(job) for job in jobs[:limit]]
    for entry in shown:
        entry["total"] = sum(int(entry[st.value]) for st in Status)
    columns = ["job_id", "created_at", "created_by", "total", *(st.value for st in Status)]
    s.emit(
        shown,
        lambda c: c.print(
            table(f"{len(shown)} of {len(jobs)} jobs", columns, [[j.get(k) for k in columns] for j in shown])
        ),
    )
