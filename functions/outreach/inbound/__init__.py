"""Inbound mail at a campaign's reply domain, classified without AWS: a human reply, an automatic one
(out of office until when), a bounce, or an unsubscribe.

- ``message``: ``parse`` raw bytes into a bounded ``InboundMessage`` (``html_text`` for HTML-only mail).
- ``auto_reply``: RFC 3834 and de-facto headers of automatic mail, and out-of-office wording.
- ``return_date``: the date an out-of-office reply says its person is back.
- ``dsn``: RFC 3464 delivery status notifications read into a ``DeliveryReport``.
- ``reply_split``: a reply's own text, without the original it quotes.
- ``classify``: the rules, in order, that give a message its ``Kind``.
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
