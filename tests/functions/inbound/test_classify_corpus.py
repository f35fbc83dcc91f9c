"""Every message of the corpus gets the kind its row says: one table, and every corpus file has a row.

The corpus (``corpus/*.eml``) holds real-shaped messages written for these tests, with addresses under
``example.com``, ``example.net`` and ``.example`` only: replies from Gmail (English and Spanish),
Outlook desktop (German) and web, Apple Mail and Thunderbird (French), each quoting our email; a reply
with only an HTML part; out-of-office replies with RFC 3834 headers (Exchange, the Gmail vacation
responder, ``X-Autoreply``, ``X-Autorespond``, ``Precedence``) and without (German, Spanish), each
naming its return date in another form, one naming none and one naming a date too far ahead; a ticket
system's acknowledgement; DSNs from Postfix (5.1.1 and a delayed 4.2.2) and Exchange (5.1.10); a qmail
bounce and a postmaster notice without a report; two mails to the unsubscribe address; a message cut
in its header; a reply whose quoted original says "out of the office".

A new corpus file without a row, or a row without its file, fails
``test_every_corpus_file_has_exactly_one_row``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

import pytest

from outreach.inbound import Kind, classify_raw, parse
from tests.functions.inbound.mail_support import CORPUS, corpus


@dataclass(frozen=True)
class Row:
    file: str
    kind: Kind
    away_until: date | None = None
    out_of_office: bool = False
    bounce_status: str | None = None


HUMAN, AUTO, BOUNCE = Kind.HUMAN_REPLY, Kind.AUTO_REPLY, Kind.BOUNCE

ROWS = (
    # People's replies, each quoting our email.
    Row("gmail_reply.eml", HUMAN),
    Row("gmail_reply_spanish.eml", HUMAN),
    Row("outlook_desktop_reply.eml", HUMAN),
    Row("outlook_web_reply.eml", HUMAN),
    Row("apple_mail_reply.eml", HUMAN),
    Row("thunderbird_reply.eml", HUMAN),
    Row("html_only_reply.eml", HUMAN),
    Row("human_reply_quoting_out_of_office.eml", HUMAN),
    # Out of office, with RFC 3834 or de-facto headers.
    Row("exchange_automatic_reply.eml", AUTO, date(2027, 1, 11), True),  # Monday, January 11, 2027
    Row("gmail_vacation_responder.eml", AUTO, date(2027, 1, 8), True),  # 2027-01-08
    Row("reponse_automatique_fr.eml", AUTO, date(2027, 1, 12), True),  # "le 12 janvier": next year
    Row("autorespond_us_date.eml", AUTO, date(2027, 1, 13), True),  # 1/13/2027, English, unambiguous
    Row("ooo_without_date.eml", AUTO, date(2026, 12, 24), True),  # no date: received + 7 days
    Row("ooo_far_future_date.eml", AUTO, date(2026, 12, 24), True),  # 30 June 2027 is > 90 days away
    # Out of office, by wording alone.
    Row("abwesenheitsnotiz_de.eml", AUTO, date(2027, 1, 15), True),  # 15.01.2027
    Row("respuesta_automatica_es.eml", AUTO, date(2027, 1, 14), True),  # 14/01/2027, day first
    # Automatic, not out of office.
    Row("ticket_auto_ack.eml", AUTO),
    Row("postmaster_notice_without_status.eml", AUTO),
    # Bounces.
    Row("postfix_dsn_5_1_1.eml", BOUNCE, bounce_status="5.1.1"),
    Row("exchange_dsn_5_1_10.eml", BOUNCE, bounce_status="5.1.10"),
    Row("postfix_dsn_delayed_4_2_2.eml", BOUNCE, bounce_status="4.2.2"),
    Row("qmail_bounce_without_report.eml", BOUNCE, bounce_status="5.1.1"),
    # Unsubscribes.
    Row("unsubscribe_blank.eml", Kind.UNSUBSCRIBE),
    Row("unsubscribe_tagged_by_mail_client.eml", Kind.UNSUBSCRIBE),
    # Refused by message.parse.
    Row("garbled_truncated.eml", Kind.UNPARSEABLE),
)


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.file.removesuffix(".eml"))
def test_each_corpus_message_is_classified_as_its_row_says(row: Row) -> None:
    result = classify_raw(corpus(row.file))
    bounce_status = result.bounce.status if result.bounce is not None else None
    assert (result.kind, result.away_until, result.out_of_office, bounce_status) == (
        row.kind,
        row.away_until,
        row.out_of_office,
        row.bounce_status,
    ), result.reason


def test_every_corpus_file_has_exactly_one_row() -> None:
    names = [row.file for row in ROWS]
    assert len(names) == len(set(names)), "a corpus file has two rows"
    assert sorted(path.name for path in CORPUS.iterdir()) == sorted(names)


def test_no_reason_in_the_corpus_carries_an_address_a_subject_or_body_text() -> None:
    for row in ROWS:
        reason = classify_raw(corpus(row.file)).reason
        assert re.fullmatch(r"[A-Za-z0-9 .,:()_-]+", reason), (row.file, reason)
        if row.kind is not Kind.UNPARSEABLE:
            msg = parse(corpus(row.file))
            # Longer than the rules' own words ("out of office" is one of them, and a subject too).
            texts = [msg.subject, *msg.body.splitlines()]
            assert not any(len(text) > 20 and text.lower() in reason for text in texts), (row.file, reason)
