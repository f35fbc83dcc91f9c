"""The objects of an SES event record the embedded SES publishes: the ``mail`` object, a bounce and a
delivery, with the fields and shapes of
https://docs.aws.amazon.com/ses/latest/dg/event-publishing-retrieving-sns-contents.html and its examples
(event-publishing-retrieving-sns-examples.html)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from email.utils import getaddresses, parseaddr
from typing import Any

MTA = "a1-1.smtp-out.embedded-aws.local"
LOOPBACK = "127.0.0.1"


def stamp(moment: float) -> str:
    """A timestamp inside an event record: ISO 8601 with milliseconds (sns-contents)."""
    return datetime.fromtimestamp(moment, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


# -- the mail object -----------------------------------------------------------------------------------
def _caller_identity(response: Any) -> str:
    """The IAM user owning the request's access key, else the key id (``ses:caller-identity``)."""
    authorization = str(response.headers.get("Authorization") or "")
    key = authorization.partition("Credential=")[2].split("/", 1)[0]
    if not key:
        return "unknown"
    from moto.iam.models import iam_backends

    backend = iam_backends[response.sesv2_backend.account_id]["global"]
    for user in list(backend.users.values()):
        if any(access.access_key_id == key for access in user.access_keys):
            return str(user.name)
    return key


def _identity_arn(backend: Any, sender: str) -> str:
    address = parseaddr(sender)[1]
    domain = address.rpartition("@")[2]
    identities = backend.core_backend.email_identities
    identity = address if address in identities or domain not in identities else domain
    return f"arn:aws:ses:{backend.region_name}:{backend.account_id}:identity/{identity}"


def mail_object(response: Any, request: dict[str, Any], message_id: str, sent_at: float) -> dict[str, Any]:
    backend = response.sesv2_backend
    destination = request.get("Destination", {})
    to = list(destination.get("ToAddresses", []))
    everyone = to + list(destination.get("CcAddresses", [])) + list(destination.get("BccAddresses", []))
    simple = request.get("Content", {}).get("Simple", {})
    subject = str(simple.get("Subject", {}).get("Data", ""))
    sender = str(request.get("FromEmailAddress", ""))
    headers = [{"name": "From", "value": sender}, {"name": "To", "value": ", ".join(to)}]
    headers += [{"name": "Subject", "value": subject}, {"name": "MIME-Version", "value": "1.0"}]
    headers += [{"name": str(h["Name"]), "value": str(h["Value"])} for h in simple.get("Headers", [])]
    source_ip = getattr(response.normalized_request, "remote_addr", None) or LOOPBACK
    tags: dict[str, list[str]] = {str(t["Name"]): [str(t["Value"])] for t in request.get("EmailTags", [])}
    tags.update(
        {
            "ses:configuration-set": [str(request["ConfigurationSetName"])],
            "ses:source-ip": [str(source_ip)],
            "ses:from-domain": [parseaddr(sender)[1].rpartition("@")[2]],
            "ses:caller-identity": [_caller_identity(response)],
        }
    )
    return {
        "timestamp": stamp(sent_at),
        "source": sender,
        "sourceArn": _identity_arn(backend, sender),
        "sendingAccountId": backend.account_id,
        "messageId": message_id,
        "destination": [address for _, address in getaddresses(everyone)],
        "headersTruncated": False,
        "headers": headers,
        "commonHeaders": {"from": [sender], "to": to, "messageId": message_id, "subject": subject},
        "tags": tags,
    }


def bounce_object(address: str, kind: str, sub_type: str, at: float) -> dict[str, Any]:
    status, code = {
        "Permanent": ("5.1.1", "smtp; 550 5.1.1 user unknown"),
        "Transient": ("4.2.2", "smtp; 452 4.2.2 mailbox full"),
    }[kind]
    if sub_type == "OnAccountSuppressionList":
        code = "Amazon SES did not send the message to this address: it is on the account's suppression list."
    return {
        "bounceType": kind,
        "bounceSubType": sub_type,
        "bouncedRecipients": [
            {"emailAddress": address, "action": "failed", "status": status, "diagnosticCode": code}
        ],
        "timestamp": stamp(at),
        "feedbackId": f"{uuid.uuid4()}-000000",
        "reportingMTA": f"dsn; {MTA}",
    }


def delivery_object(address: str, sent_at: float, at: float) -> dict[str, Any]:
    return {
        "timestamp": stamp(at),
        "processingTimeMillis": round((at - sent_at) * 1000),
        "recipients": [address],
        "smtpResponse": "250 2.6.0 Message received",
        "reportingMTA": MTA,
    }
