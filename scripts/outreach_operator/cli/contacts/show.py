"""``contacts show``: the ledger's record of an address (and of its domain), whether it stops sending, and
the open emails to it.

For an address the stop is the core's answer (``contacts.stop_of``: its own record or its domain's,
the higher rank), the one the email worker gets before each send. The open emails (Pending, which a
stop cancels, and Running, which may still go out) are read when the tasks table is known.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console

from outreach import contacts
from outreach.errors import MalformedFieldError
from outreach_operator.cli.contacts.subjects import subject_of
from outreach_operator.cli.output import Failed, Session, table
from outreach_operator.contacts import fan_out, records


def stop_view(stop: contacts.Stop | None) -> dict[str, Any] | None:
    """A stop as a report shows it."""
    if stop is None:
        return None
    return {
        "contact_key": stop.key,
        "state": stop.state.value,
        "since": stop.since,
        "why": stop.why,
        "source": stop.source.value,
        "campaign_id": stop.campaign_id,
    }


def show_contact(s: Session, address: str | None, domain: str | None) -> None:
    """Emit the record(s), the stop and the open emails of one address or domain."""
    subject = subject_of(address, domain)
    s.targets.require("contacts_table", "--contacts-table")
    record = records.record(subject.key)
    report: dict[str, Any] = {"contact": subject.as_dict(), "record": record}
    try:
        if subject.kind == "address":
            report["domain_record"] = records.record(contacts.domain_key(subject.value))
            stop = contacts.stop_of(subject.value)
        else:
            stop = None if record is None else contacts.Stop.from_item(record)
    except MalformedFieldError as exc:
        s.emit(report, lambda c: c.print(table("record as stored", ["record"], [[str(record)]])))
        raise Failed(
            f"the ledger's record of {subject.value} is malformed: {exc} (no send is made on it)"
        ) from exc
    report.update(stopped=stop is not None, stop=stop_view(stop))
    if s.targets.tasks_table:
        found = fan_out.open_emails(subject.kind, subject.value)
        report["open_emails"] = {
            "pending": [fan_out.email_view(t) for t in found.pending],
            "running": [fan_out.email_view(t) for t in found.running],
        }

    def render(console: Console) -> None:
        shown = [[name, _cell(record[name])] for name in records.FIELDS if record and name in record]
        console.print(
            table(f"{subject.kind} {subject.value}", ["field", "value"], shown or [["(no record)", ""]])
        )
        if report.get("domain_record"):
            domain_record = report["domain_record"]
            console.print(
                table(
                    f"its domain ({domain_record['contact_key']})",
                    ["field", "value"],
                    [[name, _cell(domain_record[name])] for name in records.FIELDS if name in domain_record],
                )
            )
        if stop is None:
            console.print("not stopped: emails may be sent")
        else:
            console.print(f"stopped: {stop.reason} (set by {stop.source.value}, record {stop.key})")
        if "open_emails" in report:
            emails = report["open_emails"]
            console.print(
                f"open emails: {len(emails['pending'])} Pending, {len(emails['running'])} Running "
                "(a Running email is being sent and may still go out)"
            )

    s.emit(report, render)


def _cell(value: Any) -> str:
    if isinstance(value, list):
        return f"{len(value)}: {', '.join(str(v) for v in value)}"
    return str(value)
