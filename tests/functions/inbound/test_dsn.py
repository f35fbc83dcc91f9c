"""Delivery status notifications (RFC 3464): each recipient's action and status, and the original's id."""

from __future__ import annotations

import base64

import pytest

from outreach.errors import UnparseableMessageError
from outreach.inbound import parse
from outreach.inbound.dsn import (
    MAX_DIAGNOSTIC_CHARS,
    MAX_RECIPIENT_BLOCKS,
    Action,
    DeliveryReport,
    RecipientReport,
    parse_dsn,
    parse_plain_bounce,
)
from tests.functions.inbound.mail_support import corpus, mail

_ORIGINAL = "0100019a2b3c4d5e-7f8a9b0c-1d2e-4f3a-8b9c-0d1e2f3a4b{}-000000@ses.example"


def _report(status_part: str, *, status_type: str = "message/delivery-status", extra: str = "") -> bytes:
    body = (
        "--r\r\nContent-Type: text/plain\r\n\r\nDelivery failed.\r\n"
        f"--r\r\nContent-Type: {status_type}\r\n{extra}\r\n{status_part}\r\n--r--\r\n"
    )
    return mail(
        body,
        headers=[
            ("From", "MAILER-DAEMON@mx.example.net"),
            ("Content-Type", 'multipart/report; report-type=delivery-status; boundary="r"'),
        ],
    )


_TWO_RECIPIENTS = (
    "Reporting-MTA: dns; mx.example.net\r\n\r\n"
    "Final-Recipient: rfc822; one@example.net\r\nAction: failed\r\nStatus: 5.2.1 (mailbox disabled)\r\n\r\n"
    "Final-Recipient: rfc822; two@example.net\r\nAction: delivered\r\nStatus: 2.0.0\r\n"
)


def test_a_postfix_dsn_gives_the_recipient_its_permanent_failure_and_our_message_id() -> None:
    report = parse_dsn(corpus("postfix_dsn_5_1_1.eml"))
    assert report == DeliveryReport(
        recipients=(
            RecipientReport(
                final_recipient="nobody@example.net",
                original_recipient="nobody@example.net",
                action=Action.FAILED,
                status="5.1.1",
                diagnostic=(
                    "smtp; 550 5.1.1 <nobody@example.net>: Recipient address rejected: User unknown in "
                    "virtual mailbox table"
                ),
            ),
        ),
        reporting_mta="mx.example.net",
        original_message_id=_ORIGINAL.format("70"),
    )
    assert report.permanent and report.recipients[0].permanent


def test_an_exchange_dsn_reads_its_status_with_a_two_digit_detail_and_the_rfc822_headers_part() -> None:
    report = parse_dsn(parse(corpus("exchange_dsn_5_1_10.eml")))
    assert report is not None
    assert report.status == "5.1.10"
    assert report.recipients[0].final_recipient == "ghost@example.com"
    assert report.original_message_id == _ORIGINAL.format("71")


def test_a_delayed_dsn_is_transient_not_permanent() -> None:
    report = parse_dsn(corpus("postfix_dsn_delayed_4_2_2.eml"))
    assert report is not None
    (recipient,) = report.recipients
    assert (recipient.action, recipient.status, recipient.transient, recipient.permanent) == (
        Action.DELAYED,
        "4.2.2",
        True,
        False,
    )
    assert not report.permanent
    assert report.original_message_id == _ORIGINAL.format("72")


def test_each_recipient_block_is_read_and_the_report_status_is_the_most_severe() -> None:
    report = parse_dsn(_report(_TWO_RECIPIENTS))
    assert report is not None
    assert [(r.final_recipient, r.action, r.status) for r in report.recipients] == [
        ("one@example.net", Action.FAILED, "5.2.1"),
        ("two@example.net", Action.DELIVERED, "2.0.0"),
    ]
    assert report.status == "5.2.1"
    assert report.original_message_id is None


def test_a_report_without_its_per_message_block_keeps_its_first_recipient() -> None:
    report = parse_dsn(_report(_TWO_RECIPIENTS.split("\r\n\r\n", 1)[1]))
    assert report is not None
    assert report.reporting_mta is None
    assert [r.final_recipient for r in report.recipients] == ["one@example.net", "two@example.net"]


def test_a_base64_delivery_status_part_is_read_as_text() -> None:
    encoded = base64.b64encode(_TWO_RECIPIENTS.encode()).decode()
    report = parse_dsn(_report(encoded, extra="Content-Transfer-Encoding: base64\r\n"))
    assert report is not None and report.status == "5.2.1"


