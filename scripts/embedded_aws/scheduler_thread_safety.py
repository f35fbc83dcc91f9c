"""Thread-safe EventBridge Scheduler for the embedded AWS: a listing never races a create or delete.

moto keeps each schedule group's schedules in a plain dict and ListSchedules iterates it while the
threaded server answers other requests. A CreateSchedule or DeleteSchedule that lands during the
listing changes the dict's size and the listing fails with ``RuntimeError: dictionary changed size
during iteration``, which the server answers as a 500. The schedule runner lists every tick while a
campaign creates and deletes a schedule per email, so on a busy machine the 500s are frequent, and a
caller's SDK retries them until it gives up.

AWS serves ListSchedules concurrently with writes and documents no such error: its errors are
InternalServerException, ResourceNotFoundException, ThrottlingException and ValidationException
(https://docs.aws.amazon.com/scheduler/latest/APIReference/API_ListSchedules.html, Errors). Here every
backend call that reads or writes the groups' schedules holds one lock, so a listing sees the
schedules either before or after a concurrent write, never half of one.
"""

from __future__ import annotations

import threading

from embedded_aws.locked_methods import hold_lock

_LOCK = threading.RLock()
# Every SchedulerBackend method that reads or writes ``schedule_groups`` or a group's ``schedules``.
_GUARDED = (
    "create_schedule",
    "get_schedule",
    "delete_schedule",
    "update_schedule",
    "list_schedules",
    "create_schedule_group",
    "get_schedule_group",
    "list_schedule_groups",
    "delete_schedule_group",
)


def make_scheduler_thread_safe() -> None:
    """Serialise moto's Scheduler backend calls that touch schedules or groups (idempotent)."""
    from moto.scheduler.models import EventBridgeSchedulerBackend

    hold_lock(EventBridgeSchedulerBackend, _GUARDED, _LOCK)
