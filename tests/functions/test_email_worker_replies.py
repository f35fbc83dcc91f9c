"""Rules of the email worker and replies: a follow-up goes out in the thread of the earlier steps, a
recorded reply stops the follow-ups its rules say it stops, and the reply domain's unsubscribe mailbox
stands after the one-click link."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from outreach import clients, config, contacts, task_store
from outreach.email_headers import (
    MAX_HEADER_VALUE_CHARS,
    references_value,
    thread_headers,
    unsubscribe_headers,
)
from outreach.email_task import EmailMessage, PlannedEmail
from outreach.sequence_rules import SequenceRules
from outreach.ses_message_ids import message_id_header, ses_ids_in
from outreach.task_model import Status
from tests.functions.email_worker_support import RecordingSes, invoke, stored_task
from tests.support.aws import REGION
from tests.support.email import planned

AT = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
ADDRESS = "anna@example.org"


def _headers(request: dict[str, Any]) -> dict[str, str]:
    return {header["Name"]: header["Value"] for header in request["Content"]["Simple"]["Headers"]}


def _send_in_turn(ses: list[float], emails: list[PlannedEmail]) -> list[str]:
    task_store.create_email_tasks(emails)
    outcomes = []
    for email in emails:
        ses[0] = email.send_at.timestamp()
        outcomes.append(invoke(email.task_id)["outcome"])
    return outcomes


def _with_rules(email: PlannedEmail, **rules: Any) -> PlannedEmail:
    return replace(email, rules=SequenceRules(**rules))


# ---- threading ------------------------------------------------------------------------------------


def test_a_threaded_follow_up_answers_the_first_email_and_references_every_earlier_step(
    recording_ses: RecordingSes, ses: list[float]
) -> None:
    emails = [planned(ADDRESS, step) for step in (1, 2, 3)]
    assert _send_in_turn(ses, emails) == ["Sent"] * 3
    ids = [stored_task(email.task_id).email.ses_message_id for email in emails]  # type: ignore[union-attr]
    first, second = (message_id_header(str(ses_id), REGION) for ses_id in ids[:2])
    assert first == f"<{ids[0]}@{REGION}.amazonses.com>"
    headers = [_headers(request) for request in recording_ses.requests]
    assert "In-Reply-To" not in headers[0] and "References" not in headers[0]
    assert (headers[1]["In-Reply-To"], headers[1]["References"]) == (first, first)
    assert (headers[2]["In-Reply-To"], headers[2]["References"]) == (first, f"{first} {second}")
    # A reply quoting the third email names both earlier ones, as the inbound processor reads them.
    assert ses_ids_in(headers[2]["References"]) == ids[:2]


def test_a_follow_up_the_campaign_does_not_thread_goes_out_without_a_thread(
    recording_ses: RecordingSes, ses: list[float]
) -> None:
    emails = [planned(ADDRESS, 1), replace(planned(ADDRESS, 2), threaded=False)]
    assert _send_in_turn(ses, emails) == ["Sent", "Sent"]
    assert stored_task(emails[1].task_id).email.threaded is False  # type: ignore[union-attr]
    assert not {"In-Reply-To", "References"} & set(_headers(recording_ses.requests[1]))


@pytest.mark.parametrize(
    ("region", "domain"),
    [("us-east-1", "email.amazonses.com"), ("eu-west-1", "eu-west-1.amazonses.com")],
)
def test_the_thread_names_the_message_ids_of_the_region_that_sent_them(region: str, domain: str) -> None:
    assert thread_headers(["a-000000", "b-000000"], region) == [
        {"Name": "In-Reply-To", "Value": f"<a-000000@{domain}>"},
        {"Name": "References", "Value": f"<a-000000@{domain}> <b-000000@{domain}>"},
    ]


def test_an_earlier_step_without_an_id_is_left_out_of_the_thread() -> None:
    assert thread_headers([None, "b-000000"], "eu-west-1") == [
        {"Name": "References", "Value": "<b-000000@eu-west-1.amazonses.com>"}
    ]
    assert thread_headers([None], "eu-west-1") == []


def test_references_too_long_for_ses_keep_the_first_and_the_latest_ids() -> None:
    ids = [message_id_header(f"{n:02d}" + "x" * 60, "ap-southeast-2") for n in range(15)]
    value = references_value(ids)
    assert len(value) <= MAX_HEADER_VALUE_CHARS
    kept = value.split(" ")
    assert (kept[0], kept[-1]) == (ids[0], ids[-1])
    assert kept == [ids[0], *ids[len(ids) - len(kept) + 1 :]]


def test_a_stored_message_id_ses_could_not_have_given_leaves_the_email_unthreaded_not_lost(
    recording_ses: RecordingSes, ses: list[float]
) -> None:
    first, follow_up = planned(ADDRESS, 1), planned(ADDRESS, 2)
    assert _send_in_turn(ses, [first]) == ["Sent"]
    clients.dynamodb().update_item(
        TableName=config.tasks_table(),
        Key={"task_id": {"S": first.task_id}},
        UpdateExpression="SET ses_message_id = :id",
        ExpressionAttributeValues={":id": {"S": "x>\r\nBcc: everyone@example.net"}},
    )
    assert _send_in_turn(ses, [follow_up]) == ["Sent"]
    assert not {"In-Reply-To", "References"} & set(_headers(recording_ses.requests[1]))


# ---- the unsubscribe mailbox of the reply domain --------------------------------------------------


def test_the_reply_domains_unsubscribe_mailbox_stands_after_the_one_click_link() -> None:
    message = EmailMessage(
        sender="sales@example.com",
        to=ADDRESS,
        subject="Hi",
        text="Hi",
        unsubscribe="https://u.example/?t=abc",
        unsubscribe_mailto="mailto:unsubscribe@reply.example.com",
    )
    assert unsubscribe_headers(message) == [
        {
            "Name": "List-Unsubscribe",
            "Value": "<https://u.example/?t=abc>, <mailto:unsubscribe@reply.example.com>",
        },
        {"Name": "List-Unsubscribe-Post", "Value": "List-Unsubscribe=One-Click"},
    ]
    assert EmailMessage.from_item(message.to_item()) == message


def test_the_unsubscribe_mailbox_is_left_out_rather_than_pass_the_header_value_ses_takes() -> None:
    link = "https://u.example/?t=" + "a" * (MAX_HEADER_VALUE_CHARS - 30)
    message = EmailMessage(
        sender="s@example.com",
        to=ADDRESS,
        subject="s",
        text="t",
        unsubscribe=link,
        unsubscribe_mailto="mailto:unsubscribe@reply.example.com",
    )
    assert unsubscribe_headers(message)[0] == {"Name": "List-Unsubscribe", "Value": f"<{link}>"}


@pytest.mark.parametrize(
    ("unsubscribe", "mailto"),
    [
        ("https://u.example/?t=abc", "https://other.example/"),
        ("mailto:stop@example.com", "mailto:unsubscribe@reply.example.com"),
        ("https://u.example/?t=abc", "mailto:unsubscribe@reply.example.com\r\nBcc: x@example.net"),
    ],
    ids=["not mailto", "beside a mailto target", "header injection"],
)
def test_an_unsubscribe_mailto_is_one_mailto_beside_an_https_target(unsubscribe: str, mailto: str) -> None:
    with pytest.raises(ValueError, match="unsubscribe_mailto"):
        EmailMessage(
            sender="s@example.com",
            to=ADDRESS,
            subject="s",
            text="t",
            unsubscribe=unsubscribe,
            unsubscribe_mailto=mailto,
        )


# ---- a recorded reply -----------------------------------------------------------------------------


def test_a_reply_stops_every_follow_up_of_its_campaign(recording_ses: RecordingSes, ses: list[float]) -> None:
    emails = [planned(ADDRESS, step) for step in (1, 2, 3)]
    task_store.create_email_tasks(emails)
    ses[0] = emails[0].send_at.timestamp()
    assert invoke(emails[0].task_id)["outcome"] == "Sent"
    assert contacts.record_reply(ADDRESS, "spring", at=AT)
    for email in emails[1:]:
        ses[0] = email.send_at.timestamp()
        assert invoke(email.task_id)["outcome"] == "Skipped"
        task = stored_task(email.task_id)
        assert task.status is Status.CANCELLED
        assert (
            task.failure_reason
            == "replied: the recipient replied in this campaign (last reply 2027-03-01T12:00:00Z)"
        )
        assert ADDRESS not in (task.failure_reason or "")
    assert len(recording_ses.requests) == 1


@pytest.mark.parametrize(
    ("replied_in", "rules", "outcome"),
    [
        pytest.param("spring", {}, "Skipped", id="this campaign, default rules"),
        pytest.param("autumn", {}, "Skipped", id="another campaign, default rules"),
        pytest.param(
            "autumn", {"reply_stops_other_campaigns": False}, "Sent", id="another campaign, kept apart"
        ),
        pytest.param(
            "spring", {"reply_stops_other_campaigns": False}, "Skipped", id="this campaign, kept apart"
        ),
        pytest.param("spring", {"on_reply": "continue"}, "Sent", id="this campaign, continue"),
        pytest.param("autumn", {"on_reply": "continue"}, "Sent", id="another campaign, continue"),
        pytest.param(None, {}, "Sent", id="no reply"),
    ],
)
def test_a_reply_stops_what_the_rules_of_the_task_say(
    recording_ses: RecordingSes, ses: list[float], replied_in: str | None, rules: dict[str, Any], outcome: str
) -> None:
    first, follow_up = planned(ADDRESS, 1), _with_rules(planned(ADDRESS, 2), **rules)
    assert _send_in_turn(ses, [first]) == ["Sent"]
    if replied_in is not None:
        contacts.record_reply(ADDRESS, replied_in, at=AT)
    assert _send_in_turn(ses, [follow_up]) == [outcome]
    if outcome == "Skipped":
        assert (stored_task(follow_up.task_id).failure_reason or "").startswith("replied: ")


def test_a_reply_in_another_campaign_stops_the_first_step_of_a_campaign_whose_rules_say_so(
    recording_ses: RecordingSes, ses: list[float]
) -> None:
    contacts.record_reply(ADDRESS, "autumn", at=AT)
    email = planned(ADDRESS, 1)
    assert _send_in_turn(ses, [email]) == ["Skipped"]
    assert stored_task(email.task_id).failure_reason == (
        "replied: the recipient replied in campaign autumn (last reply 2027-03-01T12:00:00Z)"
    )
    assert recording_ses.requests == []


def test_a_row_written_before_rules_stops_on_a_reply_as_the_default_rules_do(
    recording_ses: RecordingSes, ses: list[float]
) -> None:
    first, follow_up = planned(ADDRESS, 1), planned(ADDRESS, 2)
    assert follow_up.rules is None
    assert _send_in_turn(ses, [first]) == ["Sent"]
    contacts.record_reply(ADDRESS, "winter", at=AT)
    assert _send_in_turn(ses, [follow_up]) == ["Skipped"]


def test_a_reply_stops_only_the_address_that_replied(recording_ses: RecordingSes, ses: list[float]) -> None:
    contacts.record_reply("other@example.org", "spring", at=AT)
    assert _send_in_turn(ses, [planned(ADDRESS, 1), planned(ADDRESS, 2)]) == ["Sent", "Sent"]
