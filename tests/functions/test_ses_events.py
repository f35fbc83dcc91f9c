"""Reading the SES-events queue: every SES event kind and the unsubscribe message are read field by field,
and whatever is malformed or oversized is refused with the field it breaks."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from outreach import ses_events
from outreach.errors import MalformedFieldError, UnparseableRecordError
from outreach.ses_events import BounceType, EventKind
from outreach.ses_tags import TaskRef
from outreach.task_model import Task
from tests.functions.feedback_support import SES_TYPES, body, message_id_of, ses_event, unstored_task
from tests.support.email import planned

_KINDS = {
    "Email Sent": EventKind.SEND,
    "Email Delivered": EventKind.DELIVERY,
    "Email Bounced": EventKind.BOUNCE,
    "Email Complaint Received": EventKind.COMPLAINT,
    "Email Rejected": EventKind.REJECT,
    "Email Delivery Delayed": EventKind.DELIVERY_DELAY,
    "Email Rendering Failed": EventKind.RENDERING_FAILURE,
}


@pytest.fixture
def task() -> Task:
    return unstored_task(planned("Ada.Lovelace@Example.org", 2, campaign="spring.2027"))


def test_the_module_reads_the_seven_documented_ses_detail_types() -> None:
    assert set(ses_events.SES_DETAIL_TYPES) == set(SES_TYPES) == set(_KINDS)


@pytest.mark.parametrize("detail_type", sorted(_KINDS))
def test_every_ses_event_kind_is_read_with_its_task_recipients_and_time(task: Task, detail_type: str) -> None:
    event = ses_events.parse(body(ses_event(detail_type, task, event_id="evt-1")))
    assert event.kind is _KINDS[detail_type]
    assert event.event_id == "evt-1"
    assert event.source == "aws.ses"
    assert event.message_id == message_id_of(task.task_id)
    # The address as the ledger keys it: trimmed and lower-cased.
    assert event.recipients == ("ada.lovelace@example.org",)
    assert event.task == TaskRef(campaign_id="spring.2027", step=2, task_id=task.task_id)
    assert event.at == datetime(2027, 3, 2, 8, 31, tzinfo=UTC)
    assert (event.bounce_type is None) == (detail_type != "Email Bounced")


@pytest.mark.parametrize(
    ("ses_type", "expected"),
    [("Permanent", BounceType.HARD), ("Transient", BounceType.SOFT), ("Undetermined", BounceType.SOFT)],
)
def test_a_permanent_bounce_is_hard_and_the_others_soft(
    task: Task, ses_type: str, expected: BounceType
) -> None:
    event = ses_events.parse(body(ses_event("Email Bounced", task, bounce_type=ses_type)))
    assert event.bounce_type is expected
    assert event.subtype == ("General" if ses_type == "Permanent" else "MailboxFull")


def test_a_complaint_keeps_its_feedback_type_for_the_ledger(task: Task) -> None:
    assert ses_events.parse(body(ses_event("Email Complaint Received", task))).subtype == "abuse"


def test_an_unexpected_subtype_is_kept_short_and_plain_rather_than_refused(task: Task) -> None:
    event = ses_event("Email Bounced", task)
    event["detail"]["bounce"]["bounceSubType"] = "<b>New\nKind</b>" + "x" * 100
    subtype = ses_events.parse(body(event)).subtype
    assert subtype is not None
    assert len(subtype) == 64
    assert subtype.startswith("_b_New_Kind__b_x")


def test_mail_without_the_outreach_tags_is_read_without_a_task(task: Task) -> None:
    event = ses_event("Email Bounced", task)
    event["detail"]["mail"]["tags"] = {"ses:configuration-set": ["outreach-test-email"]}
    assert ses_events.parse(body(event)).task is None


def test_the_unsubscribe_message_is_read_back_as_an_unsubscribe_of_its_task() -> None:
    at = datetime(2027, 3, 2, 9, 0, tzinfo=UTC)
    event = ses_events.parse(ses_events.unsubscribe_message("spring", 2, " Bob@Example.ORG ", at))
    assert event.kind is EventKind.UNSUBSCRIBE
    assert event.source == "outreach.unsubscribe"
    assert event.recipients == ("bob@example.org",)
    assert event.at == at
    assert event.message_id is None
    assert event.task is not None
    assert (event.task.campaign_id, event.task.step) == ("spring", 2)
    assert event.task.task_id.startswith("email#spring#")


def test_a_bounce_about_two_recipients_names_each_once(task: Task) -> None:
    event = ses_event("Email Bounced", task)
    recipients = event["detail"]["bounce"]["bouncedRecipients"]
    recipients.append({"emailAddress": "grace@example.org"})
    recipients.append({"emailAddress": "GRACE@example.org"})
    assert ses_events.parse(body(event)).recipients == ("ada.lovelace@example.org", "grace@example.org")


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(event: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        target: Any = event
        for name in parents:
            target = target[int(name)] if isinstance(target, list) else target[name]
        if isinstance(target, list):
            target[int(last)] = value
        elif value is _DROP:
            del target[last]
        else:
            target[last] = value

    return change


_DROP = object()

_MALFORMED: list[tuple[str, str, Callable[[dict[str, Any]], None], str]] = [
    ("no id", "Email Bounced", _set("id", _DROP), "id"),
    ("an id with spaces", "Email Bounced", _set("id", "a b"), "id"),
    ("an id over 256 characters", "Email Bounced", _set("id", "x" * 257), "id"),
    ("another source", "Email Bounced", _set("source", "aws.sns"), "source"),
    (
        "an event type SES is not set to publish",
        "Email Bounced",
        _set("detail-type", "Email Opened"),
        "detail-type",
    ),
    ("a time without a zone", "Email Bounced", _set("time", "2027-03-02T08:31:00"), "time"),
    ("no time at all", "Email Bounced", _set("time", "soon"), "time"),
    ("a detail that is a list", "Email Bounced", _set("detail", []), "detail"),
    (
        "an eventType of another detail-type",
        "Email Bounced",
        _set("detail/eventType", "Delivery"),
        "detail.eventType",
    ),
    ("no mail", "Email Delivered", _set("detail/mail", _DROP), "detail.mail"),
    ("no message id", "Email Bounced", _set("detail/mail/messageId", _DROP), "detail.mail.messageId"),
    ("a message id with quotes", "Email Sent", _set("detail/mail/messageId", 'a"b'), "detail.mail.messageId"),
    (
        "a bounced recipient that is no address",
        "Email Bounced",
        _set("detail/bounce/bouncedRecipients/0/emailAddress", "Ada <ada@example.org>"),
        "detail.bounce.bouncedRecipients[0].emailAddress",
    ),
    (
        "a bounced recipient that is a number",
        "Email Bounced",
        _set("detail/bounce/bouncedRecipients/0", 7),
        "detail.bounce.bouncedRecipients[0]",
    ),
    (
        "51 bounced recipients",
        "Email Bounced",
        _set("detail/bounce/bouncedRecipients", [{"emailAddress": f"r{i}@example.org"} for i in range(51)]),
        "detail.bounce.bouncedRecipients",
    ),
    (
        "no bounced recipient",
        "Email Bounced",
        _set("detail/bounce/bouncedRecipients", []),
        "detail.bounce.bouncedRecipients",
    ),
    (
        "an unknown bounce type",
        "Email Bounced",
        _set("detail/bounce/bounceType", "Soft"),
        "detail.bounce.bounceType",
    ),
    ("a bounce without its object", "Email Bounced", _set("detail/bounce", _DROP), "detail.bounce"),
    (
        "a complaint without recipients",
        "Email Complaint Received",
        _set("detail/complaint/complainedRecipients", _DROP),
        "detail.complaint.complainedRecipients",
    ),
    (
        "a send to a destination that is no address",
        "Email Sent",
        _set("detail/mail/destination", ["not-an-address"]),
        "detail.mail.destination[0]",
    ),
    (
        "a delivery to a recipient with a line break",
        "Email Delivered",
        _set("detail/delivery/recipients", ["ada@example.org\r\nBcc: x@example.org"]),
        "detail.delivery.recipients[0]",
    ),
    (
        "a malformed step tag",
        "Email Delivered",
        _set("detail/mail/tags/outreach-step", ["two"]),
        "detail.mail.tags.outreach-step",
    ),
    (
        "a task tag without its campaign",
        "Email Delivered",
        _set("detail/mail/tags/outreach-campaign", _DROP),
        "detail.mail.tags.outreach-campaign",
    ),
    ("tags that are a list", "Email Delivered", _set("detail/mail/tags", ["a"]), "detail.mail.tags"),
    (
        "a tag value over 256 characters",
        "Email Delivered",
        _set("detail/mail/tags/ses:from-domain", ["x" * 257]),
        "detail.mail.tags.ses:from-domain[0]",
    ),
    (
        "a delay type that is a number",
        "Email Delivery Delayed",
        _set("detail/deliveryDelay/delayType", 7),
        "detail.deliveryDelay.delayType",
    ),
]


@pytest.mark.parametrize(
    ("detail_type", "change", "field"),
    [case[1:] for case in _MALFORMED],
    ids=[case[0] for case in _MALFORMED],
)
def test_a_malformed_ses_event_is_refused_naming_its_field(
    task: Task, detail_type: str, change: Callable[[dict[str, Any]], None], field: str
) -> None:
    event = ses_event(detail_type, task)
    change(event)
    with pytest.raises(MalformedFieldError) as refused:
        ses_events.parse(body(event))
    assert refused.value.field == field


def _unsubscribe(**changes: Any) -> str:
    message = json.loads(
        ses_events.unsubscribe_message("spring", 2, "bob@example.org", datetime(2027, 3, 2, 9, tzinfo=UTC))
    )
    message["detail"].update(changes)
    return json.dumps(message)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"address": "bob"}, "detail.address"),
        ({"campaign_id": "../etc"}, "detail.campaign_id"),
        ({"step": 0}, "detail.step"),
        ({"step": True}, "detail.step"),
        ({"task_id": "email#spring#" + "0" * 32}, "detail.task_id"),
        ({"at": "yesterday"}, "detail.at"),
    ],
)
def test_a_malformed_unsubscribe_message_is_refused_naming_its_field(
    changes: dict[str, Any], field: str
) -> None:
    with pytest.raises(MalformedFieldError) as refused:
        ses_events.parse(_unsubscribe(**changes))
    assert refused.value.field == field


def test_an_unsubscribe_message_of_another_detail_type_is_refused() -> None:
    message = json.loads(_unsubscribe())
    message["detail-type"] = "Email Bounced"
    with pytest.raises(MalformedFieldError) as refused:
        ses_events.parse(json.dumps(message))
    assert refused.value.field == "detail-type"


def test_a_body_over_256_kb_is_refused_before_it_is_parsed(task: Task) -> None:
    event = ses_event("Email Bounced", task)
    event["detail"]["padding"] = "x" * (256 * 1024)
    with pytest.raises(MalformedFieldError) as refused:
        ses_events.parse(body(event))
    assert refused.value.field == "body"


@pytest.mark.parametrize(
    "text", ["", "not json", "[1, 2]", '"a string"', "[" * 100_000 + "]" * 100_000, '{"id": NaN'], ids=repr
)
def test_a_body_that_is_no_json_object_is_unparseable(text: str) -> None:
    with pytest.raises(UnparseableRecordError, match="body"):
        ses_events.parse(text)
