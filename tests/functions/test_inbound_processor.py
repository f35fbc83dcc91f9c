"""Rules of the inbound processor for replies, end to end on moto: a message SES stored and notified is
classified, acted on and forwarded exactly once, whatever arrives twice or fails half-way.

A reply stops its campaign's follow-ups (and other campaigns' by their rules) and reaches the owner
byte-identical in body and attachments; a reply without its token matches by In-Reply-To; a forward
SES refused is retried, one whose outcome is unknown is never sent again. The other kinds of mail are
in ``test_inbound_processor_kinds.py``.
"""

from __future__ import annotations

import json
from email import message_from_bytes
from email.header import decode_header, make_header
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError, ReadTimeoutError

from outreach import clients, contacts, task_store
from outreach.inbound import receipts
from outreach.sequence_rules import SequenceRules
from outreach.task_model import Status
from tests.functions import feedback_support
from tests.functions.feedback_support import mark_sent, message_id_of, schedule_exists
from tests.functions.inbound import inbound_support
from tests.functions.inbound.inbound_support import (
    BUCKET,
    FORWARD_FROM,
    OWNER,
    RECEIVING_REGION,
    REPLY_DOMAIN,
    UNMATCHED_FORWARD_TO,
    Inbound,
    body_of,
    campaign,
    deliver,
    forwards,
    message_id_header,
    process,
)
from tests.functions.inbound.processor_support import (
    FailingSes,
    receipt_items,
    reply,
    status_of,
    with_attachments,
)
from tests.support.aws import REGION

feedback = feedback_support.feedback  # fixtures, found by name
inbound = inbound_support.inbound

A, B = "ada@example.org", "bob@example.org"


# ---- replies -------------------------------------------------------------------------------------


def test_a_reply_by_its_token_stops_every_follow_up_of_its_campaign_and_reaches_the_owner(
    inbound: Inbound,
) -> None:
    emails = campaign(inbound, [A, B])
    mark_sent(emails[A][0])
    token = emails[A][0].message.reply_to
    assert process(deliver(reply(token), [token])) == []
    # The ledger: replied in this campaign; no stop (a reply is not an opt-out).
    engagement = contacts.engagement_of(A)
    assert engagement.replied_campaigns == frozenset({"spring"})
    assert contacts.stop_of(A) is None
    for email in emails[A][1:]:
        assert status_of(email) == (Status.CANCELLED, "replied: campaign spring step 1")
        assert not schedule_exists(inbound.feedback, email)
    assert all(status_of(email)[0] is Status.PENDING for email in emails[B])
    # One forward, to the owner, from the forwarder, answerable to the sender, saying what it answers.
    (sent,) = forwards()
    assert (sent.sender, sent.destinations) == (FORWARD_FROM, (OWNER,))
    message = sent.message
    assert message["From"] == FORWARD_FROM
    assert message["To"] == OWNER
    assert message["Reply-To"] == f"Ada Lovelace <{A}>"
    assert message["Subject"] == "Re: Quick question about your website"
    assert (message["X-Outreach-Inbound"], message["X-Outreach-Campaign"], message["X-Outreach-Step"]) == (
        "reply",
        "spring",
        "1",
    )
    for dropped in ("Message-ID", "Date", "Return-Path", "DKIM-Signature", "Sender"):
        assert message[dropped] is None
    # Not a campaign send: no configuration set, so no SES events come back for it.
    from embedded_aws.ses_v2 import sent_emails

    (recorded,) = [email for email in sent_emails(REGION) if email.message_id == sent.message_id]
    assert recorded.configuration_set is None
    # The stored message is kept.
    objects = boto3.client("s3", region_name=RECEIVING_REGION).list_objects_v2(Bucket=BUCKET)
    assert objects["KeyCount"] == 1


def test_the_same_message_delivered_twice_forwards_once_and_cancels_once(inbound: Inbound) -> None:
    emails = campaign(inbound, [A])
    mark_sent(emails[A][0])
    token = emails[A][0].message.reply_to
    raw = reply(token)
    first = deliver(raw, [token])
    # The same notification redelivered by SQS, and a second SMTP delivery SES stored as another object
    # (its own trace fields prepended).
    second_copy = deliver(
        b"Received: from mx2.example.net by inbound-smtp; Tue, 2 Mar 2027\r\n" + raw, [token]
    )
    assert process(first, first) == []
    assert process(second_copy) == []
    assert len(forwards()) == 1
    counts = task_store.job_counts("spring")
    assert (counts["Cancelled"], counts["Pending"], counts["Finished"]) == (2, 0, 1)
    (receipt,) = receipt_items()
    assert receipt["receipt_state"] == "forwarded"
    assert len(receipt["ses_message_ids"]) == 2
    assert A not in json.dumps(receipt, default=str)


