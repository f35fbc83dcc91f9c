"""The recipients of a campaign: rows of a CSV file or a finished scrape job's results, addresses checked.

A CSV file has a header row; its ``email`` column is required and every other column is a placeholder
(names lower-cased, anything but letters, digits and ``_`` turned into ``_``). Two columns that become
the same placeholder (``email`` and ``EMAIL``, ``Company`` and ``company``) refuse the header, naming
both: otherwise the later one would silently win, and mail could go to the second address. The file is
read in bounded memory (``bounded_lines``): a line over 256 Ki characters refuses the file, naming it; a
rejected address is echoed cut to 200 characters with its length. From a scrape job, each result with an
e-mail address becomes one recipient: the first address found on the site, with the placeholders
``company`` (the page title), ``website`` (the final URL), ``description``, ``language`` (the page's
language tag, ``language_zone.language_cell``) and ``phone`` (the site's numbers,
``phone_country.phone_cell``); the last two, like a CSV file's ``timezone``, ``phone`` and ``language``
columns, also say the recipient's zone (``recipient_zones``). Addresses are checked for syntax only
(``email-validator``, no DNS lookups) and normalised; a row whose address is invalid, missing or already
listed is reported with its row number and reason and is not scheduled.

Every address is planned in the form SES delivers to: SES does not support SMTPUTF8 (RFC 6531), so the
part before the @ must be 7-bit ASCII and a Unicode domain must be given in Punycode (RFC 3492)
(https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_Destination.html). A Unicode domain is
converted (``info@bücher.example`` is planned as ``info@xn--bcher-kva.example``, and that ASCII form is
the message's ``to``, the task's recipient and the source of its task id); a non-ASCII local part cannot
be converted and its row is refused. Duplicates are found on the ASCII form.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from email_validator import EmailNotValidError, validate_email

from outreach_operator.bounded_lines import bounded_lines
from outreach_operator.campaigns.language_zone import language_cell
from outreach_operator.campaigns.phone_country import phone_cell
from outreach_operator.errors import LineTooLongError
from outreach_operator.report_values import shorten

_NOT_NAME = re.compile(r"[^a-z0-9_]+")


class RecipientsFileError(ValueError):
    """The recipients file as a whole cannot be read (no ``email`` column, two columns for one
    placeholder, a line too long, not UTF-8, not CSV)."""


@dataclass(frozen=True)
class Recipient:
    """One addressee: ``row`` (CSV line, or position in the job's results), ``source`` (where from)."""

    row: int
    source: str
    email: str
    values: Mapping[str, str]


@dataclass(frozen=True)
class RejectedRow:
    row: int
    source: str
    value: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"row": self.row, "source": self.source, "value": self.value, "reason": self.reason}


@dataclass
class Recipients:
    valid: list[Recipient] = field(default_factory=list)
    rejected: list[RejectedRow] = field(default_factory=list)


def placeholder_name(column: str) -> str:
    """The placeholder a CSV column is known by in templates (``First Name`` -> ``first_name``)."""
    return _NOT_NAME.sub("_", column.strip().lower()).strip("_")


def placeholder_names(path: Path, header: list[str]) -> list[str]:
    """The placeholder of each column of ``header``; raises RecipientsFileError naming two columns that
    would be the same placeholder."""
    names = [placeholder_name(column) for column in header]
    first: dict[str, int] = {}
    for index, name in enumerate(names):
        if not name:
            continue
        if name in first:
            earlier = first[name]
            raise RecipientsFileError(
                f"{path}: columns {earlier + 1} ({header[earlier]!r}) and {index + 1} ({header[index]!r}) "
                f"are both the placeholder {name!r}; rename or remove one"
            )
        first[name] = index
    return names


