"""Rules of the task store: conditional transitions, exact job counts, idempotent job creation."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import boto3
import pytest

from outreach import clients, clock, errors, task_store
from outreach.email_task import PlannedEmail
from outreach.errors import ItemTooLargeError
from outreach.item_size import item_size
from outreach.task_ids import normalise_url, scrape_task_id
from outreach.task_model import ALLOWED_TRANSITIONS, TERMINAL, Kind, Status, Task
from outreach_operator import task_actions
from tests.support.aws import REGION, Resources
from tests.support.email import planned

URLS = ["https://example.com", "http://shop.example.org/", "Example.NET"]


@pytest.fixture
def frozen_clock() -> Iterator[list[float]]:
    moment = [1_800_000_000.0]
    clock.set_time_source(lambda: moment[0])
    yield moment
    clock.set_time_source(None)


def _only_task(job_id: str = "job-1") -> Task:
    created = task_store.create_scrape_job(job_id, ["https://example.com"])
    task = task_store.get_task(created.created[0])
    assert task is not None
    return task


def test_creating_the_same_job_twice_creates_nothing_twice(resources: Resources) -> None:
    # GIVEN a job created once
    first = task_store.create_scrape_job("job-1", URLS)
    # WHEN it is created again, with the same sites spelled differently
    second = task_store.create_scrape_job(
        "job-1", ["https://EXAMPLE.com/", "http://shop.example.org", "example.net"]
    )
    # THEN the second run creates nothing and the counts stay at one task per site
    assert len(first.created) == 3
    assert second.created == []
    assert sorted(second.existing) == sorted(first.created)
    assert task_store.job_counts("job-1")["Pending"] == 3


def test_job_creation_writes_pending_scrape_tasks_with_all_fields(resources: Resources) -> None:
    created = task_store.create_scrape_job("job-1", ["example.com"])
    task = task_store.get_task(created.created[0])
    assert task is not None
    assert task.task_id == scrape_task_id("job-1", normalise_url("example.com"))
    assert (task.kind, task.job_id, task.status, task.attempts) == ("scrape", "job-1", Status.PENDING, 0)
    assert task.url == "https://example.com/"
    assert task.created_at == task.updated_at


def test_a_scrape_job_s_rows_name_their_tenants_counted_from_the_job_s_size(resources: Resources) -> None:
    # GIVEN a job of 34 sites (30 tenants), and a chunk of a job of 3,000 sites (one tenant)
    small = task_store.create_scrape_job("small", [f"https://s{i}.example" for i in range(34)])
    chunk = task_store.create_scrape_job("big", [f"https://b{i}.example" for i in range(5)], job_sites=3000)
    # THEN each row names its tenant (outreach.scrape_tenants): the small job's over its 30 tenants,
    # every task of the big job in the job itself
    small_tenants = {t.task_id: t.message_group for t in map(task_store.get_task, small.created) if t}
    assert len(small_tenants) == 34
    assert all(
        g and g.split("#")[0] == "small" and 0 <= int(g.split("#")[1]) < 30 for g in small_tenants.values()
    )
    assert len(set(small_tenants.values())) >= 15
    big_tenants = [t.message_group for t in map(task_store.get_task, chunk.created) if t]
    assert big_tenants == ["big"] * 5


def test_job_creation_rejects_invalid_urls_and_keeps_the_rest(resources: Resources) -> None:
    created = task_store.create_scrape_job(
        "job-1", ["ftp://example.com", "", "https://ok.example", "http://a b"]
    )
    assert len(created.created) == 1
    assert [url for url, _ in created.rejected] == ["ftp://example.com", "", "http://a b"]


def test_job_creation_rejects_an_invalid_job_id(resources: Resources) -> None:
    with pytest.raises(ValueError, match="job id"):
        task_store.create_scrape_job("bad job/id", URLS)


def test_a_large_job_is_written_in_transactions_of_at_most_100_actions(resources: Resources) -> None:
    urls = [f"https://site-{n}.example" for n in range(250)]
    created = task_store.create_scrape_job("big", urls)
    assert len(created.created) == 250
    assert task_store.job_counts("big") == {
        "Pending": 250,
        "Running": 0,
        "Finished": 0,
        "Failed": 0,
        "Cancelled": 0,
    }


def test_two_deliveries_of_one_pending_task_make_exactly_one_claim(resources: Resources) -> None:
    task = _only_task()
    first = task_store.claim(task, message_id="m-1", receive_count=1, lease_seconds=600)
    with pytest.raises(errors.TransitionRejectedError):
        task_store.claim(task, message_id="m-2", receive_count=1, lease_seconds=600)
    assert first.status is Status.RUNNING
    assert first.attempts == 1
    assert task_store.job_counts("job-1")["Running"] == 1


def test_a_live_claim_cannot_be_taken_by_another_message(
    resources: Resources, frozen_clock: list[float]
) -> None:
    task = task_store.claim(_only_task(), message_id="m-1", receive_count=1, lease_seconds=600)
    frozen_clock[0] += 599
    with pytest.raises(errors.TransitionRejectedError):
        task_store.claim(task, message_id="m-2", receive_count=1, lease_seconds=600)


def test_an_expired_claim_can_be_taken_over_after_a_worker_crash(
    resources: Resources, frozen_clock: list[float]
) -> None:
    # GIVEN a worker that claimed the task and died
    crashed = task_store.claim(_only_task(), message_id="m-1", receive_count=1, lease_seconds=600)
    # WHEN its lease has expired
    frozen_clock[0] += 601
    taken = task_store.claim(crashed, message_id="m-2", receive_count=1, lease_seconds=600)
    # THEN another delivery holds it, Running is counted once and the crashed worker cannot finish
    assert taken.lease is not None and taken.lease.message_id == "m-2"
    assert taken.attempts == 2
    assert task_store.job_counts("job-1")["Running"] == 1
    with pytest.raises(errors.TransitionRejectedError):
        task_store.finish(crashed, result_key="k", summary={})


def test_the_next_receive_of_the_same_message_reclaims_a_released_task(resources: Resources) -> None:
    held = task_store.claim(_only_task(), message_id="m-1", receive_count=1, lease_seconds=600)
    task_store.record_retry(held, error="http_503: https://example.com/")
    again = task_store.claim(held, message_id="m-1", receive_count=2, lease_seconds=600)
    assert again.status is Status.RUNNING and again.attempts == 2


def test_a_released_claim_records_the_last_error(resources: Resources) -> None:
    held = task_store.claim(_only_task(), message_id="m-1", receive_count=1, lease_seconds=600)
    task_store.record_retry(held, error="timeout: " + "x" * 2000)
    released = task_store.get_task(held.task_id)
    assert released is not None and released.status is Status.RUNNING
    assert released.last_error is not None and released.last_error.startswith("timeout: ")
    assert len(released.last_error) == 500


def test_the_same_message_redelivered_can_reclaim_even_if_release_failed(resources: Resources) -> None:
    held = task_store.claim(_only_task(), message_id="m-1", receive_count=1, lease_seconds=600)
    again = task_store.claim(held, message_id="m-1", receive_count=2, lease_seconds=600)
    assert again.lease is not None and again.lease.receive_count == 2


def test_only_the_claim_holder_can_finish(resources: Resources, frozen_clock: list[float]) -> None:
    held = task_store.claim(_only_task(), message_id="m-1", receive_count=1, lease_seconds=600)
    impostor = Task(**{**held.__dict__, "lease": None})
    with pytest.raises(errors.TransitionRejectedError):
        task_store.finish(impostor, result_key="k", summary={})
    task_store.finish(held, result_key="results/job-1/x.json", summary={"title": "Example"})
    done = task_store.get_task(held.task_id)
    assert done is not None and done.status is Status.FINISHED and done.result_key == "results/job-1/x.json"
    assert done.lease is None


@pytest.mark.parametrize("terminal", ["finish", "fail", "cancel"])
def test_terminal_states_are_never_left_by_a_retry(resources: Resources, terminal: str) -> None:
    # GIVEN a task that reached a terminal state
    held = task_store.claim(_only_task(), message_id="m-1", receive_count=1, lease_seconds=0)
    if terminal == "finish":
        task_store.finish(held, result_key="k", summary={})
    elif terminal == "fail":
        task_store.fail(held, reason="dns_not_found")
    else:
        task_actions.cancel(held)
    stale = held
    current = task_store.get_task(held.task_id)
    assert current is not None and current.is_terminal
    # WHEN any retry tries to move it, with the state it read before or after
    for task in (stale, current):
        for move in (
            lambda t: task_store.claim(t, message_id="m-1", receive_count=9, lease_seconds=600),
            lambda t: task_store.finish(t, result_key="k2", summary={}),
            lambda t: task_store.fail(t, reason="late"),
            task_store.requeue_stuck,
            lambda t: task_store.fail_after_attempts(t, max_attempts=1),
            task_store.mark_redispatched,
            task_actions.cancel,
        ):
            with pytest.raises(errors.TransitionRejectedError):
                move(task)
    # THEN it stays where it is and the counts say so
    after = task_store.get_task(held.task_id)
    assert after is not None and after.status == current.status
    counts = task_store.job_counts("job-1")
    assert counts[current.status.value] == 1
    assert sum(counts.values()) == 1


def test_no_transition_leaves_a_terminal_status() -> None:
    for status in TERMINAL:
        assert ALLOWED_TRANSITIONS[status] == frozenset()


def test_only_open_tasks_are_in_the_open_tasks_index(resources: Resources) -> None:
    created = task_store.create_scrape_job("job-1", URLS)
    held = task_store.claim(
        task_store.get_task(created.created[0]) or _only_task(),
        message_id="m",
        receive_count=1,
        lease_seconds=60,
    )
    task_store.finish(held, result_key="k", summary={})
    later = clock.iso(clock.now() + 60)
    pending = list(task_store.open_tasks(Kind.SCRAPE, Status.PENDING, later))
    running = list(task_store.open_tasks(Kind.SCRAPE, Status.RUNNING, later))
    assert sorted(t.task_id for t in pending) == sorted(created.created[1:])
    assert running == []


def test_a_reconciler_requeue_moves_an_expired_running_task_back_to_pending(
    resources: Resources, frozen_clock: list[float]
) -> None:
    held = task_store.claim(_only_task(), message_id="m-1", receive_count=1, lease_seconds=60)
    with pytest.raises(errors.TransitionRejectedError):
        task_store.requeue_stuck(held)
    frozen_clock[0] += 61
    task_store.requeue_stuck(held)
    again = task_store.get_task(held.task_id)
    assert again is not None and again.status is Status.PENDING and again.lease is None
    assert task_store.job_counts("job-1") == {
        "Pending": 1,
        "Running": 0,
        "Finished": 0,
        "Failed": 0,
        "Cancelled": 0,
    }


def test_a_requeue_is_refused_when_the_task_changed_since_it_was_read(
    resources: Resources, frozen_clock: list[float]
) -> None:
    # GIVEN a reconciler that read a Running task whose lease expired
    held = task_store.claim(_only_task(), message_id="m-1", receive_count=1, lease_seconds=60)
    frozen_clock[0] += 61
    # WHEN the message's next receive claims it before the reconciler writes
    task_store.claim(held, message_id="m-1", receive_count=2, lease_seconds=600)
    # THEN the reconciler's requeue and abandon, made from the old read, change nothing
    with pytest.raises(errors.TransitionRejectedError):
        task_store.requeue_stuck(held)
    with pytest.raises(errors.TransitionRejectedError):
        task_store.fail_after_attempts(held, max_attempts=1)
    current = task_store.get_task(held.task_id)
    assert current is not None and current.status is Status.RUNNING and current.attempts == 2


def test_a_pending_task_is_marked_for_redispatch_once_per_read(
    resources: Resources, frozen_clock: list[float]
) -> None:
    task = _only_task()
    frozen_clock[0] += 10
    task_store.mark_redispatched(task)
    with pytest.raises(errors.TransitionRejectedError):
        task_store.mark_redispatched(task)
    marked = task_store.get_task(task.task_id)
    assert marked is not None and marked.status is Status.PENDING and marked.updated_at > task.updated_at
    assert task_store.job_counts("job-1")["Pending"] == 1


def test_an_abandoned_task_fails_with_its_attempts_and_last_error(
    resources: Resources, frozen_clock: list[float]
) -> None:
    held = task_store.claim(_only_task(), message_id="m-1", receive_count=1, lease_seconds=60)
    task_store.record_retry(held, error="http_503: down")
    released = task_store.get_task(held.task_id)
    assert released is not None
    task_store.fail_after_attempts(released, max_attempts=1)
    failed = task_store.get_task(held.task_id)
    assert failed is not None and failed.status is Status.FAILED
    assert failed.failure_reason == "abandoned: 1 of 1 attempts used; last error http_503: down"
    assert task_store.job_counts("job-1")["Failed"] == 1


# ---- sizes: DynamoDB's item and transaction limits ------------------------------------------------


def _email_with_text(recipient: str, text: str) -> PlannedEmail:
    email = planned(recipient)
    return replace(email, message=replace(email.message, text=text))


@pytest.fixture
def transactions(resources: Resources) -> list[list[dict[str, Any]]]:
    """The TransactItems of every TransactWriteItems the task store sends, as it sends them."""
    sent: list[list[dict[str, Any]]] = []

    def record(params: dict[str, Any], **_: Any) -> None:
        sent.append(list(params["TransactItems"]))

    clients.dynamodb().meta.events.register("provide-client-params.dynamodb.TransactWriteItems", record)
    return sent


def _put_bytes(actions: list[dict[str, Any]]) -> int:
    return sum(item_size(action["Put"]["Item"]) for action in actions if "Put" in action)


def test_an_item_is_sized_as_dynamodb_counts_names_and_values() -> None:
    # Strings and names in UTF-8 bytes; a number 1 byte per two digits plus 1 (counted high: plus 2);
    # a map 3 bytes, plus its entries' names and values, plus 1 byte per entry; a list likewise.
    assert item_size({"name": {"S": "Bücher"}}) == 4 + 7
    assert item_size({"n": {"N": "12345"}}) == 1 + 3 + 2
    assert item_size({"ok": {"BOOL": True}, "no": {"NULL": True}, "b": {"B": b"\x00\x01\x02"}}) == 3 + 3 + 4
    assert item_size({"m": {"M": {"to": {"S": "a@b.example"}, "x": {"L": [{"S": "ab"}]}}}}) == (
        1 + 3 + (2 + 11 + 1) + (1 + (3 + 2 + 1) + 1)
    )


def test_the_size_of_an_email_row_is_the_size_of_the_row_written(resources: Resources) -> None:
    email = _email_with_text("a@example.org", "Grüße\n" * 1000)
    expected = task_store.email_row_size(email)
    task_store.create_email_tasks([email])
    written = boto3.client("dynamodb", region_name=REGION).get_item(
        TableName=resources.table, Key={"task_id": {"S": email.task_id}}
    )["Item"]
    assert expected == item_size(written)
    assert expected > 7000


def test_emails_of_45_kb_are_written_in_transactions_under_4_mb_of_at_most_100_actions(
    transactions: list[list[dict[str, Any]]],
) -> None:
    emails = [_email_with_text(f"r{n}@example.org", "x" * 45_000) for n in range(200)]
    created = task_store.create_email_tasks(emails)
    assert len(created.created) == 200
    assert sum(len(actions) - sum("Update" in a for a in actions) for actions in transactions) == 200
    assert all(len(actions) <= 100 for actions in transactions)
    assert max(_put_bytes(actions) for actions in transactions) <= 4 * 1024 * 1024 - 256 * 1024
    assert task_store.job_counts("spring")["Pending"] == 200


def test_a_row_over_the_item_limit_is_refused_naming_it_before_anything_is_written(
    resources: Resources, transactions: list[list[dict[str, Any]]]
) -> None:
    small = [_email_with_text(f"r{n}@example.org", "hello") for n in range(3)]
    large = _email_with_text("big@example.org", "x" * 410_000)
    with pytest.raises(ItemTooLargeError) as refused:
        task_store.create_email_tasks([*small, large])
    assert refused.value.key == large.task_id
    assert refused.value.size == task_store.email_row_size(large) > 400 * 1024
    assert str(refused.value).startswith(f"{large.task_id}: the item would be {refused.value.size:,} bytes")
    assert transactions == []
    assert task_store.job_counts("spring")["Pending"] == 0


def test_a_row_of_max_row_bytes_is_written_and_one_byte_more_is_refused(resources: Resources) -> None:
    assert task_store.MAX_ROW_BYTES == 400 * 1024 - task_store.ROW_GROWTH_BYTES
    one_x = task_store.email_row_size(_email_with_text("edge@example.org", "x"))
    fits = _email_with_text("edge@example.org", "x" * (1 + task_store.MAX_ROW_BYTES - one_x))
    over = _email_with_text("edge@example.org", "x" * (2 + task_store.MAX_ROW_BYTES - one_x))
    assert (task_store.email_row_size(fits), task_store.email_row_size(over)) == (
        task_store.MAX_ROW_BYTES,
        task_store.MAX_ROW_BYTES + 1,
    )
    with pytest.raises(ItemTooLargeError):
        task_store.create_email_tasks([over])
    assert task_store.create_email_tasks([fits]).created == [fits.task_id]
