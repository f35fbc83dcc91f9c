"""Rules of a forward: the original body byte for byte under a new header section that keeps only the
MIME fields, every value checked, and SES's answer deciding whether a retry may send again."""

from __future__ import annotations

from email import message_from_bytes
from typing import Any

import pytest
from botocore.exceptions import ClientError, ConnectionClosedError, EndpointConnectionError, ReadTimeoutError

from outreach import clients
from outreach.errors import ForwardOutcomeUnknownError, UnforwardableMessageError
from outreach.inbound import forward
from outreach.inbound.forward import Labels
from outreach.inbound.message import parse
from tests.functions.inbound.mail_support import mail

SENDER, OWNER = "forwarder@reply.example.com", "owner@example.com"
LABELS = Labels("reply", "spring", 2)


def _forwarded(raw: bytes, labels: Labels = LABELS) -> bytes:
    return forward.forwarded(raw, parse(raw), sender=SENDER, to=OWNER, labels=labels)


@pytest.mark.parametrize(
    ("raw", "parts"),
    [
        (b"A: 1\r\nB: 2\r\n\r\nbody\r\n\r\nmore", (b"A: 1\r\nB: 2\r\n", b"\r\n", b"body\r\n\r\nmore")),
        (b"A: 1\nB: 2\n\nbody\n", (b"A: 1\nB: 2\n", b"\n", b"body\n")),
        (b"A: 1\r\nB: 2\r\n", (b"A: 1\r\nB: 2\r\n", b"\r\n", b"")),
        (b"A: 1", (b"A: 1\n", b"\n", b"")),
    ],
)
def test_a_message_splits_at_its_first_empty_line(raw: bytes, parts: tuple[bytes, bytes, bytes]) -> None:
    assert forward.split(raw) == parts


def test_the_body_is_kept_byte_for_byte_and_only_the_mime_fields_are_copied() -> None:
    raw = mail(
        "Line one\r\n\r\n-- \r\nAda\r\n",
        headers=[
            ("From", '"Lovelace, Ada" <ada@example.org>'),
            ("DKIM-Signature", "v=1; a=rsa-sha256; d=example.org;\r\n\tb=abcdef"),
            ("Return-Path", "<ada@example.org>"),
            ("Sender", "list@example.org"),
            ("Received", "from mx by inbound"),
            ("Content-Transfer-Encoding", "8bit"),
            ("Cc", "someone-else@example.org"),
        ],
    )
    forwarded = _forwarded(raw)
    assert forwarded.split(b"\r\n\r\n", 1)[1] == raw.split(b"\r\n\r\n", 1)[1]
    message = message_from_bytes(forwarded)
    assert [name.lower() for name in message] == [
        "from",
        "to",
        "subject",
        "x-outreach-inbound",
        "x-outreach-campaign",
        "x-outreach-step",
        "reply-to",
        "mime-version",
        "content-type",
        "content-transfer-encoding",
    ]
    assert message["Reply-To"] == '"Lovelace, Ada" <ada@example.org>'
    assert (message["X-Outreach-Campaign"], message["X-Outreach-Step"]) == ("spring", "2")


def test_folded_mime_fields_are_copied_line_for_line_in_the_messages_own_line_ends() -> None:
    raw = b'From: <ada@example.org>\nContent-Type: multipart/mixed;\n\tboundary="b1"\n\n--b1\n\nhi\n--b1--\n'
    forwarded = _forwarded(raw)
    assert b'Content-Type: multipart/mixed;\n\tboundary="b1"\n\n--b1\n' in forwarded
    assert b"\r" not in forwarded


