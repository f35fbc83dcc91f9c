"""Rules of a job's failure counters: a task that fails counts under its reason group in the
transaction that moves it, the first task to fail for a reason stays its group's example, and a task
an operator requeues out of Failed leaves its group in the same transaction."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from outreach import clock, task_store
from outreach.errors import TransitionRejectedError
from outreach.task_ids import normalise_url, scrape_task_id
from outreach.task_model import Status, Task
from outreach_operator import task_actions
from tests.support.aws import Resources

JOB = "failing"


@pytest.fixture
def ticking() -> Iterator[list[float]]:
    """A clock one second later at each reading, so every failure has its own time."""
    now = [1_800_000_000.0]

    def tick() -> float:
        now[0] += 1.0
        return now[0]

    clock.set_time_source(tick)
    yield now
    clock.set_time_source(None)


def _job(sites: int) -> list[str]:
    """A scrape job of ``sites`` sites; its task ids, in the order of the sites."""
    urls = [f"https://site-{n}.example" for n in range(sites)]
    task_store.create_scrape_job(JOB, urls)
    return [scrape_task_id(JOB, normalise_url(url)) for url in urls]


def _task(task_id: str) -> Task:
    task = task_store.get_task(task_id)
    assert task is not None
    return task


def _fail(task_id: str, reason: str) -> None:
    claimed = task_store.claim(_task(task_id), message_id=f"m-{task_id}", receive_count=1, lease_seconds=300)
    task_store.fail(claimed, reason=reason)


def test_a_failed_scrape_task_counts_under_its_reason_group_and_the_first_to_fail_stays_the_example(
    resources: Resources, ticking: list[float]
) -> None:
    ids = _job(12)
    # Failed in an order that is not the ids' order, over several counter shards.
    dns = sorted(ids[:6], reverse=True)
    assert len({task_store.counter_shard(task_id) for task_id in dns}) > 1
    for task_id in dns:
        _fail(task_id, "dns_not_found: no address for the host")
    _fail(ids[6], "http_404: https://site-6.example/")
    _fail(ids[7], "Weird Text From Somewhere: with a colon")
    task_actions.cancel(_task(ids[8]), reason="customer withdrew")

    counted = task_store.failure_counts(JOB)
    assert counted.groups == {"dns_not_found": 6, "http_404": 1, "other": 1}
    assert counted.uncounted == 0
    assert counted.examples["dns_not_found"][0] == dns[0]
    assert set(counted.examples["dns_not_found"]) <= set(dns)
    assert counted.examples["http_404"] == [ids[6]] and counted.examples["other"] == [ids[7]]
    assert task_store.job_counts(JOB)[Status.FAILED.value] == 8


def test_a_failed_task_requeued_by_an_operator_leaves_its_reason_group(
    resources: Resources, ticking: list[float]
) -> None:
    ids = _job(3)
    _fail(ids[0], "timeout: read timed out")
    _fail(ids[1], "timeout: read timed out")
    first = _task(ids[0])
    task_actions.operator_requeue(first, by="ops", reason="the site is back")

    counted = task_store.failure_counts(JOB)
    assert counted.groups == {"timeout": 1}
    assert counted.uncounted == 0
    assert task_store.job_counts(JOB)[Status.FAILED.value] == 1

    # A requeue refused for its condition (the row moved since it was read) moves no counter either.
    with pytest.raises(TransitionRejectedError):
        task_actions.operator_requeue(first, by="ops", reason="read before the first requeue")
    assert task_store.failure_counts(JOB).groups == {"timeout": 1}

    # Failed again for another reason, it counts there.
    _fail(ids[0], "not_html: image/png")
    assert task_store.failure_counts(JOB).groups == {"timeout": 1, "not_html": 1}
