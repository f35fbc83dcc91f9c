"""Rules of the per-step counts the inbound processor keeps for ``campaign status``, end to end on moto:
a human reply, an automatic reply and a forward SES accepted are each marked on the email task they
answer and counted for its step once, however often the message arrives or a second reply comes; an
unmatched message has no task and moves no step's count (it is the metric ``InboundUnmatched``).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest

from outreach import config, task_store
from outreach.inbound import actions
from outreach.task_store import EmailEvent
from tests.functions import feedback_support
from tests.functions.feedback_support import mark_sent, stored
from tests.functions.inbound import inbound_support
from tests.functions.inbound.inbound_support import (
    REPLY_DOMAIN,
    Inbound,
    campaign,
    deliver,
    forwards,
    process,
)
from tests.functions.inbound.mail_support import mail
from tests.functions.inbound.processor_support import out_of_office, reply
from tests.support.aws import REGION

feedback = feedback_support.feedback  # fixtures, found by name
inbound = inbound_support.inbound

A, B = "ada@example.org", "bob@example.org"
AT = datetime(2027, 3, 2, 10, 0, tzinfo=UTC)
ZERO = dict.fromkeys((kind.value for kind in EmailEvent), 0)


def _counts(name: str = "spring") -> dict[int, dict[str, int]]:
    return task_store.email_event_counts(name)


def _row(task_id: str) -> dict[str, Any]:
    item = boto3.client("dynamodb", region_name=REGION).get_item(
        TableName=config.tasks_table(), Key={"task_id": {"S": task_id}}, ConsistentRead=True
    )["Item"]
    return task_store.from_item(item)


def _metrics(out: str) -> dict[str, float]:
    """The processor's published metrics (EMF lines on stdout), summed by name."""
    found: dict[str, float] = {}
    for line in out.splitlines():
        if '"_aws"' not in line:
            continue
        document = json.loads(line)
        for directive in document["_aws"]["CloudWatchMetrics"]:
            for metric in directive["Metrics"]:
                values = document[metric["Name"]]
                found[metric["Name"]] = found.get(metric["Name"], 0.0) + sum(
                    values if isinstance(values, list) else [values]
                )
    return found


def test_a_reply_is_counted_once_for_the_step_it_answers_however_often_it_arrives(inbound: Inbound) -> None:
    emails = campaign(inbound, [A, B])
    mark_sent(emails[A][0])
    mark_sent(emails[B][0])
    second = mark_sent(emails[B][1])
    token = emails[A][0].message.reply_to
    body = deliver(reply(token), [token])
    # The same notification twice, then a second, different reply to the same email.
    assert process(body, body) == []
    assert process(deliver(reply(token, body="And Wednesday works too.\n"), [token])) == []
    # Bob answers his second email.
    assert second.email is not None
    bob = emails[B][1].message.reply_to
    assert process(deliver(reply(bob, sender=B), [bob])) == []
    counts = _counts()
    assert counts[1]["replied"] == 1
    assert counts[2]["replied"] == 1
    assert _row(emails[A][0].task_id)["replied_at"] == "2027-03-02T09:30:00Z"
    assert "replied_at" not in _row(emails[A][1].task_id)
    # The mark leaves the status as it was.
    assert stored(emails[A][0].task_id).status.value == "Finished"


def test_an_out_of_office_is_counted_once_as_auto_replied_and_not_as_a_reply(inbound: Inbound) -> None:
    emails = campaign(inbound, [A])
    mark_sent(emails[A][0])
    token = emails[A][0].message.reply_to
    body = deliver(out_of_office(token, "I am out of the office until March 10, 2027.\n"), [token])
    assert process(body, body) == []
    assert process(body) == []
    assert _counts() == {1: {**ZERO, "auto_replied": 1}}
    assert "auto_replied_at" in _row(emails[A][0].task_id)


def test_an_unmatched_message_moves_no_steps_count_and_is_the_unmatched_metric(
    inbound: Inbound, capsys: pytest.CaptureFixture[str]
) -> None:
    emails = campaign(inbound, [A])
    mark_sent(emails[A][0])
    raw = mail("Do you sell gift cards?\n", headers=[("From", "Someone <someone@example.net>")])
    capsys.readouterr()
    assert process(deliver(raw, [f"info@{REPLY_DOMAIN}"])) == []
    (sent,) = forwards()
    assert sent.message["X-Outreach-Inbound"] == "unmatched"
    assert _counts() == {}
    published = _metrics(capsys.readouterr().out)
    assert published.get("InboundUnmatched") == 1.0
    assert "EmailEventsMarked" not in published


def test_a_reply_publishes_its_mark_once_and_a_duplicate_publishes_none(
    inbound: Inbound, capsys: pytest.CaptureFixture[str]
) -> None:
    emails = campaign(inbound, [A])
    mark_sent(emails[A][0])
    token = emails[A][0].message.reply_to
    body = deliver(reply(token), [token])
    capsys.readouterr()
    assert process(body) == []
    first = _metrics(capsys.readouterr().out)
    assert process(body) == []
    again = _metrics(capsys.readouterr().out)
    assert first.get("EmailEventsMarked", 0) >= 1
    assert "EmailEventsMarked" not in again and again.get("InboundDuplicates") == 1.0


def test_a_forward_ses_accepted_is_counted_once_on_the_step_it_answers(inbound: Inbound) -> None:
    emails = campaign(inbound, [A])
    mark_sent(emails[A][0])
    token = emails[A][0].message.reply_to
    body = deliver(reply(token), [token])
    assert process(body, body) == []
    assert len(forwards()) == 1
    assert _counts()[1]["forwarded"] == 1


def test_an_automatic_reply_that_is_not_out_of_office_is_counted_as_auto_replied(inbound: Inbound) -> None:
    emails = campaign(inbound, [A])
    mark_sent(emails[A][0])
    token = emails[A][0].message.reply_to
    raw = mail(
        "Thank you for your message. We have received it and will answer it shortly.\n",
        headers=[("From", f"<{A}>"), ("To", token), ("Auto-Submitted", "auto-replied")],
    )
    assert process(deliver(raw, [token])) == []
    assert _counts()[1]["auto_replied"] == 1


# ---- the actions themselves ----------------------------------------------------------------------


def test_a_forward_marks_its_task_once_and_a_message_without_a_task_marks_nothing(inbound: Inbound) -> None:
    emails = campaign(inbound, [A])
    task = mark_sent(emails[A][1])
    assert actions.on_forwarded(task, at=AT) == {"EmailEventsMarked": 1}
    assert actions.on_forwarded(task, at=AT.replace(hour=11)) == {"EmailEventsDuplicate": 1}
    assert actions.on_forwarded(None, at=AT) == {}
    assert _counts() == {2: {**ZERO, "forwarded": 1}}
    assert _row(task.task_id)["forwarded_at"] == "2027-03-02T10:00:00Z"


def test_an_automatic_reply_marks_its_task_once(inbound: Inbound) -> None:
    emails = campaign(inbound, [A])
    task = mark_sent(emails[A][0])
    assert actions.on_auto_reply(task, at=AT) == {"EmailEventsMarked": 1}
    assert actions.on_auto_reply(task, at=AT) == {"EmailEventsDuplicate": 1}
    assert _counts() == {1: {**ZERO, "auto_replied": 1}}
