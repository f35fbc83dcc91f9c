"""Rules of the SES-events consumer: a hard bounce, a complaint or an unsubscribe stops the address in
every campaign; soft bounces stop it at the limit; duplicate and late events change nothing more; a
failed record is the only one reported, and its retry completes it."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from outreach import config, contacts, ses_event_consumer, ses_events, task_store
from outreach.email_task import PlannedEmail
from outreach.errors import ConfigurationError
from outreach.observability import logger
from outreach.personal_data import address_hash
from outreach.task_model import Status
from tests.functions import feedback_support
from tests.functions.feedback_support import (
    SOFT_BOUNCE_LIMIT,
    Feedback,
    body,
    campaign,
    mark_sent,
    schedule_exists,
    ses_event,
    sqs_batch,
    stored,
)
from tests.support.aws import REGION
from tests.support.email import FIRST_SEND
from tests.support.lambda_context import FakeContext

feedback = feedback_support.feedback  # the fixture, found by name

A, B, C = "ada@example.org", "bob@example.org", "cy@example.org"


def _consume(*bodies: str) -> tuple[dict[str, Any], list[str]]:
    """One invocation with a batch of ``bodies``; the response and the batch's message ids in order."""
    event = sqs_batch(*bodies)
    response = dict(ses_event_consumer.lambda_handler(event, FakeContext()))
    return response, [record["messageId"] for record in event["Records"]]


def _failures(response: dict[str, Any]) -> list[str]:
    return [failure["itemIdentifier"] for failure in response["batchItemFailures"]]


def _status(email: PlannedEmail) -> tuple[Status, str]:
    task = stored(email.task_id)
    return task.status, task.failure_reason or ""


def _record(address: str) -> dict[str, Any]:
    item = boto3.client("dynamodb", region_name=REGION).get_item(
        TableName=config.contacts_table(),
        Key={"contact_key": {"S": contacts.address_key(address)}},
        ConsistentRead=True,
    )
    return task_store.from_item(item.get("Item", {}))


def _counts(name: str = "spring") -> dict[int, dict[str, int]]:
    return task_store.email_event_counts(name)


@pytest.mark.parametrize(
    ("detail_type", "state", "mark"),
    [("Email Bounced", "bounced", "bounced_hard"), ("Email Complaint Received", "complained", "complained")],
)
def test_a_hard_bounce_or_a_complaint_stops_the_address_in_every_campaign_and_cancels_its_open_emails(
    feedback: Feedback, detail_type: str, state: str, mark: str
) -> None:
    spring = campaign(feedback, [A, B])
    autumn = campaign(feedback, [A], name="autumn")
    sent = mark_sent(spring[A][0])
    response, _ = _consume(body(ses_event(detail_type, sent)))
    assert _failures(response) == []
    stop = contacts.stop_of(A)
    assert stop is not None
    assert (stop.state.value, stop.source.value, stop.campaign_id) == (state, "ses", "spring")
    assert stop.since == "2027-03-02T08:31:00Z"
    # The sent step keeps its outcome; every open email to the address, in both campaigns, is cancelled.
    assert stored(spring[A][0].task_id).status is Status.FINISHED
    for email in [*spring[A][1:], *autumn[A]]:
        status, reason = _status(email)
        assert status is Status.CANCELLED
        assert reason.startswith(f"contact_stopped: {state} since 2027-03-02T08:31:00Z")
        assert not schedule_exists(feedback, email)
    # Nobody else is touched.
    assert contacts.stop_of(B) is None
    assert all(
        _status(email)[0] is Status.PENDING and schedule_exists(feedback, email) for email in spring[B]
    )
    assert _counts()[1][mark] == 1


def test_soft_bounces_are_counted_per_message_and_stop_the_address_at_the_limit(feedback: Feedback) -> None:
    names = [f"c{n}" for n in range(1, SOFT_BOUNCE_LIMIT + 1)]
    runs = [campaign(feedback, [A], steps=2, name=name) for name in names]
    sent = [mark_sent(run[A][0]) for run in runs]
    followups = [run[A][1] for run in runs]
    *before, last = [body(ses_event("Email Bounced", task, bounce_type="Transient")) for task in sent]
    _consume(*before)
    # The same soft bounce again is not another message.
    assert _failures(_consume(*before)[0]) == []
    assert contacts.stop_of(A) is None
    assert _record(A)["soft_bounce_messages"] == {
        task.email.ses_message_id for task in sent[:-1] if task.email
    }
    assert all(_status(email)[0] is Status.PENDING for email in followups)
    _consume(last)
    stop = contacts.stop_of(A)
    assert stop is not None
    assert stop.state is contacts.State.BOUNCED
    assert stop.why.startswith(f"{SOFT_BOUNCE_LIMIT} soft bounces")
    for email in followups:
        status, reason = _status(email)
        assert status is Status.CANCELLED
        assert reason.startswith("contact_stopped: bounced")
        assert not schedule_exists(feedback, email)
    assert [_counts(name)[1]["bounced_soft"] for name in names] == [1] * SOFT_BOUNCE_LIMIT


