"""The ``open-tasks`` index key written over shards: a task keeps its shard, readers see every shard."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import boto3
import pytest

from embedded_aws.dynamodb_partition_throttling import partition_throttling
from outreach import clock, task_store
from outreach.task_model import Kind, Status, Task, open_key, shard_of
from outreach.task_store import creation
from tests.support.aws import REGION, Resources

SHARDS = 8


@pytest.fixture
def moment(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    monkeypatch.setenv("OPEN_INDEX_SHARDS", str(SHARDS))
    now = [1_800_000_000.0]
    clock.set_time_source(lambda: now[0])
    yield now
    clock.set_time_source(None)


def _stored_key(table: str, task_id: str) -> str | None:
    item = boto3.client("dynamodb", region_name=REGION).get_item(
        TableName=table, Key={"task_id": {"S": task_id}}, ConsistentRead=True
    )["Item"]
    return item["open_key"]["S"] if "open_key" in item else None


def test_a_job_is_written_over_the_shards_and_a_task_keeps_its_shard_when_claimed(
    resources: Resources, moment: list[float]
) -> None:
    created = task_store.create_scrape_job("job-1", [f"https://site{i}.example" for i in range(40)])
    keys = {task_id: _stored_key(resources.table, task_id) for task_id in created.created}
    assert len(set(keys.values())) == SHARDS
    for task_id, key in keys.items():
        assert key == open_key(Kind.SCRAPE.value, Status.PENDING, shard_of(task_id, SHARDS))
    task_id = next(t for t in created.created if shard_of(t, SHARDS) != 0)
    task = task_store.get_task(task_id)
    assert task is not None
    task_store.claim(task, message_id="m-1", receive_count=1, lease_seconds=600)
    assert _stored_key(resources.table, task_id) == f"scrape#Running#{shard_of(task_id, SHARDS)}"


def test_the_open_tasks_of_every_shard_are_read_oldest_first(
    resources: Resources, moment: list[float]
) -> None:
    created: list[str] = []
    for batch in range(5):
        created += task_store.create_scrape_job(
            f"job-{batch}", [f"https://b{batch}-site{i}.example" for i in range(6)]
        ).created
        moment[0] += 10
    cost = task_store.IndexRead()
    found = list(task_store.open_index_rows(Kind.SCRAPE, Status.PENDING, page_size=4, cost=cost))
    assert sorted(str(row["task_id"]) for row in found) == sorted(created)
    stamps = [str(row["updated_at"]) for row in found]
    assert stamps == sorted(stamps)
    assert cost.items == len(created)
    assert cost.pages >= SHARDS


def test_a_row_written_before_the_index_was_sharded_is_read_as_shard_zero_and_keeps_its_key(
    resources: Resources, moment: list[float]
) -> None:
    # GIVEN a Pending row under the unsharded key every row had before
    (task_id,) = task_store.create_scrape_job("job-old", ["https://old.example"]).created
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    dynamodb.update_item(
        TableName=resources.table,
        Key={"task_id": {"S": task_id}},
        UpdateExpression="SET open_key = :key",
        ExpressionAttributeValues={":key": {"S": "scrape#Pending"}},
    )
    # THEN the readers find it, and its claim keeps it in shard 0
    moment[0] += 1
    found = list(task_store.open_tasks(Kind.SCRAPE, Status.PENDING, clock.iso()))
    assert [task.task_id for task in found] == [task_id]
    assert isinstance(found[0], Task)
    task_store.claim(found[0], message_id="m-1", receive_count=1, lease_seconds=600)
    assert _stored_key(resources.table, task_id) == "scrape#Running"
    moment[0] += 1
    assert [t.task_id for t in task_store.open_tasks(Kind.SCRAPE, Status.RUNNING, clock.iso())] == [task_id]


def test_job_creation_throttled_on_a_hot_index_key_waits_and_creates_every_task_once(
    resources: Resources, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN one unsharded key whose partition takes 100 write units a second (one transaction of 90
    # tasks), on a clock that moves only while the creation pauses
    monkeypatch.setenv("OPEN_INDEX_SHARDS", "1")
    now = [0.0]
    monkeypatch.setattr(
        creation, "time", SimpleNamespace(sleep=lambda seconds: now.__setitem__(0, now[0] + seconds))
    )
    urls = [f"https://site{i}.example" for i in range(600)]
    with partition_throttling(limit=100, now=lambda: now[0]) as throttle:
        # WHEN a job of 600 tasks is created
        created = task_store.create_scrape_job("job-hot", urls)
    # THEN its transactions were cancelled for throttling, sent again after pauses, and every task
    # exists once
    assert throttle.throttled_requests > 0
    assert created.throttling.retries == throttle.throttled_requests
    assert created.throttling.paused_seconds == pytest.approx(now[0]) and now[0] >= 5.0
    assert len(created.created) == len(urls) and not created.existing
    assert task_store.job_counts("job-hot")["Pending"] == len(urls)
