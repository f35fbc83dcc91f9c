"""Rules of matching an inbound message to the email it answers: its verified reply address first, in
the envelope or the header, then the ids it quotes against the sender's own sent emails, then a report's
original message; a forged token matches nothing and is counted."""

from __future__ import annotations

from outreach.inbound.classify import classify
from outreach.inbound.matching import Match, match
from outreach.inbound.message import parse
from tests.functions import feedback_support
from tests.functions.feedback_support import mark_sent, message_id_of
from tests.functions.inbound import inbound_support
from tests.functions.inbound.inbound_support import REPLY_DOMAIN, Inbound, campaign, message_id_header
from tests.functions.inbound.mail_support import mail

feedback = feedback_support.feedback  # fixtures, found by name
inbound = inbound_support.inbound

A, B = "ada@example.org", "bob@example.org"
GENERIC = f"sales@{REPLY_DOMAIN}"


def _match(inbound: Inbound, raw: bytes, envelope: list[str]) -> Match:
    msg = parse(raw)
    return match(
        msg,
        envelope,
        reply_domain=REPLY_DOMAIN,
        key_id=inbound.feedback.key_id,
        report=classify(msg).bounce,
    )


def test_a_reply_address_in_the_envelope_matches_even_when_the_header_does_not_show_it(
    inbound: Inbound,
) -> None:
    emails = campaign(inbound, [A])
    token = emails[A][1].message.reply_to
    found = _match(inbound, mail(headers=[("From", f"<{A}>"), ("To", GENERIC)]), [token.upper()])
    assert (found.how, found.task and found.task.task_id, found.refused_tokens) == (
        "reply-token",
        emails[A][1].task_id,
        0,
    )


def test_a_forged_reply_address_is_counted_and_the_next_rule_may_still_match(inbound: Inbound) -> None:
    emails = campaign(inbound, [A])
    sent = mark_sent(emails[A][0])
    assert sent.email is not None
    token = emails[A][0].message.reply_to
    local = token.partition("@")[0]
    forged = f"{local[:-1]}{'a' if local[-1] != 'a' else 'b'}@{REPLY_DOMAIN}"
    raw = mail(
        headers=[
            ("From", f"<{A}>"),
            ("To", forged),
            ("In-Reply-To", message_id_header(str(sent.email.ses_message_id))),
        ]
    )
    found = _match(inbound, raw, [forged])
    assert (found.how, found.refused_tokens) == ("in-reply-to", 1)
    assert found.task is not None and found.task.task_id == emails[A][0].task_id


def test_references_match_the_parent_first(inbound: Inbound) -> None:
    emails = campaign(inbound, [A], tokens=False)
    ids = [message_id_header(message_id_of(email.task_id)) for email in emails[A]]
    for email in emails[A]:
        mark_sent(email)
    raw = mail(headers=[("From", f"<{A}>"), ("References", " ".join(ids[:2]))])
    found = _match(inbound, raw, [GENERIC])
    assert found.how == "in-reply-to"
    assert found.task is not None and found.task.task_id == emails[A][1].task_id


def test_quoted_ids_match_only_the_senders_own_emails(inbound: Inbound) -> None:
    emails = campaign(inbound, [A, B], tokens=False)
    sent = mark_sent(emails[A][0])
    assert sent.email is not None
    quoted = message_id_header(str(sent.email.ses_message_id))
    raw = mail(headers=[("From", f"<{B}>"), ("In-Reply-To", quoted)])
    found = _match(inbound, raw, [GENERIC])
    assert (found.matched, found.how) == (False, "none")


def test_a_report_matches_by_the_original_message_it_includes(inbound: Inbound) -> None:
    emails = campaign(inbound, [A], tokens=False)
    sent = mark_sent(emails[A][0])
    assert sent.email is not None
    original = message_id_header(str(sent.email.ses_message_id))
    raw = (
        "From: MAILER-DAEMON@mx.example.org\r\nTo: bounces@reply.example.com\r\nMIME-Version: 1.0\r\n"
        'Content-Type: multipart/report; report-type=delivery-status; boundary="b"\r\n\r\n'
        "--b\r\nContent-Type: text/plain\r\n\r\nfailed\r\n"
        "--b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx\r\n\r\n"
        f"Final-Recipient: rfc822; {A}\r\nAction: failed\r\nStatus: 5.1.1\r\n\r\n"
        f"--b\r\nContent-Type: text/rfc822-headers\r\n\r\nMessage-ID: {original}\r\n\r\n"
        "--b--\r\n"
    ).encode()
    found = _match(inbound, raw, ["bounces@reply.example.com"])
    assert found.how == "report"
    assert found.task is not None and found.task.task_id == emails[A][0].task_id


def test_a_message_that_names_nothing_we_sent_matches_nothing(inbound: Inbound) -> None:
    campaign(inbound, [A])
    found = _match(inbound, mail(headers=[("From", f"<{A}>"), ("In-Reply-To", "<x@y.example>")]), [GENERIC])
    assert (found.task, found.how, found.refused_tokens) == (None, "none", 0)