@pytest.mark.parametrize(
    "field",
    [
        b'Content-Type: text/plain; name="\xc3\xa9t\xc3\xa9.txt"',
        b'Content-Type: text/plain; x="' + b"y" * 1000 + b'"',
        b'Content-Disposition: attachment; filename="a\x00b"',
    ],
)
def test_a_mime_field_that_is_no_safe_header_makes_the_message_unforwardable(field: bytes) -> None:
    raw = b"From: <ada@example.org>\r\n" + field + b"\r\n\r\nbody\r\n"
    with pytest.raises(UnforwardableMessageError):
        forward.forwarded(raw, parse(raw), sender=SENDER, to=OWNER, labels=LABELS)


def test_an_encoded_subject_cannot_inject_a_header() -> None:
    raw = mail(headers=[("Subject", "=?utf-8?q?Hi=0D=0ABcc=3A_evil=40example=2Enet?=")])
    message = message_from_bytes(_forwarded(raw))
    assert message["Bcc"] is None
    assert "\n" not in str(message["Subject"])


def test_an_unmatched_forward_names_no_campaign_and_a_message_without_sender_no_reply_to() -> None:
    raw = b"Subject: hello\r\n\r\nno sender\r\n"
    message = message_from_bytes(
        forward.forwarded(raw, None, sender=SENDER, to=OWNER, labels=Labels("unparseable"))
    )
    assert message["X-Outreach-Inbound"] == "unparseable"
    assert message["X-Outreach-Campaign"] is None and message["Reply-To"] is None
    assert message["Subject"] == "(no subject)"


def test_a_notice_names_the_object_and_says_why() -> None:
    notice = forward.notice(
        sender=SENDER,
        to=OWNER,
        labels=LABELS,
        why="SES found a virus in it",
        bucket="b",
        key="inbound/m1",
        ses_message_id="m1",
    )
    message = message_from_bytes(notice)
    text = message.get_payload(decode=True)
    assert isinstance(text, bytes)
    assert b"bucket b, key inbound/m1" in text and b"campaign spring, step 2" in text
    assert message["Subject"] == "Inbound message not forwarded whole: SES found a virus in it"


def test_labels_take_only_the_four_marks() -> None:
    with pytest.raises(ValueError, match="mark"):
        Labels("spam")


class _Ses:
    def __init__(self, error: Exception | None) -> None:
        self.error = error
        self.requests: list[dict[str, Any]] = []

    def send_email(self, **request: Any) -> Any:
        self.requests.append(request)
        if self.error is not None:
            raise self.error
        return {"MessageId": "forward-1"}


def _refused(code: str) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": "no"}}, "SendEmail")


def test_a_forward_is_sent_raw_without_a_configuration_set(monkeypatch: pytest.MonkeyPatch) -> None:
    ses = _Ses(None)
    monkeypatch.setattr(clients, "sesv2", lambda: ses)
    assert forward.send(b"raw", sender=SENDER, to=OWNER) == "forward-1"
    assert ses.requests == [
        {
            "FromEmailAddress": SENDER,
            "Destination": {"ToAddresses": [OWNER]},
            "Content": {"Raw": {"Data": b"raw"}},
        }
    ]


@pytest.mark.parametrize(
    ("error", "raised"),
    [
        (_refused("MessageRejected"), UnforwardableMessageError),
        (_refused("TooManyRequestsException"), ClientError),
        (_refused("SendingPausedException"), ClientError),
        (EndpointConnectionError(endpoint_url="https://email"), EndpointConnectionError),
        (ReadTimeoutError(endpoint_url="https://email"), ForwardOutcomeUnknownError),
        (ConnectionClosedError(endpoint_url="https://email"), ForwardOutcomeUnknownError),
        (RuntimeError("anything else"), ForwardOutcomeUnknownError),
    ],
)
def test_only_what_proves_nothing_was_sent_is_raised_for_a_retry(
    monkeypatch: pytest.MonkeyPatch, error: Exception, raised: type[Exception]
) -> None:
    monkeypatch.setattr(clients, "sesv2", lambda: _Ses(error))
    with pytest.raises(raised):
        forward.send(b"raw", sender=SENDER, to=OWNER)
