"""Rules of the inbound processor near its invocation's end, on moto: a forward is claimed only with the
time to send it, and a record is started only with that much left; either way the record comes back
and its retry forwards the reply once (a claim left by an invocation Lambda stopped would be
``forward_unknown``: a reply nobody gets).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from outreach import contacts, inbound_processor, task_store
from outreach.inbound import actions
from tests.functions import feedback_support
from tests.functions.feedback_support import mark_sent, sqs_batch
from tests.functions.inbound import inbound_support
from tests.functions.inbound.inbound_support import Inbound, campaign, deliver, forwards, process
from tests.functions.inbound.processor_support import receipt_items, reply
from tests.support.lambda_context import FakeContext

feedback = feedback_support.feedback  # fixtures, found by name
inbound = inbound_support.inbound

A = "ada@example.org"
TIMEOUT = 60.0


def _invoke(body: str, context: FakeContext) -> list[int]:
    """One invocation of the batch ``[body]`` under ``context``; the positions of its item failures."""
    event = sqs_batch(body)
    response = dict(inbound_processor.lambda_handler(event, context))
    ids = [record["messageId"] for record in event["Records"]]
    return [ids.index(failure["itemIdentifier"]) for failure in response["batchItemFailures"]]


def _context(timeout: float = TIMEOUT) -> FakeContext:
    return FakeContext(aws_request_id=str(uuid.uuid4()), timeout_seconds=timeout)


def _reply_body(inbound: Inbound) -> str:
    emails = campaign(inbound, [A])
    mark_sent(emails[A][0])
    token = emails[A][0].message.reply_to
    return deliver(reply(token), [token])


def test_a_forward_is_claimed_only_with_the_time_to_send_it_and_the_retry_forwards_it_once(
    inbound: Inbound, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = _reply_body(inbound)
    context = _context()
    real = actions.on_reply

    def slow_reply(*args: Any, **kwargs: Any) -> Any:
        # Acting took all but a few seconds of the invocation.
        context.started = time.monotonic() - (TIMEOUT - inbound_processor.FORWARD_SECONDS_NEEDED + 5)
        return real(*args, **kwargs)

    monkeypatch.setattr(actions, "on_reply", slow_reply)
    assert _invoke(body, context) == [0]
    assert forwards() == []
    (receipt,) = receipt_items()
    assert receipt["receipt_state"] == "acted" and "lease_owner" not in receipt
    assert contacts.engagement_of(A).replied_in("spring")
    # The retry, in a fresh invocation, forwards it once and acts on nothing again.
    assert process(body) == []
    assert process(body) == []
    assert len(forwards()) == 1
    assert receipt_items()[0]["receipt_state"] == "forwarded"
    assert task_store.job_counts("spring")["Cancelled"] == 2


@pytest.mark.parametrize("left", [0.0, inbound_processor.FORWARD_SECONDS_NEEDED - 1.0])
def test_a_record_is_not_started_with_too_little_of_the_invocation_left(
    inbound: Inbound, left: float
) -> None:
    body = _reply_body(inbound)
    assert _invoke(body, _context(timeout=left)) == [0]
    assert receipt_items() == [] and forwards() == []
    assert not contacts.engagement_of(A).replied_in("spring")
    assert process(body) == []
    assert len(forwards()) == 1
