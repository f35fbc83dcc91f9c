"""Reading a raw message: bounded, cleaned fields; refused (naming the bound) only when it cannot be read."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from outreach.errors import UnparseableMessageError
from outreach.inbound import message
from outreach.inbound.html_text import html_to_text
from outreach.inbound.message import (
    MAX_BODY_CHARS,
    MAX_HEADER_CHARS,
    MAX_HEADER_FIELDS,
    MAX_MESSAGE_BYTES,
    MAX_RECIPIENTS,
    MAX_REFERENCES,
    parse,
)
from tests.functions.inbound.mail_support import corpus, mail


def _texts(value: object) -> list[str]:
    """Every string an InboundMessage field holds, at any depth."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, tuple):
        return [text for inner in value for text in _texts(inner)]
    return []


def _header_texts(msg: message.InboundMessage) -> list[str]:
    return [
        text
        for field in dataclasses.fields(msg)
        if field.name not in ("body", "source")
        for text in _texts(getattr(msg, field.name))
    ]


# ---- refused -----------------------------------------------------------------------------------------


def test_a_message_over_the_size_bound_is_refused_with_the_error_naming_the_limit() -> None:
    raw = mail("x" * MAX_MESSAGE_BYTES)
    with pytest.raises(UnparseableMessageError, match=r"over the 10,485,760 bytes \(MAX_MESSAGE_BYTES\)"):
        parse(raw)


def test_a_message_of_exactly_the_size_bound_is_read_and_one_byte_more_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    raw = mail("Thanks.")
    monkeypatch.setattr(message, "MAX_MESSAGE_BYTES", len(raw))
    assert parse(raw).body == "Thanks."
    with pytest.raises(UnparseableMessageError, match="MAX_MESSAGE_BYTES"):
        parse(raw + b"!")


@pytest.mark.parametrize("raw", [b"", b"\r\n\r\n", b"   "], ids=["empty", "blank-lines", "spaces"])
def test_an_empty_message_is_refused(raw: bytes) -> None:
    with pytest.raises(UnparseableMessageError, match="empty message"):
        parse(raw)


@pytest.mark.parametrize(
    "raw",
    [
        b"\x00\xff\xfe\x89PNG garbage\r\nmore garbage",
        b"Received: from mx.example.net\r\nDKIM-Signature: v=1; a=rsa-sha256; d=exa",
        mail(without=["From"]),
        mail(headers=[("From", "   ")]),
    ],
    ids=["binary", "cut-in-header", "no-from", "blank-from"],
)
def test_a_message_without_a_from_field_is_refused(raw: bytes) -> None:
    with pytest.raises(UnparseableMessageError, match="no From header field"):
        parse(raw)


def test_a_message_with_more_header_fields_than_the_bound_is_refused() -> None:
    raw = mail(headers=[(f"X-Filler-{index}", "x") for index in range(MAX_HEADER_FIELDS)])
    with pytest.raises(UnparseableMessageError, match=r"MAX_HEADER_FIELDS"):
        parse(raw)


def test_mime_nested_deeper_than_the_parser_follows_is_refused_not_a_crash() -> None:
    nested = "".join(
        f'--b{level}\r\nContent-Type: multipart/mixed; boundary="b{level + 1}"\r\n\r\n'
        for level in range(3000)
    )
    raw = mail(nested, headers=[("Content-Type", 'multipart/mixed; boundary="b0"')])
    with pytest.raises(UnparseableMessageError, match="nested deeper"):
        parse(raw)


def test_something_other_than_bytes_is_refused() -> None:
    with pytest.raises(UnparseableMessageError, match="not str"):
        parse("From: a@example.com\r\n\r\nhi")  # type: ignore[arg-type]


# ---- header fields: no CR or LF, bounded -------------------------------------------------------------


