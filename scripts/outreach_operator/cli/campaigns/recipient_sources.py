"""Where a schedule's recipients come from: a CSV file, or a finished scrape job's results."""

from __future__ import annotations

from pathlib import Path

from outreach import task_store
from outreach.task_model import Status
from outreach_operator.bounded_lines import file_sha256
from outreach_operator.campaigns.recipients import (
    Recipients,
    RecipientsFileError,
    read_recipients_csv,
    recipients_from_results,
)
from outreach_operator.cli.jobs.results import result_documents, result_keys, result_task_id
from outreach_operator.cli.output import BadInput, Session


def from_csv(path: Path) -> tuple[Recipients, str]:
    """The recipients of a CSV file, and the source a job records for them (name and sha256)."""
    try:
        recipients = read_recipients_csv(path)
    except RecipientsFileError as exc:
        raise BadInput(str(exc)) from exc
    return recipients, f"{path.name} sha256:{file_sha256(path)}"  # in chunks: the file may be large


def from_job(s: Session, job_id: str) -> tuple[Recipients, str]:
    """The recipients a finished scrape job's results give (as ``outreach job export`` reads them)."""
    bucket = s.targets.require("results_bucket", "--results-bucket")
    counts = task_store.job_counts(job_id)
    if not any(counts.values()) and task_store.get_job(job_id) is None:
        raise BadInput(f"no job {job_id!r} in {s.targets.tasks_table}")
    still_open = counts[Status.PENDING.value] + counts[Status.RUNNING.value]
    if still_open:
        raise BadInput(f"job {job_id} is not finished: {still_open} tasks are still open")
    keys = result_keys(bucket, job_id)
    pairs = ((result_task_id(job_id, key), document) for key, document in result_documents(bucket, keys))
    return recipients_from_results(pairs), f"job {job_id}"
