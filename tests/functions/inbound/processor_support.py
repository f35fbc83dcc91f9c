"""Messages and reads the inbound processor's end-to-end tests share: a reply, an out-of-office, a DSN
and a reply with attachments as mail clients and mail systems write them; a task's status, the receipts
as stored, a schedule's expression; and an SES client whose first sends fail."""

from __future__ import annotations

from email.message import EmailMessage
from email.policy import SMTP
from typing import Any

import boto3

from outreach import config, task_store
from outreach.email_task import PlannedEmail
from outreach.task_model import Status
from tests.functions.feedback_support import stored
from tests.functions.inbound.inbound_support import REPLY_DOMAIN, Inbound
from tests.functions.inbound.mail_support import mail
from tests.support.aws import REGION

A = "ada@example.org"


def reply(token: str, *, sender: str = A, extra: tuple[tuple[str, str], ...] = (), body: str = "") -> bytes:
    """A person's plain reply from ``sender`` to ``token`` (the address it was sent to)."""
    headers = (("From", f"Ada Lovelace <{sender}>"), ("To", token), *extra)
    return mail(body or "Yes, let's talk on Tuesday.\n", headers=headers)


def status_of(email: PlannedEmail) -> tuple[Status, str]:
    """The email's task status and failure reason as stored."""
    task = stored(email.task_id)
    return task.status, task.failure_reason or ""


def receipt_items() -> list[dict[str, Any]]:
    """Every inbound receipt in the ledger's table, as stored."""
    items = boto3.client("dynamodb", region_name=REGION).scan(TableName=config.contacts_table())["Items"]
    return [task_store.from_item(item) for item in items if item["contact_key"]["S"].startswith("inbound#")]


def schedule_expression(inbound: Inbound, email: PlannedEmail) -> str:
    """When the email's schedule fires (its ``ScheduleExpression``)."""
    found = boto3.client("scheduler", region_name=REGION).get_schedule(
        Name=email.schedule_name, GroupName=inbound.target.group
    )
    return str(found["ScheduleExpression"])


class FailingSes:
    """The processor's SES client: moto's, with the first SendEmail calls raising ``errors``."""

    def __init__(self, *errors: Exception) -> None:
        self._client = boto3.client("sesv2", region_name=REGION)
        self._errors = list(errors)
        self.calls = 0

    def send_email(self, **request: Any) -> Any:
        self.calls += 1
        if self._errors:
            raise self._errors.pop(0)
        return self._client.send_email(**request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def with_attachments(token: str) -> bytes:
    message = EmailMessage(policy=SMTP)
    message["From"] = f"Ada Lovelace <{A}>"
    message["To"] = token
    message["Subject"] = "Re: Angebot, Grüße aus Köln"
    message["Message-ID"] = "<reply-7@mail.example.org>"
    message["DKIM-Signature"] = "v=1; a=rsa-sha256; d=example.org; s=s1; b=abc"
    message.set_content("Anbei das Dokument.\nViele Grüße\n")
    message.add_alternative("<p>Anbei das Dokument.</p>", subtype="html")
    message.add_attachment(
        bytes(range(256)) * 40, maintype="application", subtype="pdf", filename="angebot.pdf"
    )
    message.add_attachment(
        b"\x89PNG\r\n\x1a\n" + bytes(300), maintype="image", subtype="png", filename="logo.png"
    )
    return message.as_bytes()


def out_of_office(token: str, text: str) -> bytes:
    return mail(
        text,
        headers=[
            ("From", f"Ada Lovelace <{A}>"),
            ("To", token),
            ("Subject", "Automatic reply: Quick question about your website"),
            ("Auto-Submitted", "auto-replied"),
        ],
    )


def dsn(recipient: str, original_id: str, status: str = "5.1.1", action: str = "failed") -> bytes:
    boundary = "dsn-boundary"
    return (
        "From: Mail Delivery System <MAILER-DAEMON@mx.example.org>\r\n"
        f"To: bounces@{REPLY_DOMAIN}\r\n"
        "Subject: Undelivered Mail Returned to Sender\r\n"
        "Auto-Submitted: auto-replied\r\n"
        "MIME-Version: 1.0\r\n"
        f'Content-Type: multipart/report; report-type=delivery-status; boundary="{boundary}"\r\n'
        "\r\n"
        f"--{boundary}\r\n"
        "Content-Type: text/plain\r\n\r\nYour message could not be delivered.\r\n"
        f"--{boundary}\r\n"
        "Content-Type: message/delivery-status\r\n\r\n"
        "Reporting-MTA: dns; mx.example.org\r\n\r\n"
        f"Final-Recipient: rfc822; {recipient}\r\n"
        f"Action: {action}\r\n"
        f"Status: {status}\r\n"
        "Diagnostic-Code: smtp; 550 5.1.1 user unknown\r\n\r\n"
        f"--{boundary}\r\n"
        "Content-Type: text/rfc822-headers\r\n\r\n"
        f"Message-ID: {original_id}\r\n"
        "Subject: Hello\r\n\r\n"
        f"--{boundary}--\r\n"
    ).encode()
