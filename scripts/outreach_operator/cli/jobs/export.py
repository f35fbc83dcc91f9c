"""``job export``: a job's scraped results to a .jsonl or .csv file (CSV cells never a formula)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from outreach import task_store
from outreach.task_model import Status
from outreach_operator.cli.jobs.progress import progress_bar
from outreach_operator.cli.jobs.results import result_documents, result_keys, result_task_id
from outreach_operator.cli.output import BadInput, Session
from outreach_operator.cli.spreadsheet_cells import QUOTING as CSV_QUOTING
from outreach_operator.cli.spreadsheet_cells import text_cell

_CSV_COLUMNS = (
    "task_id",
    "result_key",
    "final_url",
    "title",
    "description",
    "language",
    "emails",
    "phones",
    "social_links",
    "pages",
)


def export_results(s: Session, job_id: str, out_path: Path, with_text: bool, force: bool) -> None:
    """Write one row per result of the job to ``out_path`` (never over a file without ``force``)."""
    bucket = s.targets.require("results_bucket", "--results-bucket")
    suffix = out_path.suffix.lower()
    if suffix not in {".jsonl", ".csv"}:
        raise BadInput(f"--out must end in .jsonl or .csv, not {out_path.name!r}")
    keys = result_keys(bucket, job_id)
    written = 0
    try:
        out = out_path.open("w" if force else "x", encoding="utf-8", newline="")
    except FileExistsError as exc:
        raise BadInput(f"{out_path} exists: give --force to overwrite it") from exc
    with out as handle, progress_bar(s) as bar:
        step = bar.add_task(f"export {job_id}", total=len(keys))
        writer = (
            csv.DictWriter(handle, fieldnames=_CSV_COLUMNS, extrasaction="ignore", quoting=CSV_QUOTING)
            if suffix == ".csv"
            else None
        )
        if writer is not None:
            writer.writeheader()
        for key, document in result_documents(bucket, keys):
            row = _export_row(job_id, key, document, with_text and writer is None)
            if writer is not None:
                writer.writerow({k: _csv_cell(row.get(k)) for k in _CSV_COLUMNS})
            else:
                handle.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
            written += 1
            bar.advance(step)
    finished = task_store.job_counts(job_id)[Status.FINISHED.value] if s.targets.tasks_table else None
    report = {"job_id": job_id, "out": str(out_path), "exported": written, "finished_tasks": finished}
    s.emit(
        report,
        lambda c: c.print(
            f"exported {written:,} results of job {job_id} to {out_path}"
            + ("" if finished is None else f" (the job counts {finished:,} finished tasks)")
        ),
    )


def _export_row(job_id: str, key: str, document: dict[str, Any], with_text: bool) -> dict[str, Any]:
    row: dict[str, Any] = {"task_id": result_task_id(job_id, key), "result_key": key}
    row.update({k: v for k, v in document.items() if k != "pages" and (with_text or k != "text")})
    row["pages"] = len(document.get("pages", []))
    return row


def _csv_cell(value: Any) -> str:
    """The CSV cell of a result field, never one a spreadsheet evaluates (``spreadsheet_cells``)."""
    if isinstance(value, list):
        return text_cell(";".join(_csv_item(v) for v in value))
    if isinstance(value, dict):
        return text_cell(json.dumps(value, sort_keys=True))
    return "" if value is None else text_cell(str(value))


def _csv_item(value: Any) -> str:
    """An e-mail as its address, a phone as its E.164 number (`` (fax)`` for a fax), else JSON or text."""
    if isinstance(value, dict):
        if "address" in value:
            return str(value["address"])
        if "e164" in value:
            return f"{value['e164']} (fax)" if value.get("kind") == "fax" else str(value["e164"])
        return json.dumps(value, sort_keys=True)
    return str(value)
