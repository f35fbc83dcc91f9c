"""The classifier's rules, in order: a DSN, then mail to the unsubscribe address, then automatic mail,
then a person's reply; and reasons that are safe for logs."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from outreach import clock
from outreach.inbound import Kind, classify, classify_raw, parse
from tests.functions.inbound.mail_support import CORPUS, corpus, mail


def test_a_dsn_is_a_bounce_even_though_it_is_auto_submitted() -> None:
    msg = parse(corpus("postfix_dsn_5_1_1.eml"))
    assert msg.header("auto-submitted") == "auto-replied"
    result = classify(msg)
    assert result.kind is Kind.BOUNCE
    assert result.bounce is not None and result.bounce.status == "5.1.1"
    assert result.reason == "delivery status notification: failed 5.1.1"


def test_a_dsn_sent_to_the_unsubscribe_address_is_still_a_bounce() -> None:
    raw = corpus("postfix_dsn_5_1_1.eml").replace(
        b"To: bounces@reply.campaigns.example", b"To: unsubscribe@reply.campaigns.example"
    )
    assert classify_raw(raw).kind is Kind.BOUNCE


def test_mail_to_the_unsubscribe_address_is_an_unsubscribe_even_when_automatic() -> None:
    raw = mail(
        "This is an automatic reply: I am out of the office until 5 January.",
        headers=[("To", "unsubscribe@reply.campaigns.example"), ("Auto-Submitted", "auto-replied")],
    )
    assert classify_raw(raw).kind is Kind.UNSUBSCRIBE


@pytest.mark.parametrize(
    ("headers", "kind"),
    [
        ([("To", "UNSUBSCRIBE@reply.campaigns.example")], Kind.UNSUBSCRIBE),
        ([("To", "unsubscribe+c2ByaW5n@reply.campaigns.example")], Kind.UNSUBSCRIBE),
        ([("Cc", "unsubscribe@reply.campaigns.example")], Kind.UNSUBSCRIBE),
        (
            [("To", "list@example.net"), ("Delivered-To", "unsubscribe@reply.campaigns.example")],
            Kind.UNSUBSCRIBE,
        ),
        ([("To", "unsubscribe-me@reply.campaigns.example")], Kind.HUMAN_REPLY),
        ([("To", "please-unsubscribe@reply.campaigns.example")], Kind.HUMAN_REPLY),
    ],
    ids=["upper-case", "tagged", "cc", "delivered-to", "longer-local-part", "prefixed-local-part"],
)
def test_any_recipient_with_exactly_the_unsubscribe_local_part_or_its_tag_is_an_unsubscribe(
    headers: list[tuple[str, str]], kind: Kind
) -> None:
    assert classify_raw(mail(headers=headers)).kind is kind


def test_the_unsubscribe_local_part_can_be_another() -> None:
    raw = mail(headers=[("To", "stop+x@reply.campaigns.example")])
    assert classify_raw(raw).kind is Kind.HUMAN_REPLY
    assert classify_raw(raw, unsubscribe_local_part="stop").kind is Kind.UNSUBSCRIBE


def test_mail_from_the_mail_system_without_a_report_or_status_is_automatic_not_a_persons_reply() -> None:
    result = classify_raw(corpus("postmaster_notice_without_status.eml"))
    assert (result.kind, result.out_of_office, result.away_until, result.bounce) == (
        Kind.AUTO_REPLY,
        False,
        None,
        None,
    )


def test_a_plain_bounce_from_the_mail_system_with_a_permanent_status_is_a_bounce() -> None:
    result = classify_raw(corpus("qmail_bounce_without_report.eml"))
    assert result.kind is Kind.BOUNCE and result.bounce is not None
    assert result.reason == "mail system bounce without a report: failed 5.1.1"


def test_out_of_office_wording_in_the_quoted_original_is_not_the_replys() -> None:
    result = classify_raw(corpus("human_reply_quoting_out_of_office.eml"))
    assert result.kind is Kind.HUMAN_REPLY


def test_a_return_date_in_the_quoted_original_is_not_the_auto_replys() -> None:
    # GIVEN an out-of-office reply that names no date, quoting our email, which names one
    body = (
        "I am out of the office with limited access to email.\n\n"
        "On Thu, Dec 17, 2026 at 10:02 AM Ada Byron <ada@reply.campaigns.example> wrote:\n"
        "> Our offer is open until 20 January.\n"
    )
    result = classify_raw(mail(body, headers=[("Auto-Submitted", "auto-replied")]))
    # THEN the default absence applies, counted from the Date header (17 December)
    assert (result.kind, result.out_of_office, result.away_until) == (
        Kind.AUTO_REPLY,
        True,
        date(2026, 12, 24),
    )
    assert result.reason == "out of office (auto-submitted header), no return date: 7 days assumed"


def test_an_automatic_reply_that_is_not_out_of_office_has_no_return_date() -> None:
    result = classify_raw(corpus("ticket_auto_ack.eml"))
    assert (result.kind, result.out_of_office, result.away_until) == (Kind.AUTO_REPLY, False, None)
    assert result.reason == "automatic (auto-submitted header), not out of office"


def test_the_time_received_counts_before_the_date_header() -> None:
    raw = mail("I'm on vacation until 8 January.", headers=[("Auto-Submitted", "auto-replied")])
    received = datetime(2027, 1, 9, 8, tzinfo=UTC)
    # 8 January is before the 9th, so its next occurrence is a year away: the default applies.
    assert classify_raw(raw, received=received).away_until == date(2027, 1, 16)
    assert classify_raw(raw).away_until == date(2027, 1, 8)


def test_without_a_time_received_or_a_date_header_the_default_counts_from_now(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(clock, "_now", lambda: datetime(2027, 2, 1, 12, tzinfo=UTC).timestamp())
    raw = mail("I am out of the office.", headers=[("Precedence", "auto_reply")], without=["Date"])
    assert classify_raw(raw).away_until == date(2027, 2, 8)


def test_bytes_that_parse_refuses_are_unparseable_with_the_bound_as_the_reason() -> None:
    result = classify_raw(b"")
    assert (result.kind, result.reason) == (Kind.UNPARSEABLE, "unparseable: empty message")


def test_the_classifier_never_answers_unmatched() -> None:
    kinds = {classify_raw(path.read_bytes()).kind for path in sorted(CORPUS.glob("*.eml"))}
    assert Kind.UNMATCHED not in kinds
    assert kinds == set(Kind) - {Kind.UNMATCHED}


def test_a_reason_names_no_address_subject_or_body_of_the_message() -> None:
    raw = mail(
        "Ich bin bis zum 15.01.2027 nicht im Büro, grace.hopper@example.com",
        headers=[("Subject", "Abwesenheitsnotiz: grace.hopper@example.com"), ("X-Autoreply", "yes")],
    )
    result = classify_raw(raw)
    assert result.kind is Kind.AUTO_REPLY and result.away_until == date(2027, 1, 15)
    assert "@" not in result.reason and "grace" not in result.reason and "Büro" not in result.reason


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(path.name for path in CORPUS.glob("*.eml"))),
    cut=st.integers(min_value=0, max_value=8000),
    noise=st.binary(max_size=40),
)
def test_a_cut_or_corrupted_corpus_message_is_classified_or_refused_never_a_crash(
    name: str, cut: int, noise: bytes
) -> None:
    raw = corpus(name)
    at = cut % (len(raw) + 1)
    result = classify_raw(raw[:at] + noise + raw[at + len(noise) :])
    assert result.kind in set(Kind) - {Kind.UNMATCHED}
    assert "\n" not in result.reason and "\r" not in result.reason
