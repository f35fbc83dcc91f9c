"""No log line carries a recipient's address or a phone number, only its hash; the task row keeps it.

The lines are read as Powertools writes them (the JSON its handler puts on stdout), not as log records,
so what is checked is exactly what CloudWatch Logs would receive.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from outreach import clients, clock, email_worker, task_store
from outreach.observability import logger
from outreach.personal_data import address_hash, phone_hash, redact_personal_data
from outreach.task_model import Status
from tests.support.aws import REGION, Resources
from tests.support.email import (
    CONFIGURATION_SET,
    FIRST_SEND,
    create_schedule_group,
    create_ses_resources,
    planned,
)
from tests.support.lambda_context import FakeContext

RECIPIENT = "Jane.Doe@Example.org"

LogLines = Callable[[], str]


@pytest.fixture
def log_output(monkeypatch: pytest.MonkeyPatch) -> LogLines:
    """Everything the shared Powertools logger writes from now on, as text."""
    stream = io.StringIO()
    monkeypatch.setattr(logger.registered_handler, "stream", stream)
    return stream.getvalue


@pytest.fixture
def ses(resources: Resources, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    create_ses_resources()
    create_schedule_group(monkeypatch)
    monkeypatch.setenv("EMAIL_CONFIGURATION_SET", CONFIGURATION_SET)
    clock.set_time_source(lambda: FIRST_SEND.timestamp())
    yield
    clock.set_time_source(None)


class _SesAnswering:
    """moto's SES, except that SendEmail answers with the error ``code`` and ``message``."""

    def __init__(self, code: str, message: str) -> None:
        self._client = boto3.client("sesv2", region_name=REGION)
        self._error = {"Error": {"Code": code, "Message": message}}

    def send_email(self, **_: Any) -> Any:
        raise ClientError(self._error, "SendEmail")  # type: ignore[arg-type]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def _suppressed(monkeypatch: pytest.MonkeyPatch) -> None:
    boto3.client("sesv2", region_name=REGION).put_suppressed_destination(
        EmailAddress=RECIPIENT, Reason="BOUNCE"
    )


def _rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    rejection = _SesAnswering(
        "MessageRejected",
        f"Email address is not verified. The following identities failed the check: {RECIPIENT}",
    )
    monkeypatch.setattr(clients, "sesv2", lambda: rejection)


def _throttled(monkeypatch: pytest.MonkeyPatch) -> None:
    throttle = _SesAnswering("TooManyRequestsException", f"Sending to {RECIPIENT} is throttled")
    monkeypatch.setattr(clients, "sesv2", lambda: throttle)


@pytest.mark.parametrize(
    ("arrange", "status"),
    [(_suppressed, Status.FAILED), (_rejected, Status.FAILED), (_throttled, Status.PENDING)],
    ids=["suppressed", "ses_rejection", "transient_error_quoting_the_address"],
)
def test_the_email_worker_logs_the_recipient_only_as_its_hash(
    ses: None,
    log_output: LogLines,
    monkeypatch: pytest.MonkeyPatch,
    arrange: Callable[[pytest.MonkeyPatch], None],
    status: Status,
) -> None:
    # GIVEN an email whose recipient's address ends up in the reason or the error of its outcome
    email = planned(RECIPIENT)
    task_store.create_email_tasks([email])
    arrange(monkeypatch)
    # WHEN the worker handles it (a transient error is raised for Lambda's retry, as in production)
    try:
        email_worker.lambda_handler({"task_id": email.task_id}, FakeContext(aws_request_id="r-1"))
    except ClientError:
        assert status is Status.PENDING
    # THEN no line it logged carries the address, in any case, and its hash is there to search for
    written = log_output()
    assert written, "the worker logged nothing"
    assert RECIPIENT.lower() not in written.lower()
    assert address_hash(RECIPIENT) in written
    # AND the task row keeps the address (the reason or error names it for the operator)
    task = task_store.get_task(email.task_id)
    assert task is not None and task.status is status
    assert RECIPIENT in (task.failure_reason or task.last_error or "")


def _no_answer(phone: str) -> None:
    raise ValueError(f"no answer from {RECIPIENT} or {phone}")


def test_every_field_of_a_log_line_carries_hashes_instead_of_addresses_and_phone_numbers(
    log_output: LogLines,
) -> None:
    # GIVEN an address and a phone number in the message, an appended key, an extra key (nested) and a
    # logged exception's text
    phone = "+49 (30) 583-920 41"
    logger.append_keys(contact=f"mailto:{RECIPIENT}")
    try:
        try:
            _no_answer(phone)
        except ValueError:
            logger.exception(
                f"failed for {RECIPIENT}", extra={"detail": {"found": [RECIPIENT, phone], "pages": 3}}
            )
    finally:
        logger.remove_keys(["contact"])
    # WHEN the line is read as written
    line = json.loads(log_output().splitlines()[-1])
    text = json.dumps(line, ensure_ascii=False)
    # THEN neither is in it anywhere, their hashes are where they were, and the rest is unchanged
    assert RECIPIENT.lower() not in text.lower() and "58392041" not in text.replace("-", "").replace(" ", "")
    assert line["message"] == f"failed for {address_hash(RECIPIENT)}"
    assert line["contact"] == f"mailto:{address_hash(RECIPIENT)}"
    assert line["detail"] == {"found": [address_hash(RECIPIENT), phone_hash(phone)], "pages": 3}
    assert line["exception_name"] == "ValueError"
    assert f"{address_hash(RECIPIENT)} or {phone_hash(phone)}" in line["exception"]


def test_a_phone_number_has_one_hash_however_its_digits_are_grouped() -> None:
    spellings = ["+49 30 58392041", "+49 (30) 583-920-41", "+49.30.583.920.41", "+493058392041"]
    assert {redact_personal_data(f"call {s} now") for s in spellings} == {
        f"call {phone_hash('+493058392041')} now"
    }


@pytest.mark.parametrize(
    "text",
    [
        "scrape#job-1#3f2a9c1b04de7781",
        "sequence_number 4421584500000000017450439091",
        "2027-03-02T09:30:00+00:00",
        "2026-12-01 10:15:49,428+0000",
        "http://203.0.113.9:8080/page/12345678",
        "visibility 5400 s after receive 3",
    ],
)
def test_ids_sequence_numbers_times_and_addresses_of_hosts_are_not_taken_for_phone_numbers(text: str) -> None:
    assert redact_personal_data(text) == text
