"""What the email worker's tests share: SES ready at the first send time, one invocation, a task read,
and the SendEmail requests the worker made."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from outreach import clients, clock, email_worker, task_store
from outreach.task_model import Task
from tests.support.aws import REGION, Resources
from tests.support.email import CONFIGURATION_SET, FIRST_SEND, create_schedule_group, create_ses_resources
from tests.support.lambda_context import FakeContext


@pytest.fixture
def ses(resources: Resources, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """SES ready to send, and the clock at the first step's send time (``ses[0]`` moves it)."""
    create_ses_resources()
    create_schedule_group(monkeypatch)
    monkeypatch.setenv("EMAIL_CONFIGURATION_SET", CONFIGURATION_SET)
    now = [FIRST_SEND.timestamp()]
    clock.set_time_source(lambda: now[0])
    yield now
    clock.set_time_source(None)


def invoke(task_id: str, request_id: str = "request-1") -> dict[str, str]:
    """One invocation of the worker for ``task_id``, as its schedule makes it."""
    result: dict[str, str] = email_worker.lambda_handler(
        {"task_id": task_id}, FakeContext(aws_request_id=request_id)
    )
    return result


def stored_task(task_id: str) -> Task:
    task = task_store.get_task(task_id)
    assert task is not None
    return task


class RecordingSes:
    """The worker's SES client (moto's), recording every SendEmail request it is given, in order."""

    def __init__(self) -> None:
        self._client = boto3.client("sesv2", region_name=REGION)
        self.requests: list[dict[str, Any]] = []

    def send_email(self, **request: Any) -> Any:
        self.requests.append(request)
        return self._client.send_email(**request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


@pytest.fixture
def recording_ses(ses: list[float], monkeypatch: pytest.MonkeyPatch) -> RecordingSes:
    """SES as ``ses`` makes it ready, each SendEmail request the worker makes kept in ``requests``."""
    recorder = RecordingSes()
    monkeypatch.setattr(clients, "sesv2", lambda: recorder)
    return recorder
