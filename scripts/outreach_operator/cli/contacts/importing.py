"""``contacts import``: block every address and domain of a do-not-contact CSV file.

The file is read and checked whole first (``do_not_contact_file``: bounded, every bad row named by
its row number and field). As with ``job create`` and ``campaign schedule``, a file with bad rows
changes nothing (exit 2) unless ``--skip-invalid`` is given, which blocks the other rows. Each row is
then what ``contacts block`` does for one address or domain: ``record_stop`` (``blocked``, source
``import``, the row's why or ``--why`` or the file's name, with who imported it) and its open emails
cancelled. A record already at ``blocked`` or higher is kept as it is (counted ``already_stopped``).
A stop halfway says which rows were done; the same command again finishes the rest.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from outreach import clock, contacts
from outreach_operator.bounded_lines import file_sha256
from outreach_operator.cli.confirm import confirm_change
from outreach_operator.cli.contacts.do_not_contact_file import (
    DoNotContactFileError,
    DoNotContactList,
    Entry,
    read_do_not_contact,
)
from outreach_operator.cli.contacts.reasons import checked_why, recorded_why
from outreach_operator.cli.jobs.progress import progress_bar
from outreach_operator.cli.operator import operator_name
from outreach_operator.cli.output import BadInput, PartlyDone, Session, table
from outreach_operator.contacts import fan_out, records


def import_contacts(
    s: Session, path: Path, why: str | None, skip_invalid: bool, operator: str | None, dry_run: bool
) -> None:
    """Check the file, then (unless ``dry_run``) block each of its rows; emit the report."""
    default_why = checked_why(why) if why is not None else f"do-not-contact list {path.name}"
    try:
        listing = read_do_not_contact(path)
    except DoNotContactFileError as exc:
        raise BadInput(str(exc)) from exc
    report: dict[str, Any] = {
        "file": str(path),
        "sha256": file_sha256(path),
        "dry_run": dry_run,
        "rows": len(listing.entries),
        "addresses": sum(1 for e in listing.entries if e.subject.kind == "address"),
        "domains": sum(1 for e in listing.entries if e.subject.kind == "domain"),
        "bad_rows": [row.as_dict() for row in listing.bad],
        "duplicates": [{"row": row, "same_as_row": first} for row, first in listing.duplicates],
    }
    if listing.bad and not skip_invalid:
        s.emit({**report, "blocked": 0}, lambda c: _render_bad(c, report))
        raise BadInput(
            f"{len(listing.bad)} rows cannot be imported; nothing changed (fix them or --skip-invalid)"
        )
    if not listing.entries:
        s.emit({**report, "blocked": 0}, lambda c: _render_bad(c, report))
        raise BadInput(f"{path}: no address or domain to block")
    s.targets.require("contacts_table", "--contacts-table")
    s.targets.require("tasks_table", "--table")
    if dry_run:
        report.update(_dry_run(s, listing))
    else:
        group = s.targets.require("email_schedule_group", "--email-schedule-group")
        confirm_change(s, f"block {len(listing.entries):,} addresses and domains from {path.name}")
        report.update(_block_all(s, listing, default_why, operator_name(operator), group))
    s.emit(report, lambda c: _render(c, report))


def _dry_run(s: Session, listing: DoNotContactList) -> dict[str, Any]:
    """What the import would change: rows not yet stopped, and the open emails it would cancel."""
    would_block = already = pending = running = 0
    with progress_bar(s) as bar:
        step = bar.add_task("checking rows", total=len(listing.entries))
        for entry in listing.entries:
            record = records.record(entry.subject.key)
            if record is not None and contacts.Stop.from_item(record) is not None:
                already += 1
            else:
                would_block += 1
            found = fan_out.open_emails(entry.subject.kind, entry.subject.value)
            pending += len(found.pending)
            running += len(found.running)
            bar.advance(step)
    return {
        "would_block": would_block,
        "already_stopped": already,
        "would_cancel": pending,
        "being_sent": running,
    }


def _block(entry: Entry, why: str, at: datetime, group: str) -> tuple[bool, fan_out.Cancelled]:
    raised = contacts.record_stop(
        entry.subject.key, contacts.State.BLOCKED, at=at, why=why, source=contacts.Source.IMPORT
    )
    record = records.record(entry.subject.key)
    stop = None if record is None else contacts.Stop.from_item(record)
    assert stop is not None  # record_stop left the record at blocked or higher
    return raised, fan_out.cancel_covered(entry.subject.kind, entry.subject.value, stop.reason, group)


def _block_all(
    s: Session, listing: DoNotContactList, default_why: str, who: str, group: str
) -> dict[str, Any]:
    at = datetime.fromtimestamp(clock.now(), UTC)
    blocked = already = 0
    totals = fan_out.Cancelled()
    with progress_bar(s) as bar:
        step = bar.add_task("blocking rows", total=len(listing.entries))
        for index, entry in enumerate(listing.entries):
            why = recorded_why(entry.why or default_why, who, imported=True)
            try:
                raised, done = _block(entry, why, at, group)
            except Exception as exc:
                left = len(listing.entries) - index - 1
                raise PartlyDone(
                    "contacts import",
                    [f"the {index:,} rows before line {entry.row}"] if index else [],
                    [f"line {entry.row} and the {left:,} rows after it (re-run the same command)"],
                    exc,
                ) from exc
            blocked += raised
            already += not raised
            totals.merge(done)
            bar.advance(step)
    return {"blocked": blocked, "already_stopped": already, **totals.as_dict()}


def _render_bad(console: Console, report: dict[str, Any]) -> None:
    if report["bad_rows"]:
        console.print(
            table(
                f"{len(report['bad_rows'])} rows not imported",
                ["row", "field", "value", "reason"],
                [[r["row"], r["field"], r["value"], r["reason"]] for r in report["bad_rows"]],
            )
        )


def _render(console: Console, report: dict[str, Any]) -> None:
    _render_bad(console, report)
    if report["duplicates"]:
        console.print(f"{len(report['duplicates'])} rows repeat an earlier row and were counted once")
    if report["dry_run"]:
        console.print(
            f"dry run: {report['would_block']:,} of {report['rows']:,} would be blocked "
            f"({report['already_stopped']:,} already stopped); {report['would_cancel']:,} open emails "
            f"would be cancelled, {report['being_sent']:,} are being sent; nothing changed"
        )
        return
    console.print(
        f"{report['blocked']:,} of {report['rows']:,} blocked "
        f"({report['already_stopped']:,} already stopped); {report['cancelled']:,} emails cancelled, "
        f"{report['schedules_deleted']:,} schedules deleted"
    )
