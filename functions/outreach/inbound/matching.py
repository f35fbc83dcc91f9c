"""Which email task an inbound message answers: its reply address, else the ids it quotes, else none.

In order, the first that finds an email task decides:

1. ``reply-token``: a recipient that is a reply address of the reply domain
   (``reply+<handle>.<mac>@``, ``reply_token.task_of_reply_address``): the envelope recipients SES
   delivered to first (they hold the address even when a client put it only in ``Bcc``), then
   ``To``/``Cc``/``Delivered-To``. A reply address whose MAC does not verify is counted (``refused``)
   and matches nothing: it is a forgery or a mangled token, and the next rule may still match.
2. ``in-reply-to``: the SES ids of the msg-ids in ``In-Reply-To``, then ``References`` from the last
   (the parent) back (``ses_message_ids.ses_ids_in``), against the ``ses_message_id`` of the email
   tasks to the message's ``From`` address (``task_store.reads.email_tasks_to``, every campaign): the
   path for a client that dropped the token, or a person who answered from the original thread.
3. ``report``: for a delivery report (``inbound.dsn``), the same with the ``Message-ID`` of the
   original message the report includes, against the tasks to the report's recipients (a DSN comes
   from a mail system, not from the recipient).

A message that matches nothing is ``none``: the processor forwards it marked ``unmatched``. An id
match trusts what the message says only as far as this: the task must be to the address that sent
the message (or that the report names), and only a sent task (one with an SES message id) matches.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from outreach import reply_token, ses_message_ids
from outreach.contacts.keys import normalise
from outreach.errors import InvalidTokenError, MalformedFieldError
from outreach.inbound.dsn import DeliveryReport
from outreach.inbound.message import InboundMessage, raw_values
from outreach.task_model import Task
from outreach.task_store.reads import email_tasks_to

# A message names at most this many addresses to look tasks up for (each is one Query).
MAX_ADDRESS_LOOKUPS = 5
# And at most this many candidate reply addresses (each that looks like one costs a Query and KMS).
MAX_TOKEN_LOOKUPS = 10


@dataclass(frozen=True)
class Match:
    """The task a message answers (``None``: unmatched), how it was found, and how many reply addresses
    it carried that did not verify."""

    task: Task | None
    how: str
    refused_tokens: int = 0

    @property
    def matched(self) -> bool:
        return self.task is not None


def _email_task(task: Task | None) -> Task | None:
    return task if task is not None and task.email is not None else None


def _by_token(candidates: Iterable[str], reply_domain: str, key_id: str) -> tuple[Task | None, int]:
    refused = 0
    looked = 0
    for address in dict.fromkeys(candidates):
        if looked >= MAX_TOKEN_LOOKUPS:
            break
        try:
            task = reply_token.task_of_reply_address(address, reply_domain, key_id=key_id)
        except InvalidTokenError:  # outcome: counted; the next address or rule may still match
            refused += 1
            looked += 1
            continue
        if task is None:
            continue
        looked += 1
        found = _email_task(task)
        if found is not None:
            return found, refused
    return None, refused


def _quoted_ids(msg: InboundMessage) -> list[str]:
    """The SES ids ``msg`` quotes, most specific first: In-Reply-To, then References from the last."""
    in_reply_to = [
        found
        for value in raw_values(msg.source, "in-reply-to")[:1]
        for found in ses_message_ids.ses_ids_in(value)
    ]
    references = [
        found
        for value in raw_values(msg.source, "references")[:1]
        for found in ses_message_ids.ses_ids_in(value)
    ]
    return list(dict.fromkeys([*in_reply_to, *reversed(references)]))


def _by_ids(addresses: Iterable[str], ids: list[str]) -> Task | None:
    """The task to one of ``addresses`` whose SES message id is the first of ``ids`` that any has."""
    if not ids:
        return None
    sent: dict[str, Task] = {}
    for address in list(dict.fromkeys(addresses))[:MAX_ADDRESS_LOOKUPS]:
        try:
            normalise(address)
        except MalformedFieldError:  # outcome: an address no task can be to is not looked up
            continue
        for task in email_tasks_to(address):
            if task.email is not None and task.email.ses_message_id:
                sent.setdefault(task.email.ses_message_id, task)
    return next((sent[found] for found in ids if found in sent), None)


def _report_addresses(report: DeliveryReport) -> list[str]:
    found: list[str] = []
    for recipient in report.recipients:
        found.extend(a for a in (recipient.original_recipient, recipient.final_recipient) if a)
    return found


def match(
    msg: InboundMessage,
    envelope_recipients: Iterable[str],
    *,
    reply_domain: str,
    key_id: str,
    report: DeliveryReport | None = None,
) -> Match:
    """The email task ``msg`` answers, by the module's rules."""
    task, refused = _by_token([*envelope_recipients, *msg.recipients], reply_domain, key_id)
    if task is not None:
        return Match(task, "reply-token", refused)
    if msg.from_address is not None:
        task = _by_ids([msg.from_address], _quoted_ids(msg))
        if task is not None:
            return Match(task, "in-reply-to", refused)
    if report is not None and report.original_message_id is not None:
        ids = ses_message_ids.ses_ids_in(f"<{report.original_message_id}>")
        task = _by_ids(_report_addresses(report), ids)
        if task is not None:
            return Match(task, "report", refused)
    return Match(None, "none", refused)
