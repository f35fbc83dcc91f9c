"""CreateSchedule's ClientToken for the embedded AWS: a retried create gets the first answer back.

moto reads no ClientToken: a CreateSchedule sent again after a slow answer finds the schedule the
first one made and fails with ``ConflictException: Schedule ... already exists.`` The AWS provider
retries exactly so when the emulator is slow (a busy machine), and ``terraform apply`` of a root then
fails on a schedule it did create.

On AWS the token makes the request idempotent: "Unique, case-sensitive identifier you provide to
ensure the idempotency of the request. If you do not specify a client token, EventBridge Scheduler
uses a randomly generated token for the request to ensure idempotency."
(https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateSchedule.html, ClientToken).
botocore's model marks it ``idempotencyToken``, so an SDK fills it once per call and sends the same
token on each retry of that call, and a new one on the next call.

Here a successful create remembers its token and its request on the schedule itself, so per account,
Region, group and name, and forgotten when the schedule is deleted or the emulator reset. A
CreateSchedule with the same name, the same token and the same request returns the first response
(its ScheduleArn) without error and changes nothing; another token gets moto's ConflictException as
before. The same token with a different request also gets the ConflictException: the page does not
say what AWS does then (other AWS APIs refuse a reused token with other parameters), so that is our
choice, unconfirmed.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable
from typing import Any

_REMEMBERED = "_outreach_client_token"
_PATCHED = "__outreach_client_token__"
# A create and its retry can arrive together; the lock makes the second see what the first made.
_LOCK = threading.Lock()


def _request(body: str | bytes | None, name: str) -> str:
    """What makes two CreateSchedule requests the same: the name and every parameter but the token."""
    parameters = json.loads(body or "{}")
    parameters.pop("ClientToken", None)
    return json.dumps({"Name": name, **parameters}, sort_keys=True)


def _existing(backend: Any, group_name: str, name: str) -> Any:
    group = backend.schedule_groups.get(group_name)
    return None if group is None else group.schedules.get(name)


def _idempotent(create_schedule: Callable[..., str]) -> Callable[..., str]:
    @functools.wraps(create_schedule)
    def create(self: Any) -> str:
        token = self._get_param("ClientToken")
        if not token:
            return create_schedule(self)
        name = self.uri.split("?")[0].split("/")[-1]
        group_name = self._get_param("GroupName") or "default"
        remembered = (token, _request(self.body, name))
        with _LOCK:
            existing = _existing(self.scheduler_backend, group_name, name)
            if existing is not None and getattr(existing, _REMEMBERED, None) == remembered:
                return json.dumps({"ScheduleArn": existing.arn})
            response = create_schedule(self)
            created = _existing(self.scheduler_backend, group_name, name)
            if created is not None:
                setattr(created, _REMEMBERED, remembered)
            return response

    setattr(create, _PATCHED, True)
    return create


def honour_schedule_client_tokens() -> None:
    """Make moto's CreateSchedule idempotent for a repeated ClientToken (idempotent)."""
    from moto.scheduler.responses import EventBridgeSchedulerResponse

    if getattr(EventBridgeSchedulerResponse.create_schedule, _PATCHED, False):
        return
    EventBridgeSchedulerResponse.create_schedule = _idempotent(  # type: ignore[method-assign]
        EventBridgeSchedulerResponse.create_schedule
    )
