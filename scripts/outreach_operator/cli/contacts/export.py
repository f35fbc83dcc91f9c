"""``contacts export``: the ledger's records to a CSV file a spreadsheet shows as text, and import reads back.

A record's ``why`` is free text from a stranger (an SES diagnostic, a do-not-contact file's reason),
so every cell goes through ``spreadsheet_cells.text_cell`` (a cell that could start a formula gets a
leading ``'``) and every field is quoted (``csv.QUOTE_ALL``), as ``job export`` does. The columns
``email`` and ``domain`` (one of them filled per row) and ``why`` are the ones ``contacts import``
reads, and it takes the ``'`` off again (``spreadsheet_cells.plain_value``), so an export reads back.
By default only the records that stop sending are written (``--all``: every record). The file is
never overwritten without ``--force``.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from outreach_operator.cli.jobs.progress import progress_bar
from outreach_operator.cli.output import BadInput, Session
from outreach_operator.cli.spreadsheet_cells import QUOTING, text_cell
from outreach_operator.contacts import records

COLUMNS = (
    "email",
    "domain",
    "state",
    "since",
    "why",
    "source",
    "campaign_id",
    "last_contacted_at",
    "last_campaign_id",
    "replied_campaigns",
    "replied_at",
    "away_until",
    "updated_at",
    "contact_key",
)


def _cell_text(value: Any) -> str:
    """A stored value as cell text: a set (``replied_campaigns``) as its sorted members, space-separated."""
    if value is None:
        return ""
    if isinstance(value, set | frozenset | list | tuple):
        return " ".join(sorted(str(item) for item in value))
    return str(value)


def export_row(record: dict[str, Any]) -> dict[str, str]:
    """A record as one CSV row, every cell one no spreadsheet evaluates."""
    key = str(record.get("contact_key", ""))
    kind, _, value = key.partition("#")
    row = {name: _cell_text(record.get(name)) for name in COLUMNS}
    row["email"] = value if kind == "address" else ""
    row["domain"] = value if kind == "domain" else ""
    return {name: text_cell(cell) for name, cell in row.items()}


def export_contacts(s: Session, out_path: Path, everyone: bool, force: bool) -> None:
    """Write the ledger's records (stops only unless ``everyone``) to ``out_path``."""
    s.targets.require("contacts_table", "--contacts-table")
    if out_path.suffix.lower() != ".csv":
        raise BadInput(f"--out must end in .csv, not {out_path.name!r}")
    try:
        out = out_path.open("w" if force else "x", encoding="utf-8", newline="")
    except FileExistsError as exc:
        raise BadInput(f"{out_path} exists: give --force to overwrite it") from exc
    written = 0
    with out as handle, progress_bar(s) as bar:
        step = bar.add_task("export contacts", total=None)
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, quoting=QUOTING)
        writer.writeheader()
        for record in records.records(stops_only=not everyone):
            writer.writerow(export_row(record))
            written += 1
            bar.advance(step)
    report = {"out": str(out_path), "exported": written, "stops_only": not everyone}
    what = "records" if everyone else "stopped addresses and domains"
    s.emit(report, lambda c: c.print(f"exported {written:,} {what} to {out_path}"))
