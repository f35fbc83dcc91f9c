"""Mail that comes back to a campaign, built as the senders' mail systems write it, and read back by part.

Each builder returns the raw bytes a mail system would hand SES for the reply domain, shaped after the
classifier's corpus (``tests/functions/inbound/corpus``):

- ``human_reply``: a person answering one of our emails (``Reply``: who, to which address, in which
  client shape), quoting it below an attribution line (RFC 3676 ``>`` quoting), threaded on its
  Message-ID (RFC 5322 section 3.6.4 In-Reply-To/References), optionally with attachments;
- ``out_of_office``: an automatic answer naming a return date in English, German, French or Spanish,
  with the RFC 3834 ``Auto-Submitted`` field (or ``X-Autoreply``, ``Precedence: auto_reply``) or only
  by its wording;
- ``unsubscribe_mail``: what a mail client sends to the ``mailto:`` of List-Unsubscribe (RFC 2369):
  a blank message with the subject ``unsubscribe``;
- ``delivery_report``: a DSN (RFC 3464 in an RFC 6522 ``multipart/report``) from the recipient's mail
  system, naming the failed recipient and our message's Message-ID, sent with a null reverse-path;
- ``stranger_mail``: a message nobody sent an email to, for the unmatched path.

``leaf_parts`` and ``body_bytes`` read a message back for comparison: every non-multipart part's type,
file name and decoded bytes, and everything after the header section (RFC 5322 section 2.1).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, datetime
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import SMTP, compat32
from email.utils import format_datetime

LANGUAGES = ("en", "de", "fr", "es")
# Lines up to RFC 5322's 998 characters: with the SMTP policy's 78 an SES msg-id (about 90
# characters with its domain) has no place to fold, and the email package would write it as an
# RFC 2047 encoded word, which no mail client does to In-Reply-To or References.
POLICY = SMTP.clone(max_line_length=998)
_FRENCH_MONTHS: tuple[str, ...] = ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août")
_FRENCH_MONTHS += ("septembre", "octobre", "novembre", "décembre")
_ENGLISH_MONTHS: tuple[str, ...] = ("January", "February", "March", "April", "May", "June", "July")
_ENGLISH_MONTHS += ("August", "September", "October", "November", "December")
_ENGLISH_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@dataclass(frozen=True)
class Original:
    """What a reply needs of the email it answers: its Message-ID (as SES gave it), subject, text,
    sender and the reply address it came with."""

    message_id: str
    subject: str
    text: str
    sender: str
    reply_to: str


@dataclass(frozen=True)
class Attachment:
    filename: str
    maintype: str
    subtype: str
    data: bytes


def attachments_for(index: int) -> tuple[Attachment, ...]:
    """A PDF and a PNG of pseudo-random bytes (different per ``index``, never valid text)."""
    rng = random.Random(index)
    pdf = b"%PDF-1.7\n" + rng.randbytes(6_000 + index) + b"\n%%EOF\n"
    png = b"\x89PNG\r\n\x1a\n" + rng.randbytes(3_000 + index)
    return (
        Attachment(f"offer-{index}.pdf", "application", "pdf", pdf),
        Attachment(f"diagram {index}.png", "image", "png", png),
    )


def _quoted(original: Original, at: datetime) -> str:
    when = at.strftime("%a, %d %b %Y at %H:%M")
    lines = "\n".join(f"> {line}".rstrip() for line in original.text.splitlines())
    return f"On {when}, {original.sender} wrote:\n\n{lines}\n"


def _threaded(message: EmailMessage, original: Original) -> None:
    message["In-Reply-To"] = original.message_id
    message["References"] = original.message_id


def human_reply(
    original: Original,
    *,
    sender: str,
    name: str,
    to: str,
    index: int,
    at: datetime,
    shape: str = "plain",
    attachments: tuple[Attachment, ...] = (),
) -> bytes:
    """A person's answer to ``original`` from ``sender`` addressed ``to`` (the reply address, or
    another address of the reply domain when the client dropped the token). ``shape``: ``plain``
    (text only, quoted-printable UTF-8), ``alternative`` (text and HTML, as Gmail and Outlook send).
    """
    message = EmailMessage(policy=POLICY)
    message["From"] = f"{name} <{sender}>"
    message["To"] = to
    message["Subject"] = f"Re: {original.subject}"
    message["Date"] = format_datetime(at)
    message["Message-ID"] = f"<reply-{index}-{at:%Y%m%d%H%M%S}@mail.{sender.rpartition('@')[2]}>"
    _threaded(message, original)
    text = (
        f"Hello,\n\nthanks for writing. Yes, let's talk about it next week: a call on "
        f"Wednesday at 10 suits me. Grüße from the team of {name}.\n\n{name}\n\n"
        f"{_quoted(original, at)}"
    )
    message.set_content(text, cte="quoted-printable")
    if shape == "alternative":
        html = (
            f"<div>Hello,<br><br>thanks for writing. Yes, let's talk about it next week.<br>{name}</div>"
            f"<blockquote>{original.text.replace(chr(10), '<br>')}</blockquote>"
        )
        message.add_alternative(html, subtype="html", cte="quoted-printable")
    for attachment in attachments:
        message.add_attachment(
            attachment.data,
            maintype=attachment.maintype,
            subtype=attachment.subtype,
            filename=attachment.filename,
        )
    return message.as_bytes()


def _return_text(language: str, back_on: date) -> tuple[str, str]:
    """The subject prefix and the body naming ``back_on`` in ``language``."""
    if language == "en":
        day, month = _ENGLISH_DAYS[back_on.weekday()], _ENGLISH_MONTHS[back_on.month - 1]
        named = f"{day}, {month} {back_on.day}, {back_on.year}"
        return "Automatic reply", (
            f"Thank you for your message. I am out of the office until {named} with limited access "
            "to email.\n\nFor urgent matters please contact my colleague.\n"
        )
    if language == "de":
        return "Abwesenheitsnotiz", (
            f"Vielen Dank für Ihre Nachricht. Ich bin bis zum {back_on:%d.%m.%Y} nicht im Büro und habe "
            "keinen Zugriff auf meine E-Mails.\n\nMit freundlichen Grüßen\n"
        )
    if language == "fr":
        named = f"{back_on.day} {_FRENCH_MONTHS[back_on.month - 1]} {back_on.year}"
        return "Réponse automatique :", (
            f"Bonjour,\n\nJe suis absente du bureau et serai de retour le {named}. Je répondrai à votre "
            "message dès mon retour.\n\nCordialement\n"
        )
    if language == "es":
        return "Respuesta automática:", (
            f"Gracias por su mensaje.\n\nEstoy fuera de la oficina hasta el {back_on:%d/%m/%Y} y no "
            "tengo acceso al correo.\n\nSaludos cordiales\n"
        )
    raise ValueError(f"language must be one of {LANGUAGES}")


# The header fields that mark an automatic reply (RFC 3834 section 5 and the de-facto ones), by turn.
_AUTOMATIC_FIELDS = (
    (("Auto-Submitted", "auto-replied"),),
    (("Auto-Submitted", "auto-generated"), ("X-Auto-Response-Suppress", "All")),
    (("X-Autoreply", "yes"),),
    (("Precedence", "auto_reply"),),
)


def out_of_office(
    original: Original,
    *,
    sender: str,
    name: str,
    index: int,
    at: datetime,
    language: str,
    back_on: date,
    rfc3834: bool,
) -> bytes:
    """An automatic out-of-office answer to ``original`` (sent to its reply address) naming
    ``back_on``; with a header field that marks it automatic when ``rfc3834``, else only its subject
    and wording say so."""
    prefix, body = _return_text(language, back_on)
    message = EmailMessage(policy=POLICY)
    message["From"] = f"{name} <{sender}>"
    message["To"] = original.reply_to
    message["Subject"] = f"{prefix.rstrip(':').rstrip()}: {original.subject}"
    message["Date"] = format_datetime(at)
    message["Message-ID"] = f"<ooo-{index}-{at:%Y%m%d%H%M%S}@mx.{sender.rpartition('@')[2]}>"
    _threaded(message, original)
    if rfc3834:
        for field, value in _AUTOMATIC_FIELDS[index % len(_AUTOMATIC_FIELDS)]:
            message[field] = value
    message.set_content(f"{body}\n{name}\n", cte="8bit" if language == "fr" else "quoted-printable")
    return message.as_bytes()


def unsubscribe_mail(*, sender: str, mailbox: str, index: int, at: datetime) -> bytes:
    """What a mail client sends to List-Unsubscribe's ``mailto:`` ``mailbox``: no text, subject
    ``unsubscribe``."""
    message = EmailMessage(policy=POLICY)
    message["From"] = sender
    message["To"] = mailbox
    message["Subject"] = "unsubscribe"
    message["Date"] = format_datetime(at)
    message["Message-ID"] = f"<unsubscribe-{index}-{at:%Y%m%d%H%M%S}@mail.{sender.rpartition('@')[2]}>"
    message.set_content("\n")
    return message.as_bytes()


def delivery_report(
    original: Original, *, recipient: str, to: str, index: int, at: datetime, whole_message: bool
) -> bytes:
    """A DSN (RFC 3464) from ``recipient``'s mail system: ``failed``, status 5.1.1, with our message's
    header (``text/rfc822-headers``) or, when ``whole_message``, all of it (``message/rfc822``)."""
    domain = recipient.rpartition("@")[2]
    boundary = f"dsn-{index}-{at:%H%M%S}/mx.{domain}"
    stamp = format_datetime(at)
    original_header = (
        f"From: {original.sender}\r\nTo: {recipient}\r\nSubject: {original.subject}\r\n"
        f"Message-ID: {original.message_id}\r\nMIME-Version: 1.0\r\n"
    )
    if whole_message:
        kind, returned = "message/rfc822", original_header + "Content-Type: text/plain; charset=UTF-8\r\n\r\n"
        returned += original.text.replace("\n", "\r\n").encode("ascii", "replace").decode("ascii")
    else:
        kind, returned = "text/rfc822-headers", original_header
    text = (
        f"Return-Path: <>\r\n"
        f"Date: {stamp}\r\n"
        f"From: MAILER-DAEMON@mx.{domain} (Mail Delivery System)\r\n"
        f"Subject: Undelivered Mail Returned to Sender\r\n"
        f"To: {to}\r\n"
        f"Auto-Submitted: auto-replied\r\n"
        f"MIME-Version: 1.0\r\n"
        f'Content-Type: multipart/report; report-type=delivery-status;\r\n\tboundary="{boundary}"\r\n'
        f"Message-Id: <dsn-{index}-{at:%Y%m%d%H%M%S}@mx.{domain}>\r\n"
        f"\r\n"
        f"This is a MIME-encapsulated message.\r\n\r\n"
        f"--{boundary}\r\n"
        f"Content-Description: Notification\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n"
        f"This is the mail system at host mx.{domain}.\r\n\r\n"
        f"I'm sorry to have to inform you that your message could not\r\n"
        f"be delivered to one or more recipients.\r\n\r\n"
        f"<{recipient}>: host mail.{domain} said: 550 5.1.1 <{recipient}>: Recipient\r\n"
        f"    address rejected: User unknown in virtual mailbox table\r\n\r\n"
        f"--{boundary}\r\n"
        f"Content-Description: Delivery report\r\nContent-Type: message/delivery-status\r\n\r\n"
        f"Reporting-MTA: dns; mx.{domain}\r\n"
        f"Arrival-Date: {stamp}\r\n\r\n"
        f"Final-Recipient: rfc822; {recipient}\r\n"
        f"Original-Recipient: rfc822;{recipient}\r\n"
        f"Action: failed\r\n"
        f"Status: 5.1.1\r\n"
        f"Remote-MTA: dns; mail.{domain}\r\n"
        f"Diagnostic-Code: smtp; 550 5.1.1 <{recipient}>: Recipient address rejected: User\r\n"
        f"    unknown in virtual mailbox table\r\n\r\n"
        f"--{boundary}\r\n"
        f"Content-Description: Undelivered Message\r\nContent-Type: {kind}\r\n\r\n"
        f"{returned}\r\n"
        f"--{boundary}--\r\n"
    )
    return text.encode("ascii")


def stranger_mail(
    *, sender: str, to: str, index: int, at: datetime, attachments: tuple[Attachment, ...] = ()
) -> bytes:
    """A message from someone no email went to (a question to an address of the reply domain)."""
    message = EmailMessage(policy=POLICY)
    message["From"] = f"Someone Else <{sender}>"
    message["To"] = to
    message["Subject"] = f"Question about your services ({index})"
    message["Date"] = format_datetime(at)
    message["Message-ID"] = f"<stranger-{index}-{at:%Y%m%d%H%M%S}@mail.{sender.rpartition('@')[2]}>"
    if index % 2:
        message["In-Reply-To"] = f"<not-ours-{index}@mail.elsewhere.example>"
    message.set_content(f"Hello,\n\ncould you send me your prices, please?\n\nRegards, stranger {index}\n")
    for attachment in attachments:
        message.add_attachment(
            attachment.data,
            maintype=attachment.maintype,
            subtype=attachment.subtype,
            filename=attachment.filename,
        )
    return message.as_bytes()


def body_bytes(raw: bytes) -> bytes:
    """Everything after the header section: the first empty line (CRLF or LF) ends it."""
    crlf, lf = raw.find(b"\r\n\r\n"), raw.find(b"\n\n")
    if crlf != -1 and (lf == -1 or crlf <= lf):
        return raw[crlf + 4 :]
    return raw[lf + 2 :] if lf != -1 else b""


def leaf_parts(raw: bytes) -> list[tuple[str, str | None, bytes]]:
    """Every non-multipart part of ``raw``, in order: its content type, file name and decoded bytes."""
    message = BytesParser(policy=compat32).parsebytes(raw)
    found: list[tuple[str, str | None, bytes]] = []
    for part in message.walk():
        if part.is_multipart():
            continue
        payload = part.get_payload(decode=True)
        found.append(
            (part.get_content_type(), part.get_filename(), payload if isinstance(payload, bytes) else b"")
        )
    return found


def header(raw: bytes, name: str) -> str | None:
    """One header field of ``raw`` (the first), unfolded, or ``None``."""
    value = BytesParser(policy=compat32).parsebytes(raw, headersonly=True).get(name)
    return None if value is None else " ".join(str(value).split())
