"""Inbound mail at a campaign's reply domain: read, classified, matched to the email it answers, acted on
and forwarded, exactly once (the handler is ``outreach.inbound_processor``).

Reading and classifying (no AWS):

- ``message``: raw bytes parsed into a bounded ``InboundMessage`` (``parse``).
- ``html_text``: an HTML-only body as plain text.
- ``auto_reply``: the RFC 3834 and de-facto header fields of automatic mail, and out-of-office wording.
- ``return_date``: the date an out-of-office reply says its person is back.
- ``dsn``: RFC 3464 delivery status notifications read into a ``DeliveryReport``.
- ``reply_split``: a reply's own text, without the original it quotes.
- ``classify``: the rules, in order, that give a message its ``Kind``.

What arrived, and what it answers:

- ``notification``: an inbound-queue record (the SNS envelope of SES's ``Received`` notification) read
  into a ``ReceivedMessage``.
- ``raw_object``: the raw message SES stored in S3, read whole only within the bound.
- ``receipts``: the exactly-once record of a message (``inbound#<sha256>`` in the ledger's table).
- ``matching``: the email task a message answers (reply token, then In-Reply-To/References).
- ``decision``: the processor's plan for one message: its kind, its task, its rules, its forward.

Acting on it:

- ``actions``: what each kind does to the ledger and the tasks, and the task's marks (``replied``,
  ``auto_replied``, ``forwarded``), each idempotent.
- ``postpone``: an absence moves the campaign's open emails to the recipient past the return date.
- ``send_window``: the first moment inside a sequence's send window at or after an instant.
- ``forward``: the message forwarded to a person unchanged under a new header block, or a notice.
"""

from outreach.inbound.auto_reply import is_automatic, looks_out_of_office, says_automatic
from outreach.inbound.classify import Classification, Kind, classify, classify_raw
from outreach.inbound.dsn import Action, DeliveryReport, RecipientReport, parse_dsn, parse_plain_bounce
from outreach.inbound.message import InboundMessage, parse
from outreach.inbound.reply_split import new_text
from outreach.inbound.return_date import DEFAULT_AWAY_DAYS, return_date

__all__ = [
    "DEFAULT_AWAY_DAYS",
    "Action",
    "Classification",
    "DeliveryReport",
    "InboundMessage",
    "Kind",
    "RecipientReport",
    "classify",
    "classify_raw",
    "is_automatic",
    "looks_out_of_office",
    "new_text",
    "parse",
    "parse_dsn",
    "parse_plain_bounce",
    "return_date",
    "says_automatic",
]
