"""``contacts unblock``: lower a ``blocked`` or ``bounced`` address or domain to ``ok``, never an opt-out.

An ``unsubscribed`` or ``complained`` record is the recipient's own word (an RFC 8058 unsubscribe, a
complaint through the mailbox provider's feedback loop), which the sender must honour; the operator
cannot lift it. Such a record is refused with exit 3 (``RecipientsOwnStop``) and nothing is written.
The write is the core's (``contacts.unblock``: conditional on the record still being ``blocked`` or
``bounced``), so an unsubscribe or a complaint recorded between this command's read and its write
wins: the write changes nothing and the command ends with exit 3 too.

The emails a stop cancelled stay ``Cancelled`` (``task requeue`` can bring one back: its reason,
``contact_stopped: …``, proves it was not sent). An address whose domain is still blocked stays
stopped; the report says so.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from rich.console import Console

from outreach import clock, contacts
from outreach_operator.cli.confirm import confirm_change
from outreach_operator.cli.contacts.reasons import checked_why, recorded_why
from outreach_operator.cli.contacts.show import stop_view
from outreach_operator.cli.contacts.subjects import Subject, subject_of
from outreach_operator.cli.operator import operator_name
from outreach_operator.cli.output import Failed, RecipientsOwnStop, Session
from outreach_operator.contacts import records


def _stop(key: str) -> contacts.Stop | None:
    record = records.record(key)
    return None if record is None else contacts.Stop.from_item(record)


def _refusal(subject: Subject, stop: contacts.Stop) -> RecipientsOwnStop:
    return RecipientsOwnStop(
        f"{subject.value} is {stop.state.value} since {stop.since} (source {stop.source.value}: {stop.why}); "
        "an unsubscribe or a complaint is the recipient's own and is never lifted by an operator; "
        "nothing changed"
    )


def unblock_contact(
    s: Session, address: str | None, domain: str | None, why: str, operator: str | None, dry_run: bool
) -> None:
    """Lower the record of one address or domain to ``ok`` (``dry_run``: say whether it would)."""
    subject = subject_of(address, domain)
    reason = checked_why(why)
    s.targets.require("contacts_table", "--contacts-table")
    before = _stop(subject.key)
    domain_stop = _stop(contacts.domain_key(subject.value)) if subject.kind == "address" else None
    report: dict[str, Any] = {"contact": subject.as_dict(), "dry_run": dry_run, "before": stop_view(before)}
    if before is None:
        report.update(
            lowered=False, reason="not stopped: nothing to unblock", still_stopped_by=stop_view(domain_stop)
        )
        by_domain = "" if domain_stop is None else f" (its domain is: {domain_stop.key}, unblock --domain)"
        s.emit(
            report, lambda c: c.print(f"{subject.value} is not stopped itself: nothing to unblock{by_domain}")
        )
        return
    if not before.state.operator_may_lift:
        report.update(lowered=False, reason="the recipient's own stop: never lifted by an operator")
        s.emit(report, lambda c: None)
        raise _refusal(subject, before)
    if not dry_run:
        confirm_change(s, f"unblock {subject.kind} {subject.value} ({before.state.value} -> ok)")
        who = operator_name(operator)
        at = datetime.fromtimestamp(clock.now(), UTC)
        if not contacts.unblock(subject.key, at=at, why=recorded_why(reason, who)):
            now = _stop(subject.key)
            report.update(lowered=False, after=stop_view(now))
            if now is not None and not now.state.operator_may_lift:
                s.emit(report, lambda c: None)
                raise _refusal(subject, now)
            raise Failed(f"{subject.value} changed while it was being unblocked; run the command again")
    report["lowered"] = not dry_run
    still = domain_stop
    report["still_stopped_by"] = stop_view(still)

    def render(console: Console) -> None:
        verb = "would be lowered" if dry_run else "lowered"
        console.print(f"{subject.value}: {before.state.value} since {before.since} {verb} to ok")
        if still is not None:
            console.print(f"still stopped by {still.key}: {still.reason}")

    s.emit(report, render)
