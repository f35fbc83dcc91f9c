"""A do-not-contact CSV file: the addresses and domains to block, every bad row named by row and field.

The file is a stranger's text (a list bought, exported from a CRM, edited in a spreadsheet), so it is
bounded before it is read and every cell is data:

- *Bounded.* At most ``MAX_FILE_BYTES`` (16 MiB, checked before reading), ``MAX_ROWS`` data rows
  (100,000), lines of ``bounded_lines.MAX_LINE_CHARS`` and cells of ``MAX_CELL_CHARS`` (1,000; a
  ``why`` of ``MAX_WHY_CHARS``, 400: the ledger keeps 500 with who imported it). A file past a bound
  is refused whole, naming the bound; a cell past its bound refuses its row.
- *A header row* with an ``email`` column, a ``domain`` column, or both (names compared without case
  or surrounding spaces); an optional ``why`` column gives each row its reason. Other columns are
  ignored, so a file ``contacts export`` wrote reads back. A header naming one of these twice is
  refused (the later column would silently win).
- *Each data row* names exactly one address (``email``) or one domain (``domain``). A row that names
  none, both, an address that is not one SES could send to, or a domain that is not one, is a bad
  row: its row number (the CSV line), the field and the reason. Empty rows are skipped; a row naming a
  key an earlier row named is counted as a duplicate of that row.
- *Cells are data.* ``=HYPERLINK(...)`` in an ``email`` cell is an invalid address, in a ``why`` cell a
  reason stored as written; nothing is evaluated. A cell ``contacts export`` quoted (``'`` before a
  formula start, ``spreadsheet_cells.text_cell``) is read as the value it came from.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from outreach_operator.bounded_lines import bounded_lines
from outreach_operator.cli.contacts.reasons import OPERATOR_WHY_CHARS
from outreach_operator.cli.contacts.subjects import Subject, SubjectError, address_subject, domain_subject
from outreach_operator.cli.spreadsheet_cells import plain_value
from outreach_operator.errors import LineTooLongError
from outreach_operator.report_values import shorten

MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_ROWS = 100_000
MAX_CELL_CHARS = 1_000
MAX_WHY_CHARS = OPERATOR_WHY_CHARS
COLUMNS = ("email", "domain", "why")


class DoNotContactFileError(ValueError):
    """The file as a whole cannot be read: too large, too many rows, no usable header, not UTF-8 CSV."""


@dataclass(frozen=True)
class Entry:
    """One row to block: its CSV ``row``, its ``subject`` and its ``why`` ('' when the row gives none)."""

    row: int
    subject: Subject
    why: str


@dataclass(frozen=True)
class BadRow:
    row: int
    field: str
    value: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"row": self.row, "field": self.field, "value": self.value, "reason": self.reason}


@dataclass
class DoNotContactList:
    entries: list[Entry] = field(default_factory=list)
    bad: list[BadRow] = field(default_factory=list)
    # (row, the earlier row that named the same key)
    duplicates: list[tuple[int, int]] = field(default_factory=list)


def _columns(path: Path, header: list[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for index, name in enumerate(header):
        column = plain_value(name).strip().lower()
        if column not in COLUMNS:
            continue
        if column in found:
            raise DoNotContactFileError(
                f"{path}: columns {found[column] + 1} and {index + 1} are both {column!r}; remove one"
            )
        found[column] = index
    if "email" not in found and "domain" not in found:
        shown = ", ".join(shorten(column, 40) for column in header[:20])
        raise DoNotContactFileError(f"{path}: no 'email' or 'domain' column in the header (columns: {shown})")
    return found


def _cell(row: list[str], columns: dict[str, int], name: str) -> str:
    index = columns.get(name)
    if index is None or index >= len(row):
        return ""
    return plain_value(row[index]).strip()


def _entry(line: int, row: list[str], columns: dict[str, int]) -> Entry | BadRow:
    cells = {name: _cell(row, columns, name) for name in COLUMNS}
    for name, value in cells.items():
        if len(value) > MAX_CELL_CHARS:
            return BadRow(line, name, shorten(value), f"longer than {MAX_CELL_CHARS:,} characters")
    if len(cells["why"]) > MAX_WHY_CHARS:
        return BadRow(line, "why", shorten(cells["why"]), f"longer than {MAX_WHY_CHARS} characters")
    email, domain = cells["email"], cells["domain"]
    if email and domain:
        return BadRow(line, "domain", shorten(domain), "give an email or a domain in a row, not both")
    if not email and not domain:
        return BadRow(line, "email" if "email" in columns else "domain", "", "no email or domain")
    try:
        subject = address_subject(email, "email") if email else domain_subject(domain, "domain")
    except SubjectError as exc:
        return BadRow(line, exc.field, shorten(email or domain), exc.reason)
    return Entry(line, subject, cells["why"])


def read_do_not_contact(path: Path) -> DoNotContactList:
    """Every data row of the do-not-contact file at ``path``, as an entry, a bad row or a duplicate."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise DoNotContactFileError(f"cannot read {path}: {exc.strerror}") from exc
    if size > MAX_FILE_BYTES:
        raise DoNotContactFileError(
            f"{path}: {size:,} bytes, more than the {MAX_FILE_BYTES // (1024 * 1024)} MiB a "
            "do-not-contact file may have (split it)"
        )
    result = DoNotContactList()
    first_row: dict[str, int] = {}
    rows = 0
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(bounded_lines(handle, path))
            header = next(reader, None)
            if header is None:
                raise DoNotContactFileError(f"{path}: empty file, expected a header with an 'email' column")
            columns = _columns(path, header)
            for row in reader:
                if not any(cell.strip() for cell in row):
                    continue
                rows += 1
                if rows > MAX_ROWS:
                    raise DoNotContactFileError(
                        f"{path}: more than {MAX_ROWS:,} rows, the most a do-not-contact file may have "
                        f"(line {reader.line_num}; split it)"
                    )
                found = _entry(reader.line_num, row, columns)
                if isinstance(found, BadRow):
                    result.bad.append(found)
                elif found.subject.key in first_row:
                    result.duplicates.append((found.row, first_row[found.subject.key]))
                else:
                    first_row[found.subject.key] = found.row
                    result.entries.append(found)
    except OSError as exc:
        raise DoNotContactFileError(f"cannot read {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise DoNotContactFileError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except LineTooLongError as exc:
        raise DoNotContactFileError(str(exc)) from exc
    except csv.Error as exc:
        raise DoNotContactFileError(f"{path}: line {reader.line_num}: malformed CSV: {exc}") from exc
    return result
