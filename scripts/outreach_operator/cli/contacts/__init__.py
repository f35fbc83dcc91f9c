"""``outreach contacts``: the contact ledger seen and changed by the operator.

``show`` reads a record and whether it stops sending; ``block`` records ``blocked`` and cancels the
open emails it covers; ``unblock`` lowers ``blocked`` or ``bounced`` to ``ok`` and refuses an
unsubscribe or a complaint (exit 3, ``output.RecipientsOwnStop``); ``import`` blocks each row of a
do-not-contact CSV (``do_not_contact_file``); ``export`` writes the records to a CSV a spreadsheet
shows as text. ``command`` holds the click group and its options; each subcommand's work is a module
of its own; what they name is read by ``subjects`` (an address, or a domain) and ``reasons`` (why).
The ledger reads and the fan-out to open emails are in ``outreach_operator.contacts``; the keys,
states, stops and writes are the core's (``outreach.contacts``).
"""

from __future__ import annotations

from outreach_operator.cli.contacts.command import contacts

__all__ = ["contacts"]