def test_an_undetermined_bounce_counts_as_a_soft_one(feedback: Feedback) -> None:
    emails = campaign(feedback, [A], steps=2)
    _consume(body(ses_event("Email Bounced", mark_sent(emails[A][0]), bounce_type="Undetermined")))
    assert contacts.stop_of(A) is None
    assert _counts()[1]["bounced_soft"] == 1
    assert stored(emails[A][1].task_id).status is Status.PENDING


def test_duplicate_and_out_of_order_events_change_nothing_more(feedback: Feedback) -> None:
    emails = campaign(feedback, [A])
    sent = mark_sent(emails[A][0])
    late = FIRST_SEND + timedelta(hours=2)
    complaint = body(ses_event("Email Complaint Received", sent, at=late))
    # The bounce happened before the complaint, but arrives after it; everything arrives twice.
    bounce = body(ses_event("Email Bounced", sent, at=FIRST_SEND + timedelta(minutes=1)))
    delivery = body(ses_event("Email Delivered", sent))
    for batch in [(complaint, complaint), (bounce, delivery), (delivery, bounce, complaint)]:
        assert _failures(_consume(*batch)[0]) == []
    stop = contacts.stop_of(A)
    assert stop is not None
    # The highest state wins and keeps the time of the event that set it.
    assert (stop.state, stop.since) == (contacts.State.COMPLAINED, "2027-03-02T10:30:00Z")
    counts = _counts()[1]
    assert (counts["complained"], counts["bounced_hard"], counts["delivered"]) == (1, 1, 1)
    assert sum(counts.values()) == 3
    cancelled = [_status(email) for email in emails[A][1:]]
    assert all(status is Status.CANCELLED and "complained" in reason for status, reason in cancelled)
    assert task_store.job_counts("spring")["Cancelled"] == 2


def test_a_crash_mid_batch_reports_only_the_failed_record_and_its_retry_completes_it(
    feedback: Feedback, monkeypatch: pytest.MonkeyPatch
) -> None:
    emails = campaign(feedback, [A, B, C])
    bounces = [body(ses_event("Email Bounced", mark_sent(emails[address][0]))) for address in (A, B, C)]
    real = contacts.cancel_open_emails

    def crash_for_b(address: str, reason: str, group: str) -> contacts.FanOut:
        if address == B:
            raise ConnectionError("the function ran out of time")
        return real(address, reason, group)

    monkeypatch.setattr(contacts, "cancel_open_emails", crash_for_b)
    response, ids = _consume(*bounces)
    assert _failures(response) == [ids[1]]
    assert all(_status(email)[0] is Status.CANCELLED for address in (A, C) for email in emails[address][1:])
    assert all(_status(email)[0] is Status.PENDING for email in emails[B][1:])
    monkeypatch.setattr(contacts, "cancel_open_emails", real)
    # SQS delivers the failed record again: its ledger write and mark are there already, its fan-out runs.
    assert _failures(_consume(bounces[1])[0]) == []
    for email in emails[B][1:]:
        status, reason = _status(email)
        assert status is Status.CANCELLED
        assert reason.startswith("contact_stopped: bounced")
        assert not schedule_exists(feedback, email)
    assert _counts()[1]["bounced_hard"] == 3


def test_an_unparseable_record_is_a_batch_item_failure_and_the_others_are_recorded(
    feedback: Feedback,
) -> None:
    emails = campaign(feedback, [A], steps=1)
    delivery = body(ses_event("Email Delivered", mark_sent(emails[A][0])))
    malformed = ses_event("Email Bounced", stored(emails[A][0].task_id))
    malformed["detail"]["bounce"]["bounceType"] = "Soft"
    response, ids = _consume("not json", delivery, body(malformed))
    assert _failures(response) == [ids[0], ids[2]]
    assert _counts()[1]["delivered"] == 1
    assert contacts.stop_of(A) is None


def test_a_send_event_records_when_and_by_which_campaign_the_address_was_contacted(
    feedback: Feedback,
) -> None:
    emails = campaign(feedback, [A], steps=1)
    sent = mark_sent(emails[A][0])
    later = FIRST_SEND + timedelta(days=1)
    _consume(body(ses_event("Email Sent", sent, at=later)), body(ses_event("Email Sent", sent)))
    record = _record(A)
    assert (record["last_contacted_at"], record["last_campaign_id"]) == ("2027-03-03T08:30:00Z", "spring")
    assert contacts.stop_of(A) is None
    assert _counts() == {}


