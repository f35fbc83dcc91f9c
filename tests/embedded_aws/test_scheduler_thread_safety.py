"""ListSchedules in the embedded AWS never fails because a schedule was created while it listed.

AWS: https://docs.aws.amazon.com/scheduler/latest/APIReference/API_ListSchedules.html (Errors: no
error for a concurrent write).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from embedded_aws.scheduler_thread_safety import make_scheduler_thread_safe

ACCOUNT = "123456789012"
REGION = "eu-west-3"
TARGET = {"Arn": f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:sender", "RoleArn": "arn:aws:iam::1:role/s"}


class _GatedSchedules(dict[str, Any]):
    """A group's schedules whose listing pauses after its first schedule until ``gate`` opens (or 1 s)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.gate = threading.Event()
        self.paused = threading.Event()

    def values(self) -> Iterator[Any]:  # type: ignore[override]
        for value in super().values():
            yield value
            self.paused.set()
            self.gate.wait(1.0)


def _create(backend: Any, name: str) -> None:
    backend.create_schedule(
        description=None,
        end_date=None,
        flexible_time_window={"Mode": "OFF"},
        group_name=None,
        kms_key_arn=None,
        name=name,
        schedule_expression="at(2030-01-01T09:00:00)",
        schedule_expression_timezone=None,
        start_date=None,
        state="ENABLED",
        target=TARGET,
        action_after_completion=None,
    )


def test_a_schedule_created_during_a_listing_waits_for_it_and_the_listing_succeeds() -> None:
    from moto.scheduler.models import scheduler_backends

    make_scheduler_thread_safe()
    backend = scheduler_backends[ACCOUNT][REGION]
    group = backend.schedule_groups["default"]
    # GIVEN a group of two schedules whose listing pauses after the first
    group.schedules = _GatedSchedules()
    _create(backend, "send-1")
    _create(backend, "send-2")
    listed: list[Any] = []
    errors: list[BaseException] = []

    def listing() -> None:
        try:
            # moto's paginated listing answers (schedules, next token)
            schedules, _ = backend.list_schedules(group_names=None, state=None)
            listed.extend(schedules)
        except RuntimeError as exc:  # outcome: the race this patch removes, kept for the assertion
            errors.append(exc)

    lister = threading.Thread(target=listing)
    lister.start()
    assert group.schedules.paused.wait(10), "the listing never started"

    # WHEN a schedule is created while the listing is paused inside the group
    creator = threading.Thread(target=_create, args=(backend, "send-3"))
    creator.start()
    creator.join(0.2)
    group.schedules.gate.set()
    lister.join(10)
    creator.join(10)

    # THEN the listing saw the group before the create, and the create happened after it
    assert errors == []
    assert sorted(s.name for s in listed) == ["send-1", "send-2"]
    assert sorted(group.schedules) == ["send-1", "send-2", "send-3"]
    backend.reset()