def test_the_global_delivery_status_form_is_read() -> None:
    report = parse_dsn(_report(_TWO_RECIPIENTS, status_type="message/global-delivery-status"))
    assert report is not None
    assert [r.final_recipient for r in report.recipients] == ["one@example.net", "two@example.net"]


def test_an_unknown_action_or_a_malformed_status_is_kept_as_none() -> None:
    part = (
        "Reporting-MTA: dns; mx\r\n\r\n"
        "Final-Recipient: rfc822;x@example.net\r\nAction: exploded\r\nStatus: 5.x\r\n"
    )
    report = parse_dsn(_report(part))
    assert report is not None
    assert (report.recipients[0].action, report.recipients[0].status, report.status) == (None, None, None)


def test_the_diagnostic_is_bounded_and_on_one_line() -> None:
    part = (
        "Reporting-MTA: dns; mx\r\n\r\nFinal-Recipient: rfc822;x@example.net\r\nAction: failed\r\n"
        "Status: 5.0.0\r\nDiagnostic-Code: smtp; 550 " + "no\r\n  such user " * 200 + "\r\n"
    )
    report = parse_dsn(_report(part))
    assert report is not None
    diagnostic = report.recipients[0].diagnostic
    assert diagnostic is not None and len(diagnostic) == MAX_DIAGNOSTIC_CHARS
    assert "\r" not in diagnostic and "\n" not in diagnostic


def test_at_most_the_bound_of_recipient_blocks_is_read() -> None:
    blocks = "".join(
        f"\r\nFinal-Recipient: rfc822; r{index}@example.net\r\nAction: failed\r\nStatus: 5.1.1\r\n"
        for index in range(MAX_RECIPIENT_BLOCKS + 20)
    )
    report = parse_dsn(_report("Reporting-MTA: dns; mx\r\n" + blocks))
    assert report is not None and len(report.recipients) == MAX_RECIPIENT_BLOCKS


@pytest.mark.parametrize(
    "raw",
    [
        mail(),
        corpus("gmail_reply.eml"),
        _report(_TWO_RECIPIENTS).replace(b"report-type=delivery-status", b"report-type=feedback-report"),
        _report(_TWO_RECIPIENTS, status_type="text/plain"),
        _report("Reporting-MTA: dns; mx.example.net\r\n"),
    ],
    ids=["plain-mail", "reply", "feedback-report", "no-status-part", "no-recipient-block"],
)
def test_anything_but_a_delivery_report_with_a_recipient_is_no_dsn(raw: bytes) -> None:
    assert parse_dsn(raw) is None


def test_a_report_without_the_report_type_parameter_is_read_by_its_status_part() -> None:
    raw = _report(_TWO_RECIPIENTS).replace(b"report-type=delivery-status; ", b"")
    assert parse_dsn(raw) is not None


def test_raw_bytes_that_parse_refuses_are_refused() -> None:
    with pytest.raises(UnparseableMessageError):
        parse_dsn(b"")


# ---- bounces without a report --------------------------------------------------------------------


def test_a_qmail_bounce_gives_the_recipient_named_before_its_permanent_status() -> None:
    report = parse_plain_bounce(parse(corpus("qmail_bounce_without_report.eml")))
    assert report == DeliveryReport(
        recipients=(RecipientReport("nobody@example.net", None, Action.FAILED, "5.1.1", None),),
        reporting_mta=None,
        original_message_id=_ORIGINAL.format("73"),
    )


def test_exims_failed_recipients_header_names_the_recipient_when_the_text_does_not() -> None:
    msg = parse(
        mail(
            "A message that you sent could not be delivered.\n  SMTP error: 550 5.1.1 user unknown\n",
            headers=[
                ("From", "Mail Delivery System <Mailer-Daemon@mx.example.net>"),
                ("X-Failed-Recipients", "gone@example.net"),
            ],
        )
    )
    report = parse_plain_bounce(msg)
    assert report is not None and report.recipients[0].final_recipient == "gone@example.net"


@pytest.mark.parametrize(
    ("sender", "text"),
    [
        ("grace.hopper@example.com", "<nobody@example.net>: no mailbox (#5.1.1)"),
        ("postmaster@example.com", "<nobody@example.net>: try again later (#4.2.2)"),
        ("postmaster@example.com", "Undeliverable (#5.1.1), but to whom is not said."),
    ],
    ids=["not-a-mail-system", "transient-only", "no-recipient"],
)
def test_a_plain_bounce_needs_a_mail_system_sender_a_permanent_status_and_a_recipient(
    sender: str, text: str
) -> None:
    assert parse_plain_bounce(parse(mail(text, headers=[("From", sender)]))) is None
