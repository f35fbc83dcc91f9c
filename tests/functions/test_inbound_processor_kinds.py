"""Rules of the inbound processor for everything but a person's reply, end to end on moto: an
out-of-office moves the next steps past the return date inside the window; a DSN bounces as SES would;
mail to the unsubscribe mailbox unsubscribes; anything unmatched or unparseable is forwarded marked,
never dropped; settings are checked and logs carry ids only.
"""

from __future__ import annotations

import base64
import io
import json
from datetime import date

import boto3
import pytest

from outreach import config, contacts, task_store
from outreach.errors import ConfigurationError
from outreach.observability import logger
from outreach.sequence_rules import SequenceRules
from outreach.task_model import Status
from tests.functions import feedback_support
from tests.functions.feedback_support import mark_sent, stored
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
from tests.functions.inbound.mail_support import mail
from tests.functions.inbound.processor_support import (
    dsn,
    out_of_office,
    receipt_items,
    reply,
    schedule_expression,
    status_of,
)

feedback = feedback_support.feedback  # fixtures, found by name
inbound = inbound_support.inbound

A, B = "ada@example.org", "bob@example.org"


# ---- unmatched and unparseable -------------------------------------------------------------------


def test_a_bare_unknown_message_is_forwarded_marked_unmatched_and_kept(inbound: Inbound) -> None:
    raw = mail("Do you sell gift cards?\n", headers=[("From", "Someone <someone@example.net>")])
    assert process(deliver(raw, [f"info@{REPLY_DOMAIN}"])) == []
    (sent,) = forwards()
    assert sent.destinations == (UNMATCHED_FORWARD_TO,)
    assert sent.message["X-Outreach-Inbound"] == "unmatched"
    assert sent.message["X-Outreach-Campaign"] is None
    assert body_of(sent.raw) == body_of(raw)
    objects = boto3.client("s3", region_name=RECEIVING_REGION).list_objects_v2(Bucket=BUCKET)
    assert objects["KeyCount"] == 1


def test_an_auto_reply_to_the_forwarder_is_kept_and_never_forwarded_back(inbound: Inbound) -> None:
    raw = mail(
        "I am out of the office until March 10, 2027.\n",
        headers=[
            ("From", f"<{OWNER}>"),
            ("To", FORWARD_FROM),
            ("Subject", "Automatic reply: Re: Quick question"),
            ("Auto-Submitted", "auto-replied"),
        ],
    )
    assert process(deliver(raw, [FORWARD_FROM])) == []
    assert forwards() == []
    (receipt,) = receipt_items()
    assert (receipt["message_kind"], receipt["receipt_state"], receipt["forward_mark"]) == (
        "AUTO_REPLY",
        "acted",
        "",
    )


def test_an_unparseable_message_is_forwarded_marked_unparseable(inbound: Inbound) -> None:
    raw = b"this is not a mail\r\nno header at all, no sender\r\n"
    assert process(deliver(raw, [f"info@{REPLY_DOMAIN}"])) == []
    (sent,) = forwards()
    assert (sent.destinations, sent.message["X-Outreach-Inbound"]) == ((UNMATCHED_FORWARD_TO,), "unparseable")
    (receipt,) = receipt_items()
    assert (receipt["message_kind"], receipt["receipt_state"]) == ("UNPARSEABLE", "forwarded")


