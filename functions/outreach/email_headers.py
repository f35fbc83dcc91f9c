"""The header fields the worker adds to an email: List-Unsubscribe, and a follow-up's thread.

SES v2 SendEmail with Simple content takes custom headers (``Headers``, at most 15, each value at most
870 printable ASCII characters: https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_MessageHeader.html).
It refuses as custom headers only those SES sets itself (BCC, CC, Content-Disposition, Content-Type,
Date, From, Message-ID, MIME-Version, Reply-To, Return-Path, Subject, To:
https://docs.aws.amazon.com/ses/latest/dg/header-fields.html), so In-Reply-To and References go in
``Headers`` and the message stays Simple content; no Raw MIME is built.

- ``List-Unsubscribe`` (RFC 2369): the target, and for an https one ``List-Unsubscribe-Post:
  List-Unsubscribe=One-Click`` (RFC 8058 §3.1); a ``mailto:`` of the reply domain's unsubscribe mailbox
  goes after the https URI, which stays first (and is left out if the two would pass 870 characters).
- A threaded follow-up (RFC 5322 §3.6.4): ``In-Reply-To`` the Message-ID of the campaign's first email
  to the recipient, ``References`` the Message-IDs of every earlier step, in order
  (``ses_message_ids.message_id_header``). A value over 870 characters loses the middle ids first: the
  first (the thread's root) and the latest stay, as RFC 5322 §3.6.4 keeps the parent's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from outreach.email_task import EmailMessage
from outreach.observability import logger
from outreach.ses_message_ids import message_id_header
from outreach.task_model import Task

if TYPE_CHECKING:
    from mypy_boto3_sesv2.type_defs import MessageHeaderTypeDef

MAX_HEADER_VALUE_CHARS = 870


def unsubscribe_headers(message: EmailMessage) -> list[MessageHeaderTypeDef]:
    """List-Unsubscribe (RFC 2369) and, for an https target, List-Unsubscribe-Post one-click (RFC 8058),
    with the reply domain's unsubscribe ``mailto:`` after the https URI when the message has one."""
    if not message.unsubscribe:
        return []
    targets = f"<{message.unsubscribe}>"
    both = f"{targets}, <{message.unsubscribe_mailto}>"
    if message.unsubscribe_mailto and len(both) <= MAX_HEADER_VALUE_CHARS:
        # Left out when the two do not fit SES's header value: the one-click URI is the one that counts.
        targets = both
    headers: list[MessageHeaderTypeDef] = [{"Name": "List-Unsubscribe", "Value": targets}]
    if message.unsubscribe.startswith("https:"):
        headers.append({"Name": "List-Unsubscribe-Post", "Value": "List-Unsubscribe=One-Click"})
    return headers


def references_value(message_ids: Sequence[str]) -> str:
    """The References value of ``message_ids`` (oldest first), at most ``MAX_HEADER_VALUE_CHARS``: the
    ids after the first are dropped, oldest first, until it fits (the first and the last stay)."""
    kept = list(message_ids)
    while len(kept) > 2 and len(" ".join(kept)) > MAX_HEADER_VALUE_CHARS:
        del kept[1]
    return " ".join(kept)


def thread_headers(earlier_ses_ids: Sequence[str | None], region: str) -> list[MessageHeaderTypeDef]:
    """In-Reply-To and References of a threaded follow-up whose earlier steps SES sent in ``region`` as
    ``earlier_ses_ids`` (step 1 first). A step without an id is left out; without step 1's id there is
    no In-Reply-To, without any id no header at all (the email goes out unthreaded)."""
    if not earlier_ses_ids:
        return []
    ids = [message_id_header(ses_id, region) if ses_id else None for ses_id in earlier_ses_ids]
    known = [message_id for message_id in ids if message_id is not None]
    headers: list[MessageHeaderTypeDef] = []
    if ids[0] is not None:
        headers.append({"Name": "In-Reply-To", "Value": ids[0]})
    if known:
        headers.append({"Name": "References", "Value": references_value(known)})
    return headers


def thread_of(task: Task, earlier: Sequence[Task], region: str) -> list[MessageHeaderTypeDef]:
    """The thread headers of ``task`` given its earlier steps' tasks (step 1 first), sent by SES in
    ``region``; none for an unthreaded email. An id SES could not have given (a row changed by hand)
    leaves the email unthreaded, with a warning: a thread is no reason to lose the email."""
    if task.email is None or not task.email.threaded or not earlier:
        return []
    ids = [previous.email.ses_message_id if previous.email else None for previous in earlier]
    if None in ids:
        logger.warning("an earlier step has no SES message id: left out of the thread")
    try:
        return thread_headers(ids, region)
    except ValueError as exc:  # outcome: the email goes out unthreaded, logged with the reason
        logger.warning("an earlier SES message id is unusable: sent unthreaded", extra={"reason": str(exc)})
        return []
