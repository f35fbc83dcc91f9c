"""``job status``: a job's counts, progress, lifetime rate and failures by reason, optionally watched."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

from rich.console import Console

from outreach import clock, task_store
from outreach.task_model import Status, Task
from outreach_operator import task_queries
from outreach_operator.cli.follow import JobProgress, follow_job, snapshot
from outreach_operator.cli.job_view import (
    FailureGroup,
    failures_renderable,
    live_progress,
    progress_renderable,
    show_progress,
)
from outreach_operator.cli.output import BadInput, Failed, Session
from outreach_operator.errors import FollowTimeoutError


def job_status(s: Session, job_id: str, watch: bool, interval: float, timeout: float | None) -> None:
    """The job's reading (followed until done with ``watch``) and its failure groups, emitted."""
    s.targets.require("tasks_table", "--table")
    progress = _lifetime_rate(job_id, snapshot(job_id))
    if progress.total == 0 and task_store.get_job(job_id) is None:
        raise BadInput(f"no job {job_id!r} in {s.targets.tasks_table}")
    if watch and not progress.is_done:
        progress = watch_job(s, job_id, interval=interval, timeout=timeout)
    groups = failure_groups(job_id) if progress.counts.get(Status.FAILED.value, 0) else []
    data = {**progress.as_dict(), "failures": [g.as_dict() for g in groups]}

    def render(console: Console) -> None:
        if not watch:
            console.print(progress_renderable(progress))
        if groups:
            console.print(failures_renderable(groups))

    s.emit(data, render)


def failure_groups(job_id: str) -> list[FailureGroup]:
    """The job's Failed tasks grouped by the reason before the detail, largest group first."""
    failed = task_queries.job_tasks_with_status(job_id, Status.FAILED)
    counts: Counter[str] = Counter()
    example: dict[str, Task] = {}
    for task in sorted(failed, key=lambda t: t.task_id):
        reason = (task.failure_reason or "unknown").split(":", 1)[0].strip() or "unknown"
        counts[reason] += 1
        example.setdefault(reason, task)
    return [
        FailureGroup(reason=r, count=n, example_url=example[r].url, example_task=example[r].task_id)
        for r, n in counts.most_common()
    ]


def _lifetime_rate(job_id: str, progress: JobProgress) -> JobProgress:
    row = task_store.get_job(job_id)
    if row is None or "created_at" not in row or not progress.terminal:
        return progress
    started = datetime.fromisoformat(str(row["created_at"]).replace("Z", "+00:00"))
    if started.tzinfo is None:
        started = started.replace(tzinfo=UTC)
    elapsed = clock.now() - started.timestamp()
    if elapsed <= 0:
        return progress
    return JobProgress(
        job_id=job_id,
        counts=progress.counts,
        elapsed_seconds=elapsed,
        rate_per_second=progress.terminal / elapsed,
    )


def watch_job(s: Session, job_id: str, *, interval: float, timeout: float | None) -> JobProgress:
    """Follow the job with a live display (silent with --json); the final reading is returned."""
    try:
        if s.as_json:
            return follow_job(job_id, lambda _: None, interval=interval, timeout=timeout)
        with live_progress(s.out) as live:
            return follow_job(job_id, lambda p: show_progress(live, p), interval=interval, timeout=timeout)
    except FollowTimeoutError as exc:
        raise Failed(str(exc)) from exc