def test_a_message_over_the_bound_is_not_read_and_is_forwarded_as_a_notice(
    inbound: Inbound, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INBOUND_MAX_MESSAGE_BYTES", "2048")
    raw = mail("x" * 4000 + "\n", headers=[("From", f"<{A}>")])
    body = deliver(raw, [f"info@{REPLY_DOMAIN}"])
    assert process(body) == []
    (sent,) = forwards()
    text = sent.message.get_payload(decode=True)
    assert b"larger than the processor reads" in text
    assert f"bucket {BUCKET}".encode() in text
    assert sent.message["X-Outreach-Inbound"] == "unparseable"
    # Delivered again, the same object is one receipt.
    assert process(body) == []
    assert len(forwards()) == 1


def test_an_unreadable_record_is_the_only_failure_of_its_batch(inbound: Inbound) -> None:
    raw = mail(headers=[("From", f"<{A}>")])
    good = deliver(raw, [f"info@{REPLY_DOMAIN}"])
    other_bucket = json.loads(good)
    notice = json.loads(other_bucket["Message"])
    notice["receipt"]["action"]["bucketName"] = "someone-elses-bucket"
    other_bucket["Message"] = json.dumps(notice)
    assert process("not json", good, json.dumps(other_bucket)) == [0, 2]
    assert len(forwards()) == 1


# ---- automatic replies ---------------------------------------------------------------------------


def test_an_out_of_office_moves_the_next_steps_past_the_return_date_inside_the_window(
    inbound: Inbound,
) -> None:
    emails = campaign(inbound, [A])
    mark_sent(emails[A][0])
    token = emails[A][0].message.reply_to
    raw = out_of_office(token, "I am out of the office until March 10, 2027 with no access to email.\n")
    assert process(deliver(raw, [token])) == []
    assert contacts.engagement_of(A).away_until == date(2027, 3, 10)
    step2, step3 = (stored(email.task_id) for email in emails[A][1:])
    assert step2.email is not None and step3.email is not None
    # Step 2 (Fri 5 March 09:30 Berlin) goes on the return day at its own time; step 3 keeps its three
    # days after it, which fall on a Saturday: the next window day, Monday 15 March, 09:30.
    assert (step2.status, step2.email.send_at) == (Status.PENDING, "2027-03-10T08:30:00Z")
    assert (step3.status, step3.email.send_at) == (Status.PENDING, "2027-03-15T08:30:00Z")
    assert schedule_expression(inbound, emails[A][1]) == "at(2027-03-10T08:30:00)"
    assert schedule_expression(inbound, emails[A][2]) == "at(2027-03-15T08:30:00)"
    # Automatic replies are not forwarded unless the campaign asks; nothing was cancelled.
    assert forwards() == []
    assert task_store.job_counts("spring")["Cancelled"] == 0


def test_an_out_of_office_without_a_date_assumes_the_default_absence(inbound: Inbound) -> None:
    emails = campaign(inbound, [A])
    mark_sent(emails[A][0])
    token = emails[A][0].message.reply_to
    raw = out_of_office(token, "I am currently out of the office with limited access to email.\n")
    assert process(deliver(raw, [token])) == []
    # Received Tuesday 2 March; seven days: Tuesday 9 March.
    assert contacts.engagement_of(A).away_until == date(2027, 3, 9)
    step2 = stored(emails[A][1].task_id)
    assert step2.email is not None and step2.email.send_at == "2027-03-09T08:30:00Z"


def test_an_auto_reply_is_forwarded_only_when_the_campaign_asks(inbound: Inbound) -> None:
    rules = SequenceRules(owner=OWNER, forward_auto_replies=True, on_out_of_office="continue")
    emails = campaign(inbound, [A], rules=rules)
    token = emails[A][0].message.reply_to
    raw = out_of_office(token, "I am out of the office until March 10, 2027.\n")
    assert process(deliver(raw, [token])) == []
    (sent,) = forwards()
    assert (sent.destinations, sent.message["X-Outreach-Inbound"]) == ((OWNER,), "auto-reply")
    # on_out_of_office: continue leaves the plan as it is.
    step2 = stored(emails[A][1].task_id)
    assert step2.email is not None and step2.email.send_at == "2027-03-05T08:30:00Z"


# ---- delivery reports and unsubscribes -----------------------------------------------------------


def test_a_delivery_status_notification_records_a_bounce_as_ses_would(inbound: Inbound) -> None:
    spring = campaign(inbound, [A])
    autumn = campaign(inbound, [A], name="autumn")
    sent = mark_sent(spring[A][0])
    assert sent.email is not None
    raw = dsn(A, message_id_header(str(sent.email.ses_message_id)))
    body = deliver(raw, [f"bounces@{REPLY_DOMAIN}"])
    assert process(body, body) == []
    stop = contacts.stop_of(A)
    assert stop is not None
    assert (stop.state, stop.source, stop.campaign_id) == (
        contacts.State.BOUNCED,
        contacts.Source.SES,
        "spring",
    )
    for email in [*spring[A][1:], *autumn[A]]:
        status, reason = status_of(email)
        assert status is Status.CANCELLED and reason.startswith("contact_stopped: bounced")
    assert task_store.email_event_counts("spring")[1]["bounced_hard"] == 1
    assert forwards() == []


def test_a_delay_report_changes_nothing(inbound: Inbound) -> None:
    emails = campaign(inbound, [A])
    sent = mark_sent(emails[A][0])
    assert sent.email is not None
    raw = dsn(A, message_id_header(str(sent.email.ses_message_id)), status="4.4.7", action="delayed")
    assert process(deliver(raw, [f"bounces@{REPLY_DOMAIN}"])) == []
    assert contacts.stop_of(A) is None
    assert all(status_of(email)[0] is Status.PENDING for email in emails[A][1:])


def test_a_report_about_mail_the_pipeline_never_sent_is_forwarded_unmatched(inbound: Inbound) -> None:
    raw = dsn(B, "<not-ours@mail.example.org>")
    assert process(deliver(raw, [f"bounces@{REPLY_DOMAIN}"])) == []
    assert contacts.stop_of(B) is None
    (forwarded,) = forwards()
    assert forwarded.message["X-Outreach-Inbound"] == "unmatched"


@pytest.mark.parametrize("to", ["unsubscribe", "unsubscribe+spring"])
def test_mail_to_the_unsubscribe_mailbox_unsubscribes_its_sender_and_cancels(
    inbound: Inbound, to: str
) -> None:
    spring = campaign(inbound, [A])
    autumn = campaign(inbound, [A], name="autumn")
    mailbox = f"{to}@{REPLY_DOMAIN}"
    raw = mail("", headers=[("From", f"<{A}>"), ("To", mailbox), ("Subject", "unsubscribe")])
    assert process(deliver(raw, [mailbox])) == []
    stop = contacts.stop_of(A)
    assert stop is not None
    assert (stop.state, stop.source) == (contacts.State.UNSUBSCRIBED, contacts.Source.UNSUBSCRIBE)
    assert all(status_of(email)[0] is Status.CANCELLED for email in [*spring[A], *autumn[A]])
    assert forwards() == []


def test_mail_delivered_to_the_unsubscribe_mailbox_unsubscribes_whatever_its_to_says(
    inbound: Inbound,
) -> None:
    emails = campaign(inbound, [A])
    raw = mail("please remove me", headers=[("From", f"<{A}>"), ("To", "friends@example.org")])
    assert process(deliver(raw, [f"unsubscribe@{REPLY_DOMAIN}"])) == []
    stop = contacts.stop_of(A)
    assert stop is not None and stop.state is contacts.State.UNSUBSCRIBED
    assert all(status_of(email)[0] is Status.CANCELLED for email in emails[A])


# ---- settings and logs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "INBOUND_BUCKET",
        "REPLY_DOMAIN",
        "FORWARD_FROM",
        "UNMATCHED_FORWARD_TO",
        "AWAY_DEFAULT_DAYS",
        "EMAIL_DLQ_ARN",
    ],
)
def test_a_missing_setting_stops_the_invocation_naming_it(
    inbound: Inbound, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.delenv(name)
    with pytest.raises(ConfigurationError, match=name):
        process(deliver(mail(), [f"info@{REPLY_DOMAIN}"]))


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("AWAY_DEFAULT_DAYS", "0"),
        ("AWAY_DEFAULT_DAYS", "91"),
        ("INBOUND_MAX_MESSAGE_BYTES", str(40 * 1024 * 1024 + 1)),
        ("INBOUND_MAX_MESSAGE_BYTES", "ten"),
        ("SOFT_BOUNCE_LIMIT", "0"),
        ("UNSUBSCRIBE_LOCAL_PART", "unsubscribe@example.com"),
    ],
)
def test_a_setting_out_of_its_bounds_stops_the_invocation_naming_it(
    inbound: Inbound, monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigurationError, match=name):
        config.for_inbound_processor()


def test_logs_carry_ids_and_never_an_address_a_subject_or_a_body(
    inbound: Inbound, monkeypatch: pytest.MonkeyPatch
) -> None:
    emails = campaign(inbound, [A])
    token = emails[A][0].message.reply_to
    stream = io.StringIO()
    monkeypatch.setattr(logger.registered_handler, "stream", stream)
    raw = reply(token, body="My private number is in the footer. Secret words.\n")
    assert process(deliver(raw, [token])) == []
    logged = stream.getvalue()
    assert emails[A][0].task_id in logged
    for private in (A, token, OWNER, "Quick question", "Secret words"):
        assert private not in logged
    assert base64.b64encode(raw[:30]).decode() not in logged
