"""An email SES refuses because sending is paused waits for the resume, until its grace period ends.

The reputation guard (``outreach.sending_guard``) or an operator (``outreach sending pause``) turns the
configuration set's sending off; SES then answers every SendEmail with ``SendingPausedException``
(https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_SendEmail.html#API_SendEmail_Errors; that
it is this error for a configuration set's pause, not only the account's, is unconfirmed: SES v2's
page names no other). The refusal proves nothing went out, and the pause lasts until a person resumes
it, so the email worker neither retries at once nor gives up:

- the email is deferred (``deferral.defer``) to its first allowed minute at least the recheck
  interval (``EMAIL_PAUSED_RECHECK_SECONDS``, modules/email's ``paused_recheck_seconds``) from now,
  inside its window, its later steps with it, and checked again then;
- its grace period counts from the time it was due when the pause first held it (the task's
  ``deferred_from`` while its deferrals are for the pause, ``task_store.defer_email``): an email whose
  next try would fall after that grace period ends ``Failed`` as ``too_late``, the reason saying that
  sending was paused.

A first step's first-contact slot, taken before the refused send, is taken again at the moment of its
next try (``contacts.take_first_contact``): the gap to another campaign's first contact counts from
when the email really goes out.
"""

from __future__ import annotations

from datetime import datetime

from outreach import clock, config, deferral, task_store
from outreach.email_task import parse_utc_iso, utc_iso
from outreach.errors import PermanentEmailError, SendDeferredError
from outreach.task_model import Task

# The deferral reason's cause (``task_store.deferral_cause``) for an email held by a paused sending.
SENDING_PAUSED = "sending_paused"

# SES's answer to a send through a paused configuration set or account.
SENDING_PAUSED_ERROR = "SendingPausedException"


def due_time(task: Task) -> datetime:
    """When ``task`` was due as the pause first held it: ``deferred_from`` while its deferrals are for
    the pause, else its ``send_at``."""
    fields = task.email
    assert fields is not None
    if fields.deferred_from and task_store.deferral_cause(fields.deferred_reason) == SENDING_PAUSED:
        return parse_utc_iso(fields.deferred_from)
    return fields.send_time


def held(task: Task, detail: str) -> SendDeferredError:
    """The deferral of a claimed ``task`` SES refused as paused (``detail``: SES's message); raises
    ``PermanentEmailError`` (``too_late``) when its next try would be past its grace period."""
    due = due_time(task)
    grace = config.email_send_grace_seconds()
    not_before = clock.now() + config.email_paused_recheck_seconds()
    next_try = deferral.new_send_time(task, not_before)
    if (next_try - due).total_seconds() > grace:
        raise PermanentEmailError(
            f"too_late: due at {utc_iso(due)}, its next try at {utc_iso(next_try)} would be past the "
            f"{grace} s grace period; {SENDING_PAUSED}: {detail}"
        )
    return SendDeferredError(f"{SENDING_PAUSED}: {detail}", not_before)