def test_cr_and_lf_in_a_header_never_reach_a_field() -> None:
    # GIVEN encoded words and folded values that decode to CR, LF, NUL and a line separator
    raw = mail(
        headers=[
            ("From", "=?utf-8?q?Eve=0D=0ABcc=3A_x=40example=2Enet?= <eve@example.net>"),
            ("Subject", "=?utf-8?q?Hello=0D=0ABcc:_victim@example.net=0Aagain=00=E2=80=A8?="),
            ("To", "ada@reply.campaigns.example,\r\n =?utf-8?q?=0D=0A?= <bob@example.com>"),
            ("Message-ID", "<id-1@example.net>\r\n X-Injected: yes"),
            ("References", "<a@example.net>\r\n\t<b@example.net>"),
            ("Auto-Submitted", "=?utf-8?q?no=0D=0AX-Evil=3A_1?="),
            ("X-Autoreply", "yes\r\n\tplease"),
        ]
    )
    msg = parse(raw)
    # THEN no field holds a control character, and nothing injected became a recipient
    for text in _header_texts(msg):
        assert not any(char in text for char in "\r\n\x00\u2028"), text
    assert msg.subject == "Hello Bcc: victim@example.net again"
    assert msg.from_address == "eve@example.net"
    assert msg.to == ("ada@reply.campaigns.example", "bob@example.com")
    assert msg.message_id == "id-1@example.net"
    assert msg.references == ("a@example.net", "b@example.net")
    assert msg.header("x-autoreply") == "yes please"


def test_a_subject_over_the_bound_is_cut_to_it() -> None:
    msg = parse(mail(headers=[("Subject", "Re: " + "long words " * 400)]))
    assert len(msg.subject) == MAX_HEADER_CHARS
    assert msg.subject.startswith("Re: long words")


def test_a_classifier_header_over_the_bound_is_cut_to_it() -> None:
    msg = parse(mail(headers=[("Auto-Submitted", "auto-replied; " + "x" * 5000)]))
    value = msg.header("Auto-Submitted")
    assert value is not None and len(value) == MAX_HEADER_CHARS
    assert value.startswith("auto-replied;")


def test_only_the_last_references_are_kept() -> None:
    ids = [f"<ref-{index}@example.net>" for index in range(MAX_REFERENCES + 30)]
    msg = parse(mail(headers=[("References", "\r\n ".join(ids))]))
    assert msg.references == tuple(f"ref-{index}@example.net" for index in range(30, MAX_REFERENCES + 30))


def test_a_message_id_over_the_bound_is_no_message_id() -> None:
    msg = parse(mail(headers=[("Message-ID", f"<{'x' * 300}@example.net>"), ("In-Reply-To", "not an id")]))
    assert msg.message_id is None
    assert msg.in_reply_to is None


def test_recipients_are_bounded_and_each_address_kept_once() -> None:
    many = ", ".join(f"person{index}@example.com" for index in range(MAX_RECIPIENTS + 50))
    msg = parse(mail(headers=[("To", many), ("Cc", "Person0@Example.com")]))
    assert len(msg.to) == MAX_RECIPIENTS
    assert msg.cc == ("person0@example.com",)
    assert len(msg.recipients) == MAX_RECIPIENTS


def test_addresses_are_lower_cased_and_what_is_not_an_address_is_dropped() -> None:
    msg = parse(
        mail(
            headers=[
                ("From", '"Hopper, Grace" <Grace.Hopper@EXAMPLE.com>'),
                ("To", "undisclosed-recipients:;, <>, not an address, Ada <ADA@Reply.Campaigns.Example>"),
                ("Delivered-To", "ada@reply.campaigns.example"),
                ("Delivered-To", "ada+tag@reply.campaigns.example"),
            ]
        )
    )
    assert msg.from_address == "grace.hopper@example.com"
    assert msg.from_local_part == "grace.hopper"
    assert msg.to == ("ada@reply.campaigns.example",)
    assert msg.delivered_to == ("ada@reply.campaigns.example", "ada+tag@reply.campaigns.example")


def test_a_from_without_a_domain_keeps_its_local_part() -> None:
    msg = parse(mail(headers=[("From", "MAILER-DAEMON (Mail Delivery System)")]))
    assert msg.from_address is None
    assert msg.from_local_part == "mailer-daemon"


