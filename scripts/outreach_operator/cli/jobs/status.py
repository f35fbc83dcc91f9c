"""``job status``: a job's counts, progress, lifetime rate and failures by reason, optionally watched.

The failures by reason come from the job's counter shards (``task_store.failure_counts``: one
BatchGetItem), each group with the first task that failed for it, read by key (one BatchGetItem of
the groups' examples): never from the tasks, so the time does not grow with the table or the job.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from rich.console import Console

from outreach import clock, task_store
from outreach.task_model import Status
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
    counted = task_store.failure_counts(job_id) if progress.counts.get(Status.FAILED.value, 0) else None
    groups = failure_groups(counted) if counted is not None else []
    uncounted = counted.uncounted if counted is not None else 0
    data = {**progress.as_dict(), "failures": [g.as_dict() for g in groups], "failures_uncounted": uncounted}

    def render(console: Console) -> None:
        if not watch:
            console.print(progress_renderable(progress))
        if groups:
            console.print(failures_renderable(groups))
        if uncounted:
            failed = progress.counts.get(Status.FAILED.value, 0)
            console.print(
                f"the reason groups count {failed - uncounted:,} of the {failed:,} Failed tasks "
                f"(uncounted {uncounted:,}: failed before the reason counters)"
            )

    s.emit(data, render)


def failure_groups(counted: task_store.FailureCounts) -> list[FailureGroup]:
    """The job's Failed tasks per reason group (``task_store.reason_group``), largest group first, each
    with the first task that failed for it and is still Failed in it."""
    shown = sorted(((g, n) for g, n in counted.groups.items() if n > 0), key=lambda gn: (-gn[1], gn[0]))
    examples = _examples({group: counted.examples.get(group, []) for group, _ in shown})
    return [
        FailureGroup(
            reason=group,
            count=count,
            example_url=_text(examples[group].get("url")) if group in examples else None,
            example_task=str(examples[group]["task_id"]) if group in examples else None,
        )
        for group, count in shown
    ]


def _examples(candidates: Mapping[str, list[str]]) -> dict[str, dict[str, Any]]:
    """Per group, the row of its earliest candidate that is still Failed in the group; a candidate an
    operator requeued (or that failed again for another reason) gives way to the next shard's. Each
    round is one BatchGetItem of one candidate per group still without an example."""
    found: dict[str, dict[str, Any]] = {}
    for round_ in range(task_store.COUNTER_SHARDS):
        asked = {g: ids[round_] for g, ids in candidates.items() if g not in found and round_ < len(ids)}
        if not asked:
            break
        rows = task_store.batch_get(list(asked.values()), attributes=("url", "status", "failure_reason"))
        by_id = {str(row["task_id"]): row for row in rows}
        for group, task_id in asked.items():
            row = by_id.get(task_id)
            if row is None or row.get("status") != Status.FAILED.value:
                continue  # requeued since (or erased)
            if task_store.reason_group(_text(row.get("failure_reason"))) == group:
                found[group] = row
    return found


def _text(value: object) -> str | None:
    return None if value is None else str(value)


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
