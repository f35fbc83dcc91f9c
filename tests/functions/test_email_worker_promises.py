"""The email worker's promises against rows and events it did not plan: only to the planned address,
never early, never twice after an answer from SES was lost, one malformed row harming only itself."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.exceptions import EndpointConnectionError, ReadTimeoutError

from embedded_aws.ses_v2 import sent_emails
from outreach import clients, config, email_schedules, email_worker, task_store
from outreach.errors import SendOutcomeUnknownError, UnreadableMessageError
from outreach.task_model import Status
from tests.functions.email_worker_support import invoke, stored_task
from tests.support.aws import REGION
from tests.support.email import FIRST_SEND, planned

_invoke = invoke
_task = stored_task


def _rewrite(task_id: str, expression: str, values: dict[str, Any]) -> None:
    """A write around the planner: any role allowed UpdateItem on the table could make it."""
    boto3.client("dynamodb", region_name=REGION).update_item(
        TableName=config.tasks_table(),
        Key={"task_id": {"S": task_id}},
        UpdateExpression=expression,
        ExpressionAttributeValues=values,
    )


# ---- right recipient ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "values", "reason"),
    [
        pytest.param(
            "SET message.#to = :v",
            {":v": {"S": "blocked@example.net"}},
            "wrong_recipient: message.to is not the task's recipient",
            id="to-another-address",
        ),
        pytest.param(
            "SET message.#to = :v",
            {":v": {"S": "a@example.org, b@example.net"}},
            "wrong_recipient: message.to is not exactly one e-mail address",
            id="to-two-addresses",
        ),
        pytest.param(
            "SET message.#to = :v",
            {":v": {"S": "Boss <a@example.org>"}},
            "wrong_recipient: message.to is not exactly one e-mail address",
            id="to-with-a-display-name",
        ),
        pytest.param(
            "SET recipient = :v, message.#to = :v",
            {":v": {"S": "other@example.net"}},
            "wrong_recipient: the task id is not the one of campaign, recipient and step",
            id="recipient-and-to-both-rewritten",
        ),
    ],
)
def test_an_email_whose_address_was_rewritten_after_planning_is_failed_and_not_sent(
    ses: list[float], expression: str, values: dict[str, Any], reason: str
) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    boto3.client("dynamodb", region_name=REGION).update_item(
        TableName=config.tasks_table(),
        Key={"task_id": {"S": email.task_id}},
        UpdateExpression=expression,
        ExpressionAttributeNames={"#to": "to"} if "#to" in expression else {},
        ExpressionAttributeValues=values,
    )
    assert _invoke(email.task_id)["outcome"] == "Failed"
    failed = _task(email.task_id)
    assert failed.status is Status.FAILED
    assert failed.failure_reason == reason
    assert sent_emails(REGION) == []


# ---- never early --------------------------------------------------------------------------------


def test_an_invocation_before_send_at_sends_nothing_and_leaves_the_task_pending(ses: list[float]) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    ses[0] = FIRST_SEND.timestamp() - 3_600  # a replayed or hand-made event, an hour early
    assert _invoke(email.task_id)["outcome"] == "TooEarly"
    waiting = _task(email.task_id)
    assert waiting.status is Status.PENDING
    assert waiting.lease is None
    assert waiting.attempts == 0
    assert sent_emails(REGION) == []
    # Its own schedule, on time, still sends it.
    ses[0] = FIRST_SEND.timestamp()
    assert _invoke(email.task_id)["outcome"] == "Sent"
    assert len(sent_emails(REGION)) == 1


def test_an_invocation_inside_the_documented_skew_sends(ses: list[float]) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    ses[0] = FIRST_SEND.timestamp() - email_worker.EARLY_SKEW_SECONDS
    assert _invoke(email.task_id)["outcome"] == "Sent"


# ---- an ambiguous send is not a failed send --------------------------------------------------------


def test_a_read_timeout_after_ses_accepted_leaves_running_and_the_reconciler_ends_it_delivery_unknown(
    ses: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    from embedded_aws.ses_faults import inject_ses
    from outreach.reconcilers import email as reconciler

    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    with inject_ses() as faults:
        timeout = faults.timeout_after_send({"a@example.org"})
        with pytest.raises(SendOutcomeUnknownError, match="ReadTimeoutError"):
            _invoke(email.task_id, "request-1")
        assert timeout.fired == 1
        assert _task(email.task_id).status is Status.RUNNING
        # Lambda's async retries: the task is Running, nothing is sent again.
        assert _invoke(email.task_id, "request-1")["outcome"] == "Busy"
        assert _invoke(email.task_id, "request-1")["outcome"] == "Busy"
    group = "outreach-test-email"
    boto3.client("scheduler", region_name=REGION).create_schedule_group(Name=group)
    target = email_schedules.ScheduleTarget(
        group=group,
        worker_arn=f"arn:aws:lambda:{REGION}:123456789012:function:outreach-test-email-worker",
        role_arn="arn:aws:iam::123456789012:role/outreach-test-email-scheduler",
        dlq_arn=f"arn:aws:sqs:{REGION}:123456789012:outreach-test-email-dlq",
    )
    ses[0] = FIRST_SEND.timestamp() + 1_000
    report = reconciler.reconcile(config.EmailReconcilerSettings.from_env(), target, lambda: 60.0)
    assert report.actions["delivery_unknown"] == 1
    settled = _task(email.task_id)
    assert settled.status is Status.FAILED
    assert (settled.failure_reason or "").startswith("delivery_unknown")
    assert [sent.to for sent in sent_emails(REGION)] == [("a@example.org",)]


class _SesFailingWith:
    """The moto SES client, but SendEmail raises ``error`` (before or after the real send)."""

    def __init__(self, error: Exception, *, after_send: bool) -> None:
        self._client = boto3.client("sesv2", region_name=REGION)
        self._error = error
        self._after_send = after_send

    def send_email(self, **request: Any) -> Any:
        if self._after_send:
            self._client.send_email(**request)
        raise self._error

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def test_a_connection_that_could_not_be_made_releases_the_claim_for_the_retry(
    ses: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    refused = _SesFailingWith(EndpointConnectionError(endpoint_url="https://email"), after_send=False)
    with monkeypatch.context() as patched:
        patched.setattr(clients, "sesv2", lambda: refused)
        with pytest.raises(EndpointConnectionError):
            _invoke(email.task_id)
    assert _task(email.task_id).status is Status.PENDING
    assert sent_emails(REGION) == []
    assert _invoke(email.task_id)["outcome"] == "Sent"
    assert len(sent_emails(REGION)) == 1


@pytest.mark.parametrize(
    "error",
    [ReadTimeoutError(endpoint_url="https://email"), RuntimeError("socket closed while reading")],
    ids=["read-timeout", "unknown-error"],
)
def test_an_error_after_the_request_was_sent_keeps_the_claim_and_is_never_sent_twice(
    ses: list[float], monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    lost_answer = _SesFailingWith(error, after_send=True)
    monkeypatch.setattr(clients, "sesv2", lambda: lost_answer)
    with pytest.raises(SendOutcomeUnknownError):
        _invoke(email.task_id, "request-1")
    assert _task(email.task_id).status is Status.RUNNING
    assert _invoke(email.task_id, "request-1")["outcome"] == "Busy"
    assert len(sent_emails(REGION)) == 1


# ---- one bad row harms one row ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "values", "field"),
    [
        ("SET send_at = :v", {":v": {"S": "next tuesday"}}, "send_at"),
        ("SET #tz = :v", {":v": {"S": "Mars/Olympus"}}, "timezone"),
        ("SET step = :v", {":v": {"N": "0"}}, "step"),
        ("SET schedule_name = :v", {":v": {"S": "email-someone-elses"}}, "schedule_name"),
        ("SET recipient = :v", {":v": {"S": "a@example.org; b@example.net"}}, "recipient"),
    ],
)
def test_a_malformed_stored_field_is_refused_before_the_claim_naming_the_field(
    ses: list[float], expression: str, values: dict[str, Any], field: str
) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    boto3.client("dynamodb", region_name=REGION).update_item(
        TableName=config.tasks_table(),
        Key={"task_id": {"S": email.task_id}},
        UpdateExpression=expression,
        ExpressionAttributeNames={"#tz": "timezone"} if "#tz" in expression else {},
        ExpressionAttributeValues=values,
    )
    with pytest.raises(UnreadableMessageError) as raised:
        _invoke(email.task_id)
    assert raised.value.reason == "malformed_task_row"
    assert f"{field}:" in str(raised.value.__cause__)
    stored = boto3.client("dynamodb", region_name=REGION).get_item(
        TableName=config.tasks_table(), Key={"task_id": {"S": email.task_id}}
    )["Item"]
    assert stored["status"] == {"S": "Pending"}  # never claimed, never released
    assert "lease_owner" not in stored
    assert sent_emails(REGION) == []
