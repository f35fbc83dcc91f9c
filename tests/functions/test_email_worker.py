"""Rules of the email worker: at most one email per task, claim before send, terminal tasks untouched,
transient failures retried with the claim released, permanent ones recorded without a raise."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from embedded_aws.ses_faults import inject_ses
from embedded_aws.ses_v2 import SentEmail, sent_emails
from outreach import clients, config, email_worker, errors, task_store
from outreach.errors import UnreadableMessageError
from outreach.task_model import Status, Task
from outreach_operator import task_actions
from tests.functions.email_worker_support import invoke, stored_task
from tests.support.aws import REGION
from tests.support.email import CONFIGURATION_SET, planned
from tests.support.lambda_context import FakeContext

_invoke = invoke
_task = stored_task


def _sent() -> list[SentEmail]:
    return sent_emails(REGION)


class _FailingSes:
    """The real (moto) SES client, but SendEmail fails with ``code`` the first ``times`` calls."""

    def __init__(self, code: str, times: int) -> None:
        self._client = boto3.client("sesv2", region_name=REGION)
        self._code = code
        self._left = times

    def send_email(self, **request: Any) -> Any:
        if self._left > 0:
            self._left -= 1
            raise ClientError({"Error": {"Code": self._code, "Message": "injected"}}, "SendEmail")
        return self._client.send_email(**request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def test_a_schedule_invoked_three_times_sends_one_email(ses: list[float]) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    outcomes = [_invoke(email.task_id, f"request-{i}")["outcome"] for i in range(3)]
    assert outcomes == ["Sent", "AlreadyTerminal", "AlreadyTerminal"]
    assert [sent.to for sent in _sent()] == [("a@example.org",)]
    done = _task(email.task_id)
    assert done.status is Status.FINISHED
    assert done.email is not None
    assert done.email.ses_message_id == _sent()[0].message_id
    assert task_store.job_counts("spring")["Finished"] == 1


def test_concurrent_invocations_of_one_task_send_one_email(ses: list[float]) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    read_by_both = _task(email.task_id)
    assert _invoke(email.task_id, "request-1")["outcome"] == "Sent"
    # The second invocation read Pending before the first claimed: its claim is refused.
    with pytest.raises(errors.TransitionRejectedError):
        task_store.claim_email(read_by_both, owner="request-2", lease_seconds=60)
    assert len(_sent()) == 1


def test_a_cancelled_task_sends_no_email(ses: list[float]) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    task_actions.cancel(_task(email.task_id), reason="campaign cancelled")
    assert _invoke(email.task_id)["outcome"] == "AlreadyTerminal"
    assert _sent() == []
    assert _task(email.task_id).status is Status.CANCELLED


def test_ses_throttling_releases_the_claim_raises_and_the_retry_sends_one_email(
    ses: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    throttled = _FailingSes("TooManyRequestsException", times=1)
    monkeypatch.setattr(clients, "sesv2", lambda: throttled)
    with pytest.raises(ClientError, match="TooManyRequestsException"):
        _invoke(email.task_id, "request-1")
    released = _task(email.task_id)
    assert released.status is Status.PENDING
    assert released.lease is None
    assert "TooManyRequestsException" in (released.last_error or "")
    assert _sent() == []
    assert _invoke(email.task_id, "request-1")["outcome"] == "Sent"
    assert len(_sent()) == 1
    assert _task(email.task_id).attempts == 2
    assert task_store.job_counts("spring")["Finished"] == 1


def test_a_throttled_send_reaches_ses_once_per_invocation_and_is_left_to_lambdas_retry(
    ses: list[float],
) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    with inject_ses() as faults:
        throttle = faults.throttle({"a@example.org"}, times=1)
        with pytest.raises(ClientError, match="TooManyRequestsException"):
            _invoke(email.task_id, "request-1")
        assert throttle.fired == 1  # the SDK did not send it again
        assert _task(email.task_id).status is Status.PENDING
        assert _invoke(email.task_id, "request-1")["outcome"] == "Sent"
    assert len(_sent()) == 1


@pytest.mark.parametrize("code", ["LimitExceededException", "InternalFailure", "AccountSuspendedException"])
def test_errors_that_are_not_about_this_email_are_raised_with_the_claim_released(
    ses: list[float], monkeypatch: pytest.MonkeyPatch, code: str
) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    failing = _FailingSes(code, times=1)
    monkeypatch.setattr(clients, "sesv2", lambda: failing)
    with pytest.raises(ClientError, match=code):
        _invoke(email.task_id)
    assert _task(email.task_id).status is Status.PENDING


def test_a_permanent_rejection_fails_the_task_without_raising(ses: list[float]) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    boto3.client("sesv2", region_name=REGION).delete_email_identity(EmailIdentity="example.com")
    assert _invoke(email.task_id)["outcome"] == "Failed"
    failed = _task(email.task_id)
    assert failed.status is Status.FAILED
    assert (failed.failure_reason or "").startswith("ses_rejected: MessageRejected")
    assert _sent() == []
    assert task_store.job_counts("spring")["Failed"] == 1


@pytest.mark.parametrize("code", sorted(email_worker.PERMANENT_SES_ERRORS))
def test_each_named_permanent_ses_error_fails_the_task(
    ses: list[float], monkeypatch: pytest.MonkeyPatch, code: str
) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    failing = _FailingSes(code, times=1)
    monkeypatch.setattr(clients, "sesv2", lambda: failing)
    assert _invoke(email.task_id)["outcome"] == "Failed"
    assert code in (_task(email.task_id).failure_reason or "")


def test_a_crash_after_the_send_leaves_the_task_running_and_no_retry_sends_again(
    ses: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])

    def crash(task: Task, *, ses_message_id: str) -> None:
        raise RuntimeError("worker died after the send")

    monkeypatch.setattr(task_store, "finish_email", crash)
    with pytest.raises(RuntimeError):
        _invoke(email.task_id, "request-1")
    assert _task(email.task_id).status is Status.RUNNING
    assert _invoke(email.task_id, "request-1")["outcome"] == "Busy"
    ses[0] += 24 * 3600
    assert _invoke(email.task_id, "request-2")["outcome"] == "Busy"
    assert len(_sent()) == 1


def test_header_injection_is_refused_at_send(ses: list[float]) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    # A row written around the planner's checks: a CR LF in the stored subject.
    boto3.client("dynamodb", region_name=REGION).update_item(
        TableName=config.tasks_table(),
        Key={"task_id": {"S": email.task_id}},
        UpdateExpression="SET message.subject = :s",
        ExpressionAttributeValues={":s": {"S": "Hello\r\nBcc: everyone@example.net"}},
    )
    assert _invoke(email.task_id)["outcome"] == "Failed"
    failed = _task(email.task_id)
    assert (failed.failure_reason or "").startswith("unsafe_message: subject: control character")
    assert _sent() == []


def test_the_email_goes_out_with_the_configuration_set_and_unsubscribe_headers(ses: list[float]) -> None:
    email = planned("a@example.org", unsubscribe="https://example.com/unsubscribe?u=1")
    task_store.create_email_tasks([email])
    _invoke(email.task_id)
    (sent,) = _sent()
    assert sent.configuration_set == CONFIGURATION_SET
    assert sent.headers == {
        "List-Unsubscribe": "<https://example.com/unsubscribe?u=1>",
        "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
    }
    assert (sent.sender, sent.subject, sent.text, sent.html) == (
        "sales@example.com",
        "Hello a@example.org",
        "Hi",
        "<p>Hi</p>",
    )
    assert sent.reply_to == ("replies@example.com",)


def test_a_bounced_first_step_cancels_its_follow_ups(ses: list[float]) -> None:
    first, follow_up = planned("a@example.org", 1), planned("a@example.org", 2)
    task_store.create_email_tasks([first, follow_up])
    assert _invoke(first.task_id)["outcome"] == "Sent"
    # The first mail hard-bounced: SES puts the address on the account's suppression list.
    boto3.client("sesv2", region_name=REGION).put_suppressed_destination(
        EmailAddress="a@example.org", Reason="BOUNCE"
    )
    ses[0] = follow_up.send_at.timestamp()
    assert _invoke(follow_up.task_id)["outcome"] == "Skipped"
    skipped = _task(follow_up.task_id)
    assert skipped.status is Status.CANCELLED
    assert "suppression list (BOUNCE)" in (skipped.failure_reason or "")
    assert len(_sent()) == 1
    assert task_store.job_counts("spring")["Cancelled"] == 1


def test_a_follow_up_whose_earlier_step_did_not_go_out_is_cancelled(ses: list[float]) -> None:
    first, follow_up = planned("a@example.org", 1), planned("a@example.org", 2)
    task_store.create_email_tasks([first, follow_up])
    task_actions.cancel(_task(first.task_id), reason="operator")
    ses[0] = follow_up.send_at.timestamp()
    assert _invoke(follow_up.task_id)["outcome"] == "Skipped"
    reason = _task(follow_up.task_id).failure_reason or ""
    assert reason == "earlier_step_not_sent: step 1 is Cancelled (operator)"
    assert _sent() == []


def test_a_suppressed_first_step_fails_without_sending(ses: list[float]) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    boto3.client("sesv2", region_name=REGION).put_suppressed_destination(
        EmailAddress="a@example.org", Reason="COMPLAINT"
    )
    assert _invoke(email.task_id)["outcome"] == "Failed"
    assert "suppression list (COMPLAINT)" in (_task(email.task_id).failure_reason or "")
    assert _sent() == []


def test_an_email_later_than_the_grace_period_is_not_sent(ses: list[float]) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    ses[0] += 3601
    assert _invoke(email.task_id)["outcome"] == "Failed"
    assert (_task(email.task_id).failure_reason or "").startswith("too_late: 3601 s after send_at")
    assert _sent() == []


@pytest.mark.parametrize("event", [{}, {"task_id": ""}, {"task_id": "email#spring#unknown"}])
def test_an_event_naming_no_email_task_is_raised_for_the_dlq(ses: list[float], event: dict[str, Any]) -> None:
    with pytest.raises(UnreadableMessageError):
        email_worker.lambda_handler(event, FakeContext())


def test_a_scrape_task_id_is_not_sent_as_an_email(ses: list[float]) -> None:
    created = task_store.create_scrape_job("job-1", ["https://example.com"])
    with pytest.raises(UnreadableMessageError, match="not_an_email_task"):
        _invoke(created.created[0])
