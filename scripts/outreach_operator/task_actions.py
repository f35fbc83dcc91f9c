"""The operator's actions on tasks: cancel (one, or many in few transactions), and requeue out of a
terminal status with who and why.

Each applies its rule of the task store's table (``task_store.RULES``), so its write holds the same
conditions as every other status change; what the operator may never do to an email task is checked
here first, with a reason for the person who asked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from outreach import task_store
from outreach.errors import OperatorRefusedError, TransitionRejectedError
from outreach.task_model import Kind, Status, Task

_REASON_CHARS = 1000


def requeue_refusal(task: Task) -> str | None:
    """Why ``operator_requeue`` never takes this task (``None`` when it may).

    An email may go out at most once, so an email task goes back to Pending only from Failed or
    Cancelled with a failure reason that proves nothing was sent: never while Running (a worker may be
    sending it), never once Finished (it was sent), never with an SES message id, and never with a
    reason starting ``delivery_unknown`` or with no reason at all. Scrape tasks may always be
    requeued (a scrape done twice is only work).
    """
    if task.kind != Kind.EMAIL.value:
        return None
    if task.status is Status.RUNNING:
        return (
            "an email task that is Running may be being sent right now; it is never requeued, "
            "--force or not (the email reconciler settles it as delivery_unknown once its lease runs out)"
        )
    if task.status is Status.FINISHED:
        return "this email was sent (Finished); requeuing it would send it a second time"
    if task.email is not None and task.email.ses_message_id:
        return f"SES accepted this email (message id {task.email.ses_message_id}); it would go out twice"
    reason = (task.failure_reason or "").strip()
    if task.status in (Status.FAILED, Status.CANCELLED) and not reason:
        return f"{task.status.value} without a failure reason: nothing proves the email was not sent"
    if reason.startswith(task_store.MAY_HAVE_BEEN_SENT):
        return (
            "delivery_unknown: the worker may have sent this email before it stopped; "
            "requeuing it could send it a second time"
        )
    return None


def operator_requeue(task: Task, *, by: str, reason: str) -> None:
    """An operator's override: a task back to Pending, recorded with who and why.

    This is the one way out of a terminal status, and it is not a transition in ALLOWED_TRANSITIONS:
    the pipeline itself never makes it. The write is conditional on the row being exactly as read
    (status, kind and ``updated_at``), so a task that moved meanwhile is rejected, not overwritten. The
    result, summary, failure reason, lease and retention time go; the stream then dispatches the task
    again as a scrape task that became Pending. An email task ``requeue_refusal`` names a reason for
    raises ``OperatorRefusedError``; its rule is part of the write's condition too (no SES message id, a
    failure reason not starting ``delivery_unknown``), so no row that may have been sent is requeued.
    """
    if task.status is Status.PENDING:
        raise TransitionRejectedError(task.task_id, "operator requeue")
    why = requeue_refusal(task)
    if why is not None:
        raise OperatorRefusedError(task.task_id, "operator requeue", why)
    override = {
        "override_by": by[:200],
        "override_reason": reason[:_REASON_CHARS],
        "override_from": task.status.value,
    }
    task_store.apply(task_store.RULES["operator requeue"], task, override)


def operator_cancel(task: Task, *, reason: str) -> None:
    """An operator's cancel of an open task (``job cancel``): Pending or Running -> Cancelled.

    An email task that is Running is never cancelled (``OperatorRefusedError``): its worker may be sending
    it, and a Cancelled row would then refuse the worker's Finished and stand for an email that went
    out. The write is conditional on the status and kind that were read, so an email claimed since it
    was read as Pending is left to its worker (``TransitionRejectedError``).
    """
    if task.kind == Kind.EMAIL.value and task.status is Status.RUNNING:
        raise OperatorRefusedError(
            task.task_id, "operator cancel", "an email task that is Running may be being sent right now"
        )
    task_store.apply(task_store.RULES["operator cancel"], task, {"failure_reason": reason[:_REASON_CHARS]})


def cancel(task: Task, *, reason: str = "cancelled") -> None:
    """Pending or Running -> Cancelled (an operator's decision); terminal tasks stay as they are."""
    task_store.apply(task_store.RULES["cancel"], task, {"failure_reason": reason[:_REASON_CHARS]})


def cancel_many(
    tasks: Sequence[Task | task_store.OpenEmail],
    *,
    reason: str,
    on_written: Callable[[Sequence[str]], None] | None = None,
) -> task_store.BatchOutcome:
    """``cancel`` of many tasks in few transactions (``task_store.apply_batched``), each still only if
    it is in the status it was read in; ``on_written`` gets the ids of each transaction written."""
    why = {"failure_reason": reason[:_REASON_CHARS]}
    return task_store.apply_batched(task_store.RULES["cancel"], tasks, lambda _: why, on_written=on_written)