def _not_deliverable_by_ses(local_part: str) -> str:
    foreign = "".join(dict.fromkeys(c for c in local_part if not c.isascii()))
    return (
        f"the part before the @ ({local_part!r}) has non-ASCII characters ({foreign!r}): SES sends only "
        "to 7-bit ASCII local parts (it does not support SMTPUTF8)"
    )


class UndeliverableAddressError(ValueError):
    """Text that is not one address SES can send to; the message says why."""


def ses_address(raw: str) -> str:
    """``raw`` as the address SES delivers to (syntax checked, no DNS; a Unicode domain in Punycode);
    raises UndeliverableAddressError saying why it is not one."""
    address = raw.strip()
    if not address:
        raise UndeliverableAddressError("no e-mail address")
    try:
        checked = validate_email(address, check_deliverability=False)
    except EmailNotValidError as exc:
        raise UndeliverableAddressError(f"invalid e-mail address: {exc}") from exc
    if checked.ascii_email is None:
        raise UndeliverableAddressError(_not_deliverable_by_ses(checked.local_part))
    return str(checked.ascii_email)


def _admit(
    result: Recipients, seen: dict[str, int], row: int, source: str, raw: str, values: Mapping[str, str]
) -> None:
    try:
        normalised = ses_address(raw)
    except UndeliverableAddressError as exc:
        result.rejected.append(RejectedRow(row, source, shorten(raw), str(exc)))
        return
    shown = shorten(raw)
    key = normalised.lower()
    if key in seen:
        result.rejected.append(RejectedRow(row, source, shown, f"same address as row {seen[key]}"))
        return
    seen[key] = row
    result.valid.append(Recipient(row=row, source=source, email=normalised, values=values))


def read_recipients_csv(path: Path) -> Recipients:
    """Every data row of the CSV file at ``path``, valid or rejected with its line number."""
    result = Recipients()
    seen: dict[str, int] = {}
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(bounded_lines(handle, path))
            header = next(reader, None)
            if header is None:
                raise RecipientsFileError(f"{path}: empty file, expected a header row with an 'email' column")
            names = placeholder_names(path, header)
            if "email" not in names:
                raise RecipientsFileError(
                    f"{path}: no 'email' column in the header (columns: {', '.join(header)})"
                )
            for row in reader:
                if not any(cell.strip() for cell in row):
                    continue
                values = {name: cell.strip() for name, cell in zip(names, row, strict=False) if name}
                raw = values.pop("email", "")
                _admit(result, seen, reader.line_num, f"{path.name}:{reader.line_num}", raw, values)
    except OSError as exc:
        raise RecipientsFileError(f"cannot read {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise RecipientsFileError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except LineTooLongError as exc:
        raise RecipientsFileError(str(exc)) from exc
    except csv.Error as exc:
        raise RecipientsFileError(f"{path}: line {reader.line_num}: malformed CSV: {exc}") from exc
    return result


def _first_address(document: Mapping[str, Any]) -> str:
    for found in document.get("emails") or []:
        address = found.get("address") if isinstance(found, Mapping) else found
        if isinstance(address, str) and address.strip():
            return address
    return ""


def _phone_numbers(document: Mapping[str, Any]) -> list[str]:
    found = (
        phone.get("e164") if isinstance(phone, Mapping) else None for phone in document.get("phones") or []
    )
    return [number for number in found if isinstance(number, str)]


def recipients_from_results(results: Iterable[tuple[str, Mapping[str, Any]]]) -> Recipients:
    """One recipient per scraped site with an address, from ``(task_id, result document)`` pairs."""
    result = Recipients()
    seen: dict[str, int] = {}
    for row, (task_id, document) in enumerate(results, start=1):
        values = {
            "company": str(document.get("title") or "").strip(),
            "website": str(document.get("final_url") or ""),
            "description": str(document.get("description") or "").strip(),
            "language": language_cell(str(document.get("language") or "")),
            "phone": phone_cell(_phone_numbers(document)),
        }
        _admit(result, seen, row, task_id, _first_address(document), values)
    return result
