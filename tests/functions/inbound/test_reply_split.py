"""A reply's own text: every way a client starts the quoted original ends it, and quoted lines go."""

from __future__ import annotations

import pytest

from outreach.inbound.reply_split import QUOTE_STARTS, new_text

REPLY = "Thanks, Tuesday works.\n\nGrace"

# (id, the QUOTE_STARTS pattern or other rule it proves, the lines from the quote's start on)
ROWS: list[tuple[str, str, str]] = [
    (
        "gmail-en",
        "attribution_en",
        "On Thu, Dec 17, 2026 at 10:02 AM Ada Byron <ada@example.com> wrote:\n> Hi",
    ),
    (
        "gmail-en-wrapped",
        "attribution_en",
        "On Thu, Dec 17, 2026 at 10:02\u202fAM Ada Byron <\nada@example.com> wrote:\n\n> Hi",
    ),
    ("apple-en", "attribution_en", "On 17 Dec 2026, at 10:02, Ada Byron <ada@example.com> wrote:\n\n> Hi"),
    ("thunderbird-en", "attribution_en", "On 17/12/2026 10:02, Ada Byron wrote:\n> Hi"),
    (
        "gmail-de",
        "attribution_de",
        "Am Do., 17. Dez. 2026 um 10:02 Uhr schrieb Ada Byron <ada@example.com>:\n> Hi",
    ),
    ("thunderbird-de", "attribution_de", "Am 17.12.26 um 10:02 schrieb Ada Byron:\n> Hi"),
    (
        "gmail-fr",
        "attribution_fr",
        "Le jeu. 17 déc. 2026 à 10:02, Ada Byron <ada@example.com> a écrit :\n> Hi",
    ),
    ("thunderbird-fr", "attribution_fr", "Le 17/12/2026 à 10:02, Ada Byron a écrit :\n> Hi"),
    (
        "gmail-es-wrapped",
        "attribution_es",
        "El jue, 17 dic 2026 a las 10:02, Ada Byron (<ada@example.com>)\nescribió:\n\n> Hi",
    ),
    ("outlook-en-separator", "separator", "-----Original Message-----\nFrom: Ada\nSent: Thursday\n\nHi"),
    ("outlook-de-separator", "separator", "-----Ursprüngliche Nachricht-----\nVon: Ada\n\nHi"),
    ("outlook-fr-separator", "separator", "-------- Message d'origine --------\nDe : Ada\n\nHi"),
    ("outlook-es-separator", "separator", "-----Mensaje original-----\nDe: Ada\n\nHi"),
    ("gmail-forward", "separator", "---------- Forwarded message ---------\nFrom: Ada\n\nHi"),
    ("apple-forward", "forwarded", "Begin forwarded message:\n\nFrom: Ada\n\nHi"),
    ("apple-forward-de", "forwarded", "Anfang der weitergeleiteten Nachricht:\n\nVon: Ada\n\nHi"),
    ("apple-forward-fr", "forwarded", "Début du message réexpédié :\n\nDe: Ada\n\nHi"),
    ("apple-forward-es", "forwarded", "Inicio del mensaje reenviado:\n\nDe: Ada\n\nHi"),
    (
        "outlook-web-en",
        "outlook header block",
        "________________________________\nFrom: Ada Byron <ada@example.com>\n"
        "Sent: Thursday, December 17, 2026\nTo: Grace\nSubject: Quick question\n\nHi",
    ),
    (
        "outlook-de",
        "outlook header block",
        "Von: Ada Byron <ada@example.com>\nGesendet: Donnerstag\nAn: Hans\n\nHi",
    ),
    (
        "outlook-fr",
        "outlook header block",
        "De : Ada Byron\nEnvoyé : jeudi 17 décembre 2026\nÀ : Camille\n\nHi",
    ),
    ("outlook-es", "outlook header block", "De: Ada Byron\nEnviado: jueves\nPara: Lucía\n\nHi"),
    ("outlook-bold", "outlook header block", "*From:* Ada Byron\n*Sent:* Thursday\n\nHi"),
    ("name-wrote", "wrote before a quote", "Ada Byron wrote:\n> Hi"),
]


@pytest.mark.parametrize(("rule", "quote"), [row[1:] for row in ROWS], ids=[row[0] for row in ROWS])
def test_the_reply_ends_where_each_client_starts_the_quoted_original(rule: str, quote: str) -> None:
    assert new_text(f"{REPLY}\n\n{quote}\nout of office until 5 January\n") == REPLY, rule


def test_every_quote_start_pattern_has_a_row() -> None:
    assert set(QUOTE_STARTS) <= {row[1] for row in ROWS}


def test_an_interleaved_reply_keeps_the_senders_lines_between_the_quotes() -> None:
    body = "> Would Tuesday work?\nYes, at 10.\n> And the price?\nSend it first.\n"
    assert new_text(body) == "Yes, at 10.\nSend it first."


def test_a_reply_posted_below_the_quote_keeps_what_follows_it() -> None:
    body = (
        "On Thu, Dec 17, 2026 at 10:02 AM Ada Byron <ada@example.com> wrote:\n> Tuesday?\n\nYes, Tuesday.\n"
    )
    assert new_text(body) == "Yes, Tuesday."


def test_a_from_line_without_header_lines_after_it_is_the_senders_text() -> None:
    body = "From: the sales team's point of view, this looks fine.\n\nGrace"
    assert new_text(body) == body


def test_a_line_that_mentions_writing_is_not_an_attribution() -> None:
    body = "On Monday I wrote: the report is ready.\nAm Montag schrieb ich Ihnen.\nGrace"
    assert new_text(body) == body


def test_trailing_separator_lines_and_blank_lines_go() -> None:
    assert new_text("\n\nThanks.\n\n____\n-- \n") == "Thanks."


def test_crlf_line_ends_are_read_and_an_empty_body_stays_empty() -> None:
    assert new_text("Yes.\r\n\r\n> quoted\r\n") == "Yes."
    assert new_text("") == ""
