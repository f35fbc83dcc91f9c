"""``outreach campaign``: schedule a campaign's emails, see how far it got, cancel what has not gone out.

``command`` holds the click group and its options; the work is in ``schedule`` (its recipients from
``recipient_sources``, those the contact ledger stops left out by ``stopped``, the one-click
unsubscribe of a campaign without its own from ``default_unsubscribe``, held against ``quota``,
written by ``writing``, shown by ``schedule_view``), ``status`` and ``cancel``, raising ``output``'s
``BadInput`` / ``Failed`` / ``PartlyDone`` for the exit codes.
"""

from __future__ import annotations

from outreach_operator.cli.campaigns.command import campaign

__all__ = ["campaign"]
