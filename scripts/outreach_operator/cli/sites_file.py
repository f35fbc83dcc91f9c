"""A file of websites (CSV with a URL column, or one URL per line) read, validated and normalised.

Every line is checked before anything is written: a bad line is reported with its line number and
why (the line cut to 200 characters with its length, ``report_values.shorten``), and two lines naming
the same site (after normalisation) become one task. The file is read in bounded memory
(``bounded_lines``): a line longer than 256 Ki characters refuses the file, naming the line, and the
file's hash (which names the default job) is taken in chunks.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from outreach.errors import InvalidJobInputError
from outreach.task_ids import normalise_url
from outreach_operator.bounded_lines import bounded_lines, file_sha256
from outreach_operator.errors import LineTooLongError
from outreach_operator.report_values import shorten

# A reason quotes at most 200 characters of its line (``normalise_url``); the rest is kept to this.
_REASON_CHARS = 500


class SitesFileError(ValueError):
    """The file as a whole cannot be read (unknown column, unsupported type, not UTF-8, a line too long)."""


@dataclass(frozen=True)
class BadLine:
    line: int
    value: str
    reason: str


@dataclass
class SitesFile:
    path: Path
    sha256: str
    urls: list[str] = field(default_factory=list)
    invalid: list[BadLine] = field(default_factory=list)
    duplicates: int = 0
    lines: int = 0


def _add(result: SitesFile, seen: set[str], line: int, raw: str) -> None:
    result.lines += 1
    try:
        url = normalise_url(raw)
    except InvalidJobInputError as exc:
        reason = shorten(str(exc), _REASON_CHARS)
        result.invalid.append(BadLine(line=line, value=shorten(raw), reason=reason))
        return
    if url in seen:
        result.duplicates += 1
        return
    seen.add(url)
    result.urls.append(url)


def _read_text(path: Path, result: SitesFile) -> None:
    seen: set[str] = set()
    with path.open(encoding="utf-8-sig") as handle:
        for number, line in enumerate(bounded_lines(handle, path), start=1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            _add(result, seen, number, text)


def _read_csv(path: Path, column: str, result: SitesFile) -> None:
    seen: set[str] = set()
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(bounded_lines(handle, path))
        try:
            header = next(reader, None)
            if header is None:
                raise SitesFileError(f"{path}: empty file, expected a header row with a {column!r} column")
            names = [name.strip().lower() for name in header]
            if column.lower() not in names:
                raise SitesFileError(
                    f"{path}: no column {column!r} in the header (columns: {', '.join(header)})"
                )
            index = names.index(column.lower())
            for row in reader:
                if not any(cell.strip() for cell in row):
                    continue
                raw = row[index] if index < len(row) else ""
                _add(result, seen, reader.line_num, raw)
        except csv.Error as exc:
            raise SitesFileError(f"{path}: line {reader.line_num}: malformed CSV: {exc}") from exc


def read_sites(path: Path, *, column: str = "url") -> SitesFile:
    """Read ``path`` (``.csv`` by its header column, anything else one URL per line)."""
    try:
        digest = file_sha256(path)
    except OSError as exc:
        raise SitesFileError(f"cannot read {path}: {exc.strerror}") from exc
    result = SitesFile(path=path, sha256=digest)
    try:
        if path.suffix.lower() == ".csv":
            _read_csv(path, column, result)
        else:
            _read_text(path, result)
    except UnicodeDecodeError as exc:
        raise SitesFileError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except LineTooLongError as exc:
        raise SitesFileError(str(exc)) from exc
    return result


def default_job_id(sites: SitesFile) -> str:
    """The same file always gives the same job id, so re-running a create is idempotent."""
    stem = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in sites.path.stem).strip("-._")
    return f"{(stem or 'job')[:100]}-{sites.sha256[:12]}"
