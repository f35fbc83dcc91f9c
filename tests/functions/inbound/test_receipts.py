"""Rules of an inbound message's receipt: one per content whatever the trace fields, moved forward only,
one holder of its forward at a time, and a forward whose holder died is never sent again."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from outreach import clock, contacts
from outreach.inbound import receipts
from outreach.inbound.notification import ReceivedMessage
from outreach.inbound.receipts import Outcome, ReceiptState
from tests.functions.contacts.ledger_support import record
from tests.functions.inbound.mail_support import mail
from tests.support.aws import Resources

RAW = mail()
NOW = datetime(2027, 3, 2, 9, 30, tzinfo=UTC).timestamp()


def _received(ses_id: str = "m1") -> ReceivedMessage:
    return ReceivedMessage(
        ses_message_id=ses_id,
        received_at=datetime(2027, 3, 2, 9, 0, tzinfo=UTC),
        recipients=("x@reply.example.com",),
        spam_verdict="PASS",
        virus_verdict="PASS",
        bucket="b",
        object_key=f"inbound/{ses_id}",
    )


@pytest.mark.parametrize(
    "trace",
    [
        b"Received: from mx1.example.net by inbound-smtp.eu-west-1.amazonaws.com\r\n",
        b"Return-Path: <a@example.org>\r\nReceived: from a\r\n\tby b; Tue, 2 Mar 2027\r\n",
        b"X-SES-Spam-Verdict: PASS\r\nX-SES-Virus-Verdict: PASS\r\nAuthentication-Results: amazonses.com;\r\n"
        b" spf=pass\r\nReceived-SPF: pass\r\nX-SES-RECEIPT: AEFBQUFB\r\n",
    ],
)
def test_a_second_delivery_with_its_own_trace_fields_is_the_same_content(trace: bytes) -> None:
    assert receipts.content_digest(trace + RAW) == receipts.content_digest(RAW)


@pytest.mark.parametrize(
    "other",
    [
        mail("Thanks, Wednesday works for me.\n"),
        mail(headers=[("Message-ID", "<reply-2@mail.example.com>")]),
        # A trace field below the sender's own is part of the content.
        RAW.replace(b"MIME-Version", b"Received: late\r\nMIME-Version", 1),
    ],
)
def test_different_content_is_a_different_receipt(other: bytes) -> None:
    assert receipts.content_digest(other) != receipts.content_digest(RAW)


def _outcome(forward: str = "reply") -> Outcome:
    return Outcome(
        "HUMAN_REPLY", "no automatic marker", "reply-token", "email#spring#t", "spring", 1, forward
    )


def test_a_receipt_is_opened_once_and_counts_its_copies(resources: Resources) -> None:
    digest = receipts.content_digest(RAW)
    first = receipts.open_receipt(digest, _received("m1"))
    again = receipts.open_receipt(digest, _received("m1"))
    copy = receipts.open_receipt(digest, _received("m2"))
    assert first.state is again.state is copy.state is ReceiptState.RECEIVED
    stored = receipts.read_receipt(first.key)
    assert stored is not None and stored.key == f"inbound#{digest}"
    item = record(first.key)
    assert item is not None
    assert item["ses_message_ids"] == {"m1", "m2"}
    assert (item["kind"], item["object_key"], item["received_at"]) == (
        "inbound",
        "inbound/m1",
        "2027-03-02T09:00:00Z",
    )
    # No reader of the ledger's stops takes it for a contact.
    assert "state" not in item and "state_rank" not in item


def test_a_receipt_keeps_at_most_its_bound_of_copies(resources: Resources) -> None:
    digest = receipts.content_digest(RAW)
    for index in range(receipts.MAX_COPIES + 5):
        found = receipts.open_receipt(digest, _received(f"m{index}"))
        assert found.state is ReceiptState.RECEIVED
    item = record(f"inbound#{digest}")
    assert item is not None and len(item["ses_message_ids"]) == receipts.MAX_COPIES


def test_acting_is_recorded_once_and_a_receipt_with_nothing_to_forward_is_finished(
    resources: Resources,
) -> None:
    receipt = receipts.open_receipt(receipts.content_digest(RAW), _received())
    acted = receipts.record_acted(receipt, _outcome(forward=""))
    assert (acted.state, acted.finished) == (ReceiptState.ACTED, True)
    # A second run of the same record finds it acted: its outcome is not written again.
    later = receipts.record_acted(receipt, _outcome(forward="reply"))
    assert (later.state, later.forward) == (ReceiptState.ACTED, "")


def test_one_holder_forwards_and_nobody_after_it(
    resources: Resources, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(clock, "now", lambda: NOW)
    receipt = receipts.record_acted(
        receipts.open_receipt(receipts.content_digest(RAW), _received()), _outcome()
    )
    assert (receipt.state, receipt.finished) == (ReceiptState.ACTED, False)
    assert receipts.claim_forward(receipt, owner="one", lease_expires_at=int(NOW) + 60)
    assert not receipts.claim_forward(receipt, owner="two", lease_expires_at=int(NOW) + 60)
    # Only the holder settles it, and only once.
    assert not receipts.record_forwarded(receipt, owner="two", forward_message_id="f2", as_notice=False)
    assert receipts.record_forwarded(receipt, owner="one", forward_message_id="f1", as_notice=False)
    assert not receipts.record_forward_unknown(receipt, owner="one", why="late")
    settled = receipts.read_receipt(receipt.key)
    assert settled is not None and (settled.state, settled.finished) == (ReceiptState.FORWARDED, True)


def test_a_released_forward_may_be_claimed_again(
    resources: Resources, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(clock, "now", lambda: NOW)
    receipt = receipts.record_acted(
        receipts.open_receipt(receipts.content_digest(RAW), _received()), _outcome()
    )
    assert receipts.claim_forward(receipt, owner="one", lease_expires_at=int(NOW) + 60)
    assert receipts.release_forward(receipt, owner="one", why="TooManyRequestsException")
    assert receipts.claim_forward(receipt, owner="two", lease_expires_at=int(NOW) + 60)


def test_a_forward_whose_holder_died_is_unknown_once_its_lease_ran_out_and_never_claimed_again(
    resources: Resources, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [NOW]
    monkeypatch.setattr(clock, "now", lambda: now[0])
    receipt = receipts.record_acted(
        receipts.open_receipt(receipts.content_digest(RAW), _received()), _outcome()
    )
    assert receipts.claim_forward(receipt, owner="dead", lease_expires_at=int(NOW) + 60)
    held = receipts.read_receipt(receipt.key)
    assert held is not None and held.lease_live(now[0])
    assert not receipts.record_forward_unknown(held, owner=None, why="holder gone")
    now[0] = NOW + 61
    assert receipts.record_forward_unknown(held, owner=None, why="holder gone")
    assert not receipts.claim_forward(held, owner="next", lease_expires_at=int(now[0]) + 60)
    settled = receipts.read_receipt(receipt.key)
    assert settled is not None and (settled.state, settled.finished) == (ReceiptState.FORWARD_UNKNOWN, True)


def test_a_receipt_is_not_a_contact(resources: Resources) -> None:
    receipt = receipts.open_receipt(receipts.content_digest(RAW), _received())
    assert contacts.stops_of(["grace.hopper@example.com"]) == {}
    with pytest.raises(Exception, match="contact_key"):
        contacts.kind_of_key(receipt.key)