def test_a_forward_whose_ses_call_fails_raises_and_its_retry_forwards_once(
    inbound: Inbound, monkeypatch: pytest.MonkeyPatch
) -> None:
    emails = campaign(inbound, [A])
    mark_sent(emails[A][0])
    token = emails[A][0].message.reply_to
    body = deliver(reply(token), [token])
    throttled = ClientError(
        {"Error": {"Code": "TooManyRequestsException", "Message": "slow down"}}, "SendEmail"
    )
    ses = FailingSes(throttled)
    monkeypatch.setattr(clients, "sesv2", lambda: ses)
    assert process(body) == [0]
    assert forwards() == []
    (receipt,) = receipt_items()
    assert receipt["receipt_state"] == "acted"
    # The retry forwards once and acts on nothing again.
    assert process(body) == []
    assert process(body) == []
    assert len(forwards()) == 1
    assert ses.calls == 2
    assert task_store.job_counts("spring")["Cancelled"] == 2


def test_a_forward_whose_outcome_is_unknown_is_never_sent_again(
    inbound: Inbound, monkeypatch: pytest.MonkeyPatch
) -> None:
    emails = campaign(inbound, [A])
    token = emails[A][0].message.reply_to
    body = deliver(reply(token), [token])
    ses = FailingSes(ReadTimeoutError(endpoint_url=f"https://email.{REGION}.amazonaws.com"))
    monkeypatch.setattr(clients, "sesv2", lambda: ses)
    assert process(body) == []
    assert process(body) == []
    assert ses.calls == 1
    (receipt,) = receipt_items()
    assert receipt["receipt_state"] == "forward_unknown"
    # The reply itself was acted on.
    assert contacts.engagement_of(A).replied_in("spring")


