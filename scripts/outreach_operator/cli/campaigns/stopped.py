"""The recipients the contact ledger stops, left out of a schedule, each listed with why.

``campaign schedule`` (its dry run too) reads the ledger for every recipient before planning
(``contacts.stops_of``: strongly consistent BatchGetItem of each address's record and its domain's,
100 keys a call) and plans only the others. An address that unsubscribed, bounced, complained or was
blocked, or whose domain was blocked, gets no email of this campaign; the report lists each with the
state, since when, why and who said so. Planning is not the only guard: the email worker reads the
ledger again after its claim, so a stop recorded after the schedule still stops the send.

A dry run without a contact ledger (no ``contacts_table`` output, no ``--contacts-table``) says that
stops were not checked; a real schedule needs the ledger.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from outreach import contacts
from outreach.errors import MalformedFieldError
from outreach_operator.campaigns.recipients import Recipient
from outreach_operator.cli.output import Failed, Session


@dataclass
class StopCheck:
    """The recipients to plan, and those left out with their stop (``checked`` False: ledger not read)."""

    kept: list[Recipient]
    stopped: list[dict[str, Any]] = field(default_factory=list)
    checked: bool = True
    reason: str = ""

    def report(self) -> dict[str, Any]:
        found: dict[str, Any] = {"checked": self.checked, "stopped": len(self.stopped)}
        if not self.checked:
            found["reason"] = self.reason
        return found


def leave_out_stopped(s: Session, recipients: Sequence[Recipient], *, dry_run: bool) -> StopCheck:
    """``recipients`` without those the ledger stops; each stopped one listed with its stop."""
    if not s.targets.contacts_table:
        if not dry_run:
            s.targets.require("contacts_table", "--contacts-table")
        return StopCheck(
            kept=list(recipients),
            checked=False,
            reason="stops not checked: no contact ledger (pass --contacts-table or use --env)",
        )
    try:
        stops = contacts.stops_of(recipient.email for recipient in recipients)
    except MalformedFieldError as exc:
        raise Failed(
            f"the contact ledger cannot be read for this campaign's recipients: {exc}; nothing written "
            "(a record no reader can trust stops every send it covers: fix or remove it)"
        ) from exc
    check = StopCheck(kept=[r for r in recipients if r.email not in stops])
    for recipient in recipients:
        stop = stops.get(recipient.email)
        if stop is None:
            continue
        check.stopped.append(
            {
                "row": recipient.row,
                "source": recipient.source,
                "address": recipient.email,
                "contact_key": stop.key,
                "state": stop.state.value,
                "since": stop.since,
                "why": stop.why,
                "stopped_by": stop.source.value,
                "campaign_id": stop.campaign_id,
            }
        )
    return check