def test_each_event_kind_is_marked_once_on_its_task_and_counted_for_its_step(feedback: Feedback) -> None:
    emails = campaign(feedback, [A, B], steps=2)
    first, second = mark_sent(emails[A][0]), mark_sent(emails[A][1])
    kinds = ["Email Delivered", "Email Delivery Delayed", "Email Rejected", "Email Rendering Failed"]
    bodies = [body(ses_event(kind, task)) for kind in kinds for task in (first, second)]
    assert _failures(_consume(*bodies, *bodies)[0]) == []
    expected = {"delivered": 1, "delayed": 1, "rejected": 1, "rendering_failed": 1}
    for step in (1, 2):
        assert {kind: n for kind, n in _counts()[step].items() if n} == expected
    row = boto3.client("dynamodb", region_name=REGION).get_item(
        TableName=config.tasks_table(), Key={"task_id": {"S": first.task_id}}
    )["Item"]
    assert row["delivered_at"] == {"S": "2027-03-02T08:31:00Z"}
    assert stored(first.task_id).status is Status.FINISHED
    assert contacts.stop_of(A) is None


def test_a_bounce_of_mail_without_outreach_tags_still_stops_the_address(feedback: Feedback) -> None:
    emails = campaign(feedback, [A])
    event = ses_event("Email Bounced", mark_sent(emails[A][0]))
    event["detail"]["mail"]["tags"] = {"ses:configuration-set": ["outreach-test-email"]}
    assert _failures(_consume(body(event))[0]) == []
    stop = contacts.stop_of(A)
    assert stop is not None
    assert stop.campaign_id is None
    assert all(_status(email)[0] is Status.CANCELLED for email in emails[A][1:])
    assert _counts() == {}


def test_the_unsubscribe_message_records_the_stop_marks_the_step_and_cancels_open_emails(
    feedback: Feedback,
) -> None:
    emails = campaign(feedback, [A, B])
    mark_sent(emails[A][0])
    at = datetime(2027, 3, 2, 9, 0, tzinfo=UTC)
    message = ses_events.unsubscribe_message("spring", 1, A, at)
    assert _failures(_consume(message, message)[0]) == []
    stop = contacts.stop_of(A)
    assert stop is not None
    assert (stop.state, stop.source, stop.since) == (
        contacts.State.UNSUBSCRIBED,
        contacts.Source.UNSUBSCRIBE,
        "2027-03-02T09:00:00Z",
    )
    assert all(_status(email)[0] is Status.CANCELLED for email in emails[A][1:])
    assert all(_status(email)[0] is Status.PENDING for email in emails[B])
    assert _counts()[1]["unsubscribed"] == 1


def test_an_event_naming_a_task_of_another_step_is_refused(feedback: Feedback) -> None:
    emails = campaign(feedback, [A])
    event = ses_event("Email Delivered", mark_sent(emails[A][0]))
    event["detail"]["mail"]["tags"]["outreach-step"] = ["2"]
    response, ids = _consume(body(event))
    assert _failures(response) == ids
    assert _counts() == {}


def test_the_consumer_logs_ids_and_never_an_address(
    feedback: Feedback, monkeypatch: pytest.MonkeyPatch
) -> None:
    emails = campaign(feedback, [A])
    sent = mark_sent(emails[A][0])
    malformed = ses_event("Email Bounced", sent)
    malformed["detail"]["bounce"]["bouncedRecipients"][0]["emailAddress"] = "ada@@example.org"
    stream = io.StringIO()
    monkeypatch.setattr(logger.registered_handler, "stream", stream)
    _consume(body(ses_event("Email Bounced", sent)), body(malformed))
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert any(line.get("event_kind") == "BOUNCE" and line.get("task_id") == sent.task_id for line in lines)
    assert any(line.get("message") == "unreadable SES-events record" for line in lines)
    # Not the address, and not even its hash: the consumer logs ids only.
    assert not [line for line in lines if "@" in json.dumps(line) or address_hash(A) in json.dumps(line)]


def test_the_consumer_stops_at_its_start_without_its_soft_bounce_limit(
    feedback: Feedback, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SOFT_BOUNCE_LIMIT")
    with pytest.raises(ConfigurationError, match="SOFT_BOUNCE_LIMIT"):
        config.for_ses_event_consumer()
    monkeypatch.setenv("SOFT_BOUNCE_LIMIT", "0")
    with pytest.raises(ConfigurationError, match="SOFT_BOUNCE_LIMIT"):
        ses_event_consumer.lambda_handler(sqs_batch(), FakeContext())
