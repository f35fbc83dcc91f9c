"""``contacts block``: record an address or a whole domain as ``blocked`` and cancel its open emails.

The record is raised with the core's write (``contacts.record_stop``: ``blocked``, source ``operator``,
why and who), which never lowers a record: blocking an address that unsubscribed keeps
``unsubscribed`` (the report says so). Then every Pending email the stop covers, in every campaign, is
cancelled with the record's stop reason (``contact_stopped: …``) and its schedule deleted
(``contacts.fan_out``); a Running one is being sent and is left to its worker. The record comes
first, so an email claimed between the two reads the block after its claim and is not sent. A stop
halfway says what was done; running the same command again finishes it (the write changes nothing
the second time, the cancels skip what is already cancelled).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from rich.console import Console

from outreach import clock, contacts
from outreach_operator.cli.confirm import confirm_change
from outreach_operator.cli.contacts.reasons import checked_why, recorded_why
from outreach_operator.cli.contacts.show import stop_view
from outreach_operator.cli.contacts.subjects import subject_of
from outreach_operator.cli.operator import operator_name
from outreach_operator.cli.output import PartlyDone, Session, table
from outreach_operator.contacts import fan_out, records


def block_contact(
    s: Session, address: str | None, domain: str | None, why: str, operator: str | None, dry_run: bool
) -> None:
    """Block one address or domain (``dry_run``: say what would change) and emit the report."""
    subject = subject_of(address, domain)
    reason = checked_why(why)
    s.targets.require("contacts_table", "--contacts-table")
    s.targets.require("tasks_table", "--table")
    before = records.record(subject.key)
    covered = fan_out.open_emails(subject.kind, subject.value)
    report: dict[str, Any] = {
        "contact": subject.as_dict(),
        "dry_run": dry_run,
        "before": before,
        "open_emails": [fan_out.email_view(t) for t in covered.pending],
        "being_sent": [fan_out.email_view(t) for t in covered.running],
    }
    if not dry_run:
        group = s.targets.require("email_schedule_group", "--email-schedule-group")
        confirm_change(
            s, f"block {subject.kind} {subject.value} and cancel {len(covered.pending):,} open emails"
        )
        who = operator_name(operator)
        at = datetime.fromtimestamp(clock.now(), UTC)
        raised = contacts.record_stop(
            subject.key,
            contacts.State.BLOCKED,
            at=at,
            why=recorded_why(reason, who),
            source=contacts.Source.OPERATOR,
        )
        after = records.record(subject.key)
        stop = None if after is None else contacts.Stop.from_item(after)
        assert stop is not None  # record_stop left the record at blocked or higher
        try:
            done = fan_out.cancel_covered(subject.kind, subject.value, stop.reason, group)
        except Exception as exc:
            raise PartlyDone(
                f"contacts block {subject.value}",
                [f"recorded {stop.state.value}"],
                ["cancelling its open emails (re-run the same command)"],
                exc,
            ) from exc
        report.update(recorded=raised, stop=stop_view(stop), **done.as_dict())

    def render(console: Console) -> None:
        console.print(
            table(
                f"open emails to {subject.value}{' (a dry run: none cancelled)' if dry_run else ''}",
                ["task", "campaign", "step", "recipient", "send at"],
                [
                    [e["task_id"], e["campaign_id"], e["step"], e["recipient"], e["send_at"]]
                    for e in report["open_emails"]
                ],
            )
        )
        if report["being_sent"]:
            console.print(
                f"{len(report['being_sent'])} emails are being sent now: each may still go out (its worker "
                "read the ledger before the block)"
            )
        if dry_run:
            state = "no record" if before is None else f"now {before.get('state')}"
            console.print(f"dry run: {subject.value} ({state}) would be blocked; nothing changed")
            return
        kept = "" if report["recorded"] else f" (it was already {report['stop']['state']}: kept)"
        console.print(
            f"{subject.value} blocked{kept}; {report['cancelled']:,} emails cancelled, "
            f"{report['schedules_deleted']:,} schedules deleted, "
            f"{report['already_moved']:,} moved on meanwhile"
        )

    s.emit(report, render)
