"""Rules of a campaign's step counters: an email task counts under its step and status, and once
Failed or Cancelled under its reason group, in the transaction that moves it; free text never becomes
a counter's name, and an operator's requeue takes the task out of its reason group again."""

from __future__ import annotations

from outreach import task_store
from outreach.task_model import Task
from outreach_operator import task_actions
from tests.support.aws import Resources
from tests.support.email import planned


def _task(task_id: str) -> Task:
    task = task_store.get_task(task_id)
    assert task is not None
    return task


def test_an_email_counts_under_its_step_status_and_reason_group_as_it_moves(resources: Resources) -> None:
    emails = [planned("anna@example.org", step) for step in (1, 2)] + [planned("bert@example.org")]
    task_store.create_email_tasks(emails)
    counted = task_store.step_counts("spring")
    assert (counted.statuses[1]["Pending"], counted.statuses[2]["Pending"], counted.uncounted) == (2, 1, 0)

    task_store.cancel_for_stop(_task(emails[0].task_id), reason="contact_stopped: blocked (test)")
    task_actions.cancel(_task(emails[2].task_id), reason="free text: by ops@example.org")
    counted = task_store.step_counts("spring")
    assert counted.statuses[1] == {"Pending": 0, "Cancelled": 2}
    assert counted.reasons[1] == {("Cancelled", "contact_stopped"): 1, ("Cancelled", "other"): 1}

    task_actions.operator_requeue(_task(emails[0].task_id), by="ops", reason="stop lifted")
    counted = task_store.step_counts("spring")
    assert counted.statuses[1] == {"Pending": 1, "Cancelled": 1}
    assert counted.reasons[1] == {("Cancelled", "contact_stopped"): 0, ("Cancelled", "other"): 1}
    assert sum(task_store.job_counts("spring").values()) == 3
