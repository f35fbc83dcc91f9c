"""Raw messages for the inbound tests: a plain reply by default, every header replaceable or added."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

CORPUS = Path(__file__).parent / "corpus"

_DEFAULTS = (
    ("From", "Grace Hopper <grace.hopper@example.com>"),
    ("To", "Ada Byron <ada@reply.campaigns.example>"),
    ("Subject", "Re: Quick question about your website"),
    ("Date", "Thu, 17 Dec 2026 10:00:00 +0000"),
    ("Message-ID", "<reply-1@mail.example.com>"),
    ("MIME-Version", "1.0"),
    ("Content-Type", 'text/plain; charset="utf-8"'),
)


def mail(
    body: str = "Thanks, Tuesday works for me.\n",
    *,
    headers: Sequence[tuple[str, str]] = (),
    without: Sequence[str] = (),
) -> bytes:
    """A raw message: the default headers, those named in ``headers`` replaced (or added, in order),
    those named in ``without`` left out; CRLF line ends, the body as UTF-8."""
    replaced = {name.lower() for name, _ in headers} | {name.lower() for name in without}
    fields = [(name, value) for name, value in _DEFAULTS if name.lower() not in replaced]
    fields.extend(
        (name, value) for name, value in headers if name.lower() not in {n.lower() for n in without}
    )
    head = "".join(f"{name}: {value}\r\n" for name, value in fields)
    return (head + "\r\n" + body.replace("\r\n", "\n").replace("\n", "\r\n")).encode("utf-8")


def corpus(name: str) -> bytes:
    """The raw bytes of one corpus file."""
    return (CORPUS / name).read_bytes()
