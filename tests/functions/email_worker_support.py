"""What the email worker's tests share: SES ready at the first send time, one invocation, a task read."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from outreach import clock, email_worker, task_store
from outreach.task_model import Task
from tests.support.aws import Resources
from tests.support.email import CONFIGURATION_SET, FIRST_SEND, create_ses_resources
from tests.support.lambda_context import FakeContext


@pytest.fixture
def ses(resources: Resources, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """SES ready to send, and the clock at the first step's send time (``ses[0]`` moves it)."""
    create_ses_resources()
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