def test_a_record_that_failed_after_acting_is_completed_by_its_retry_once(
    inbound: Inbound, monkeypatch: pytest.MonkeyPatch
) -> None:
    emails = campaign(inbound, [A])
    mark_sent(emails[A][0])
    token = emails[A][0].message.reply_to
    body = deliver(reply(token), [token])
    real = receipts.record_acted
    calls: list[int] = []

    def crash_once(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("the invocation died after acting")
        return real(*args, **kwargs)

    monkeypatch.setattr(receipts, "record_acted", crash_once)
    assert process(body) == [0]
    assert process(body) == []
    assert len(forwards()) == 1
    assert task_store.job_counts("spring")["Cancelled"] == 2


def test_a_forward_another_invocation_holds_is_retried_and_settled_unknown_once_its_lease_ran_out(
    inbound: Inbound, monkeypatch: pytest.MonkeyPatch
) -> None:
    emails = campaign(inbound, [A])
    token = emails[A][0].message.reply_to
    body = deliver(reply(token), [token])
    throttled = ClientError({"Error": {"Code": "Throttling", "Message": "slow down"}}, "SendEmail")
    monkeypatch.setattr(clients, "sesv2", lambda: FailingSes(throttled))
    assert process(body) == [0]
    (item,) = receipt_items()
    receipt = receipts.Receipt.from_item(item)
    now = inbound.clock[0]
    assert receipts.claim_forward(receipt, owner="another-invocation", lease_expires_at=int(now) + 300)
    monkeypatch.setattr(clients, "sesv2", lambda: boto3.client("sesv2", region_name=REGION))
    assert process(body) == [0]
    inbound.clock[0] = now + 301
    assert process(body) == []
    assert process(body) == []
    assert forwards() == []
    (item,) = receipt_items()
    assert item["receipt_state"] == "forward_unknown"


def test_a_message_ses_refuses_to_send_is_forwarded_as_a_notice(
    inbound: Inbound, monkeypatch: pytest.MonkeyPatch
) -> None:
    emails = campaign(inbound, [A])
    token = emails[A][0].message.reply_to
    refused = ClientError({"Error": {"Code": "MessageRejected", "Message": "attachment type"}}, "SendEmail")
    ses = FailingSes(refused)
    monkeypatch.setattr(clients, "sesv2", lambda: ses)
    assert process(deliver(with_attachments(token), [token])) == []
    (sent,) = forwards()
    assert b"SES refused to send it" in sent.message.get_payload(decode=True)
    assert (sent.destinations, sent.message["X-Outreach-Inbound"]) == ((OWNER,), "reply")
    assert ses.calls == 2


def test_a_reply_without_its_token_matches_by_in_reply_to(inbound: Inbound) -> None:
    emails = campaign(inbound, [A], tokens=False)
    sent = [mark_sent(email) for email in emails[A][:2]]
    assert sent[1].email is not None
    second = message_id_header(str(sent[1].email.ses_message_id))
    first = message_id_header(message_id_of(emails[A][0].task_id))
    raw = reply(
        f"sales@{REPLY_DOMAIN}",
        extra=(("In-Reply-To", second), ("References", f"{first} {second}")),
    )
    assert process(deliver(raw, [f"sales@{REPLY_DOMAIN}"])) == []
    assert status_of(emails[A][2]) == (Status.CANCELLED, "replied: campaign spring step 2")
    (forwarded,) = forwards()
    assert forwarded.message["X-Outreach-Step"] == "2"


def test_a_reply_quoting_ids_of_someone_elses_email_matches_nothing(inbound: Inbound) -> None:
    emails = campaign(inbound, [A, B], tokens=False)
    sent = mark_sent(emails[A][0])
    assert sent.email is not None
    raw = reply(
        f"sales@{REPLY_DOMAIN}",
        sender=B,
        extra=(("In-Reply-To", message_id_header(str(sent.email.ses_message_id))),),
    )
    assert process(deliver(raw, [f"sales@{REPLY_DOMAIN}"])) == []
    assert all(status_of(email)[0] is Status.PENDING for email in [*emails[A][1:], *emails[B]])
    (forwarded,) = forwards()
    assert (forwarded.destinations, forwarded.message["X-Outreach-Inbound"]) == (
        (UNMATCHED_FORWARD_TO,),
        "unmatched",
    )


@pytest.mark.parametrize(
    ("other_rules", "stopped"),
    [
        (SequenceRules(owner=OWNER), True),
        (SequenceRules(owner=OWNER, reply_stops_other_campaigns=False), False),
        (SequenceRules(owner=OWNER, on_reply="continue"), False),
    ],
)
def test_a_reply_stops_another_campaign_only_when_that_campaigns_rules_say_so(
    inbound: Inbound, other_rules: SequenceRules, stopped: bool
) -> None:
    spring = campaign(inbound, [A])
    autumn = campaign(inbound, [A], name="autumn", rules=other_rules)
    token = spring[A][0].message.reply_to
    assert process(deliver(reply(token), [token])) == []
    for email in autumn[A]:
        status, reason = status_of(email)
        if stopped:
            assert (status, reason) == (Status.CANCELLED, "replied: campaign spring step 1")
        else:
            assert status is Status.PENDING


def test_a_campaign_that_continues_on_reply_keeps_its_follow_ups_and_still_forwards(inbound: Inbound) -> None:
    emails = campaign(inbound, [A], rules=SequenceRules(owner=OWNER, on_reply="continue"))
    token = emails[A][0].message.reply_to
    assert process(deliver(reply(token), [token])) == []
    assert all(status_of(email)[0] is Status.PENDING for email in emails[A])
    assert contacts.engagement_of(A).replied_in("spring")
    assert [sent.destinations for sent in forwards()] == [(OWNER,)]


def test_a_task_written_without_rules_forwards_to_the_unmatched_mailbox_and_stops(inbound: Inbound) -> None:
    emails = campaign(inbound, [A], rules=None)
    token = emails[A][0].message.reply_to
    assert process(deliver(reply(token), [token])) == []
    assert status_of(emails[A][1])[0] is Status.CANCELLED
    assert [sent.destinations for sent in forwards()] == [(UNMATCHED_FORWARD_TO,)]


def test_a_forged_token_matches_nothing_and_is_forwarded_unmatched(inbound: Inbound) -> None:
    emails = campaign(inbound, [A])
    token = emails[A][0].message.reply_to
    local, _, domain = token.partition("@")
    forged = f"{local[:-1]}{'a' if local[-1] != 'a' else 'b'}@{domain}"
    assert process(deliver(reply(forged), [forged])) == []
    assert all(status_of(email)[0] is Status.PENDING for email in emails[A])
    assert not contacts.engagement_of(A).replied_campaigns
    (forwarded,) = forwards()
    assert forwarded.message["X-Outreach-Inbound"] == "unmatched"


# ---- forwarding unchanged ------------------------------------------------------------------------


def test_the_forward_carries_the_body_and_every_attachment_byte_identical(inbound: Inbound) -> None:
    emails = campaign(inbound, [A])
    token = emails[A][0].message.reply_to
    raw = with_attachments(token)
    assert process(deliver(raw, [token])) == []
    (sent,) = forwards()
    assert body_of(sent.raw) == body_of(raw)
    original, forwarded = message_from_bytes(raw), sent.message
    assert forwarded.get_content_type() == "multipart/mixed"
    assert [part.get_payload(decode=True) for part in forwarded.walk() if part.get_filename()] == [
        part.get_payload(decode=True) for part in original.walk() if part.get_filename()
    ]
    subject = str(forwarded["Subject"])
    assert subject.isascii()
    assert str(make_header(decode_header(subject))) == "Re: Angebot, Grüße aus Köln"
    assert forwarded["DKIM-Signature"] is None
    assert forwarded["Message-ID"] is None


def test_a_message_ses_found_a_virus_in_is_forwarded_as_a_notice_only(inbound: Inbound) -> None:
    emails = campaign(inbound, [A])
    token = emails[A][0].message.reply_to
    raw = with_attachments(token)
    assert process(deliver(raw, [token], virus="FAIL")) == []
    (sent,) = forwards()
    text = sent.message.get_payload(decode=True)
    assert b"SES found a virus in it" in text
    assert b"angebot.pdf" not in sent.raw
    assert sent.message["X-Outreach-Inbound"] == "reply"
    # The reply is still a reply: its follow-ups stop.
    assert status_of(emails[A][1])[0] is Status.CANCELLED