def test_a_date_is_read_with_its_zone_and_a_zone_less_one_as_utc() -> None:
    assert parse(mail()).date == datetime(2026, 12, 17, 10, tzinfo=UTC)
    assert parse(mail(headers=[("Date", "Thu, 17 Dec 2026 10:00:00 -0000")])).date == datetime(
        2026, 12, 17, 10, tzinfo=UTC
    )
    assert parse(mail(headers=[("Date", "yesterday, around noon")])).date is None


def test_the_classifier_headers_are_kept_under_their_lower_case_names() -> None:
    msg = parse(mail(headers=[("AUTO-SUBMITTED", "auto-replied"), ("Precedence", "bulk"), ("X-Other", "1")]))
    assert msg.headers == (("auto-submitted", "auto-replied"), ("precedence", "bulk"))
    assert msg.header("Precedence") == "bulk"
    assert msg.header("x-other") is None


def test_the_content_type_and_report_type_are_read() -> None:
    msg = parse(corpus("postfix_dsn_5_1_1.eml"))
    assert (msg.content_type, msg.report_type) == ("multipart/report", "delivery-status")
    assert parse(mail()).report_type is None


# ---- body ------------------------------------------------------------------------------------------


def _multipart(*parts: tuple[str, str], subtype: str = "alternative") -> bytes:
    body = "".join(f"--sep\r\n{head}\r\n\r\n{text}\r\n" for head, text in parts) + "--sep--\r\n"
    return mail(body, headers=[("Content-Type", f'multipart/{subtype}; boundary="sep"')])


def test_the_plain_text_part_is_preferred_to_the_html_one() -> None:
    raw = _multipart(
        ("Content-Type: text/html; charset=utf-8", "<p>the html text</p>"),
        ("Content-Type: text/plain; charset=utf-8", "the plain text"),
    )
    msg = parse(raw)
    assert (msg.body, msg.body_from_html) == ("the plain text", False)


def test_an_html_only_reply_is_read_as_text_with_its_quote_marked() -> None:
    msg = parse(corpus("html_only_reply.eml"))
    assert msg.body_from_html
    assert msg.body.splitlines()[:2] == [
        "Hello Ada,",
        "Yes, please call me on Monday morning \u2013 my number is on the website.",
    ]
    assert "> I am out of the office from Monday, so reply by Friday." in msg.body
    assert "font-family" not in msg.body
    assert "Re: Quick question" not in msg.body  # the <title>


def test_an_attachment_or_an_attached_message_is_not_the_body() -> None:
    raw = _multipart(
        ("Content-Type: text/plain\r\nContent-Disposition: attachment; filename=notes.txt", "attached notes"),
        ("Content-Type: message/rfc822", "From: x@example.net\r\nSubject: old\r\n\r\nthe old message"),
        subtype="mixed",
    )
    assert parse(raw).body == ""


def test_a_body_in_an_unknown_charset_is_read_as_utf8_with_replacements() -> None:
    raw = mail(headers=[("Content-Type", "text/plain; charset=x-no-such-charset")]).replace(
        b"Thanks", "Thänks".encode()
    )
    assert parse(raw).body.startswith("Thänks, Tuesday")


def test_the_body_is_bounded_and_its_line_ends_are_newlines() -> None:
    msg = parse(mail("line one\r\nline two\r\n" + "x" * (MAX_BODY_CHARS * 2)))
    assert msg.body.startswith("line one\nline two\n")
    assert len(msg.body) == MAX_BODY_CHARS
    assert "\r" not in msg.body


def test_html_with_an_unclosed_head_or_a_refused_marked_section_keeps_its_text() -> None:
    unclosed = "<html><head><title>t</title><meta charset=utf-8><body><p>Yes, call me.</p></body>"
    assert html_to_text(unclosed, limit=100) == "Yes, call me."
    refused = "<p>Yes, call me.</p><![foo[ bar ]]><p>later</p>"
    assert html_to_text(refused, limit=100) == "Yes, call me."
    assert html_to_text("<p>" + "word " * 100 + "</p>", limit=20) == ("word " * 4).strip()
