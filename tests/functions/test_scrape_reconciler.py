"""Rules of the scrape reconciler: stranded tasks move on, live ones are left alone, nothing twice."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto.core.models import DEFAULT_ACCOUNT_ID
from moto.dynamodb.models import dynamodb_backends

from embedded_aws.dynamodb_size_limits import enforce_dynamodb_size_limits
from embedded_aws.dynamodb_transactions import make_transactions_atomic
from outreach import clients, clock, config, scraper, task_store
from outreach.reconcilers import scrape as reconciler
from outreach.task_model import Kind, Status, Task
from outreach_dev import function_env
from tests.support.aws import REGION, Resources, receive_all
from tests.support.events import sqs_event_from_queue
from tests.support.lambda_context import FakeContext
from tests.support.web_farm import Reply, WebFarm, running_farm

# The scrape reconciler's own settings, as Terraform sets them with the modules' defaults.
SETTINGS = function_env.settings("scrape_reconciler")
PENDING_AFTER = int(SETTINGS["RECONCILE_PENDING_AFTER_SECONDS"])
RUNNING_AFTER = int(SETTINGS["RECONCILE_RUNNING_AFTER_SECONDS"])
HOME = "<html><head><title>Acme</title></head><body><p>Acme GmbH</p></body></html>"


@pytest.fixture(autouse=True, scope="module")
def atomic_transactions() -> None:
    """DynamoDB's transaction semantics without moto's whole-table copy per transaction (which makes
    a transaction on a 10,000-row table take seconds); see embedded_aws/dynamodb_transactions.py."""
    make_transactions_atomic()
    enforce_dynamodb_size_limits()


@pytest.fixture
def moment(resources: Resources, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    for name, value in SETTINGS.items():
        monkeypatch.setenv(name, value)
    now = [1_800_000_000.0]
    clock.set_time_source(lambda: now[0])
    yield now
    clock.set_time_source(None)


@pytest.fixture
def site(resources: Resources, monkeypatch: pytest.MonkeyPatch) -> Iterator[WebFarm]:
    monkeypatch.setenv("SCRAPER_ALLOW_LOOPBACK", "1")
    monkeypatch.setenv("SCRAPER_CONNECT_TIMEOUT_SECONDS", "2")
    monkeypatch.setenv("SCRAPER_READ_TIMEOUT_SECONDS", "2")
    with running_farm() as server:
        server.html("/", HOME)
        yield server


def _run(max_actions: int | None = None) -> reconciler.RunReport:
    """One reconciler run; with ``max_actions`` its time runs out after that many tasks."""
    budget = [max_actions]

    def remaining() -> float:
        if budget[0] is None:
            return 60.0
        budget[0] -= 1
        return 1.0 if budget[0] >= 0 else 0.0

    return reconciler.reconcile(config.ReconcilerSettings.from_env(), remaining)


def _tasks(urls: list[str], job_id: str = "job-1") -> list[Task]:
    created = task_store.create_scrape_job(job_id, urls)
    tasks = [task_store.get_task(task_id) for task_id in created.created]
    assert all(tasks)
    return [t for t in tasks if t is not None]


def _get(task: Task) -> Task:
    current = task_store.get_task(task.task_id)
    assert current is not None
    return current


def _dispatch(resources: Resources, task: Task) -> None:
    """What the stream dispatcher sends for a task that became Pending."""
    boto3.client("sqs", region_name=REGION).send_message(
        QueueUrl=resources.queue_url, MessageBody=json.dumps({"task_id": task.task_id})
    )


def _deliver_next(resources: Resources) -> dict[str, Any]:
    event = sqs_event_from_queue(resources.queue_url)
    assert event["Records"], "no message to deliver"
    return dict(scraper.lambda_handler(event, FakeContext()))


def _results(resources: Resources) -> list[str]:
    listing = boto3.client("s3", region_name=REGION).list_objects_v2(Bucket=resources.bucket)
    return [obj["Key"] for obj in listing.get("Contents", [])]


def test_a_running_task_whose_message_went_to_the_dlq_is_requeued_and_then_finished_exactly_once(
    resources: Resources, site: WebFarm, moment: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a site that fails every fetch of three deliveries (3 attempts each), then answers
    monkeypatch.setenv("RETRY_SCHEDULE_SECONDS", "0")
    site.route("/", *[Reply(status=503)] * 9, Reply(body=HOME.encode()))
    (task,) = _tasks([site.url()])
    _dispatch(resources, task)
    for _ in range(3):
        assert _deliver_next(resources)["batchItemFailures"]
    # AND SQS moved the message to the DLQ on its fourth receive, leaving the task Running
    assert sqs_event_from_queue(resources.queue_url)["Records"] == []
    assert len(receive_all(resources.dlq_url)) == 1
    stranded = _get(task)
    assert stranded.status is Status.RUNNING and stranded.attempts == 3
    assert stranded.last_error is not None and stranded.last_error.startswith("http_503")
    # WHEN the reconciler runs once no message can come back for it
    moment[0] += RUNNING_AFTER + 1
    report = _run()
    # THEN it was re-queued (the stream dispatches it again), and the new message finishes it once
    assert report.actions["requeued"] == 1
    assert _get(task).status is Status.PENDING
    _dispatch(resources, task)
    assert _deliver_next(resources) == {"batchItemFailures": []}
    done = _get(task)
    assert done.status is Status.FINISHED and done.attempts == 4
    assert _results(resources) == [done.result_key]
    assert task_store.job_counts("job-1")["Finished"] == 1
    # AND later runs find nothing left to do
    moment[0] += RUNNING_AFTER + PENDING_AFTER
    assert _run().examined == 0


def test_a_task_with_no_attempts_left_becomes_failed_abandoned(
    resources: Resources, moment: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a task that used its last allowed attempt and whose worker released it with an error
    monkeypatch.setenv("MAX_TASK_ATTEMPTS", "1")
    (task,) = _tasks(["https://example.com"])
    held = task_store.claim(task, message_id="m-1", receive_count=3, lease_seconds=480)
    task_store.record_retry(held, error="timeout: https://example.com/")
    # WHEN the reconciler runs after the message can no longer come back
    moment[0] += RUNNING_AFTER + 1
    report = _run()
    # THEN the task is Failed as abandoned, with its attempts and last error, and counted once
    assert report.actions["abandoned"] == 1
    failed = _get(task)
    assert failed.status is Status.FAILED
    assert (
        failed.failure_reason == "abandoned: 1 of 1 attempts used; last error timeout: https://example.com/"
    )
    assert task_store.job_counts("job-1") == {
        "Pending": 0,
        "Running": 0,
        "Finished": 0,
        "Failed": 1,
        "Cancelled": 0,
    }


def test_a_pending_task_older_than_the_threshold_is_resent_once_per_run_and_finished_once(
    resources: Resources, site: WebFarm, moment: list[float]
) -> None:
    # GIVEN a Pending task whose stream record never became a message
    (task,) = _tasks([site.url()])
    # WHEN the reconciler runs after the threshold, twice in a row, and again after the threshold
    moment[0] += PENDING_AFTER + 1
    first = _run()
    second = _run()
    moment[0] += PENDING_AFTER + 1
    third = _run()
    # THEN each run past the threshold sent one message, the run right after sent none
    assert (first.actions["redispatched"], second.actions["redispatched"]) == (1, 0)
    assert second.examined == 0
    assert third.actions["redispatched"] == 1
    # AND of the two messages one finishes the task, the other finds it terminal
    assert _deliver_next(resources) == {"batchItemFailures": []}
    assert _deliver_next(resources) == {"batchItemFailures": []}
    done = _get(task)
    assert done.status is Status.FINISHED and done.attempts == 1
    assert _results(resources) == [done.result_key]


def test_a_task_sqs_will_still_redeliver_is_left_alone(resources: Resources, moment: list[float]) -> None:
    # GIVEN a Running task released after a retryable failure, whose message is hidden for its backoff,
    # and a Pending task the stream dispatched a moment ago
    running, pending = _tasks(["https://example.com", "https://example.org"])
    held = task_store.claim(running, message_id="m-1", receive_count=1, lease_seconds=480)
    task_store.record_retry(held, error="http_503: busy")
    before = {t.task_id: _get(t) for t in (running, pending)}
    # WHEN the reconciler runs while SQS can still redeliver the message (just inside the threshold)
    moment[0] += min(RUNNING_AFTER, PENDING_AFTER) - 1
    report = _run()
    # THEN it reads nothing and changes nothing
    assert report.examined == 0 and report.items_read == 0
    assert {t.task_id: _get(t) for t in (running, pending)} == before
    assert receive_all(resources.queue_url) == []


def test_two_concurrent_runs_produce_no_duplicate_sends(
    resources: Resources, moment: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN 30 stale Pending tasks and 5 stranded Running ones
    pending = _tasks([f"https://p{i}.example" for i in range(30)])
    running = _tasks([f"https://r{i}.example" for i in range(5)], job_id="job-2")
    for task in running:
        held = task_store.claim(task, message_id=f"m-{task.task_id}", receive_count=1, lease_seconds=480)
        task_store.record_retry(held, error="timeout: x")
    moment[0] += max(RUNNING_AFTER, PENDING_AFTER) + 1
    # AND two runs that both read the index before either writes (overlapping runs)
    snapshot = {
        status: list(task_store.open_tasks(Kind.SCRAPE, status, clock.iso(moment[0])))
        for status in (Status.PENDING, Status.RUNNING)
    }
    monkeypatch.setattr(
        task_store, "open_tasks", lambda kind, status, *args, **kwargs: iter(snapshot[status])
    )
    # WHEN both act on what they read
    first, second = _run(), _run()
    # THEN every stale task was handled by exactly one of them: one message per Pending task
    assert first.actions["redispatched"] + second.actions["redispatched"] == 30
    assert first.actions["requeued"] + second.actions["requeued"] == 5
    assert second.actions["left_alone"] == 35
    bodies = sorted(json.loads(m["Body"])["task_id"] for m in receive_all(resources.queue_url))
    assert bodies == sorted(t.task_id for t in pending)
    assert task_store.job_counts("job-2")["Pending"] == 5


def test_with_10000_terminal_tasks_and_20_stuck_ones_the_items_read_stay_within_20_plus_one_page(
    resources: Resources, moment: list[float]
) -> None:
    # GIVEN 10,000 terminal tasks (terminal rows carry no open_key), 20 stuck Pending ones and 50
    # Pending ones created just now
    # (written through moto's backend: the same write path without an HTTP round trip per row)
    backend = dynamodb_backends[DEFAULT_ACCOUNT_ID][REGION]
    for i in range(10_000):
        backend.put_item(
            resources.table,
            {
                "task_id": {"S": f"done-{i:05d}"},
                "kind": {"S": "scrape"},
                "job_id": {"S": "old-job"},
                "status": {"S": "Finished"},
                "attempts": {"N": "1"},
                "created_at": {"S": clock.iso()},
                "updated_at": {"S": clock.iso()},
            },
        )
    stuck = _tasks([f"https://stuck{i}.example" for i in range(20)])
    moment[0] += PENDING_AFTER + 1
    _tasks([f"https://fresh{i}.example" for i in range(50)], job_id="job-2")
    # WHEN the reconciler runs
    report = _run()
    # THEN it read the 20 stuck tasks and at most one page more, and re-sent exactly those
    page = config.ReconcilerSettings.from_env().page_size
    assert report.items_read <= 20 + page
    assert report.examined == 20 and report.actions["redispatched"] == 20
    sent = sorted(json.loads(m["Body"])["task_id"] for m in receive_all(resources.queue_url))
    assert sent == sorted(t.task_id for t in stuck)


def test_a_run_that_runs_out_of_time_stops_between_tasks_and_the_next_run_continues(
    resources: Resources, moment: list[float]
) -> None:
    # GIVEN 12 stale Pending tasks
    _tasks([f"https://s{i}.example" for i in range(12)])
    moment[0] += PENDING_AFTER + 1
    # WHEN the first run's time runs out after 5 tasks, and the next run has time
    first = _run(max_actions=5)
    second = _run()
    # THEN the first stopped after 5 whole actions, the second did the other 7, one message each
    assert first.stopped_early and first.actions["redispatched"] == 5
    assert not second.stopped_early and second.actions["redispatched"] == 7
    assert len(receive_all(resources.queue_url)) == 12


def test_the_handler_publishes_its_counts(
    resources: Resources, moment: list[float], capsys: pytest.CaptureFixture[str]
) -> None:
    _tasks(["https://example.com"])
    moment[0] += PENDING_AFTER + 1
    clients.reset()
    result = reconciler.lambda_handler({}, FakeContext(timeout_seconds=240))
    assert result["examined"] == 1 and result["actions"]["redispatched"] == 1
    emitted = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    assert emitted, "no metrics were published"
    assert emitted[-1]["TasksExamined"] == [1.0] and emitted[-1]["TasksRedispatched"] == [1.0]


def _row(task: Task) -> dict[str, Any]:
    return dict(
        boto3.client("dynamodb", region_name=REGION).get_item(
            TableName=config.tasks_table(), Key={"task_id": {"S": task.task_id}}, ConsistentRead=True
        )["Item"]
    )


def _forget_tenant(task: Task) -> None:
    """The row as written before rows named their tenant: no ``message_group``."""
    boto3.client("dynamodb", region_name=REGION).update_item(
        TableName=config.tasks_table(),
        Key={"task_id": {"S": task.task_id}},
        UpdateExpression="REMOVE message_group",
    )


def test_a_resent_message_carries_the_tenant_its_row_names_as_its_message_group(
    resources: Resources, moment: list[float]
) -> None:
    # GIVEN a Pending task of job-7 whose stream record never became a message; its row names one of
    # the tenants job-7 is spread over
    (task,) = _tasks(["https://example.com"], job_id="job-7")
    tenant = _row(task)["message_group"]["S"]
    assert tenant.startswith("job-7#")
    # WHEN the reconciler resends it
    moment[0] += PENDING_AFTER + 1
    assert _run().actions["redispatched"] == 1
    # THEN its message names that tenant as its group, as the dispatcher's would (SQS fair queues)
    (message,) = receive_all(resources.queue_url)
    assert message["Attributes"].get("MessageGroupId") == tenant


def test_a_resent_message_whose_row_names_no_tenant_carries_its_job_as_its_message_group(
    resources: Resources, moment: list[float]
) -> None:
    # GIVEN a stale Pending task of job-7 written before rows named their tenant
    (task,) = _tasks(["https://example.com"], job_id="job-7")
    _forget_tenant(task)
    # WHEN the reconciler resends it
    moment[0] += PENDING_AFTER + 1
    assert _run().actions["redispatched"] == 1
    # THEN its message names job-7 as its group
    (message,) = receive_all(resources.queue_url)
    assert message["Attributes"].get("MessageGroupId") == "job-7"


def test_a_requeued_task_keeps_its_tenant_and_a_row_that_named_none_gets_its_job(
    resources: Resources, moment: list[float]
) -> None:
    # GIVEN two stranded Running tasks of job-7, the second written before rows named their tenant
    named, unnamed = _tasks(["https://example.com", "https://example.org"], job_id="job-7")
    tenant = _row(named)["message_group"]["S"]
    _forget_tenant(unnamed)
    for task in (named, unnamed):
        held = task_store.claim(
            _get(task), message_id=f"m-{task.task_id}", receive_count=1, lease_seconds=480
        )
        task_store.record_retry(held, error="timeout: x")
    # WHEN the reconciler re-queues them
    moment[0] += RUNNING_AFTER + 1
    assert _run().actions["requeued"] == 2
    # THEN each Pending row names its tenant, the one the pipe's message group path reads
    assert _row(named)["message_group"] == {"S": tenant}
    assert _row(unnamed)["message_group"] == {"S": "job-7"}


def test_a_row_naming_a_tenant_of_another_job_is_failed_as_malformed_naming_the_field(
    resources: Resources, moment: list[float]
) -> None:
    # GIVEN a stale Pending task of job-7 whose row names a tenant of job-8
    (task,) = _tasks(["https://example.com"], job_id="job-7")
    boto3.client("dynamodb", region_name=REGION).update_item(
        TableName=config.tasks_table(),
        Key={"task_id": {"S": task.task_id}},
        UpdateExpression="SET message_group = :other",
        ExpressionAttributeValues={":other": {"S": "job-8#1"}},
    )
    # WHEN the reconciler runs
    moment[0] += PENDING_AFTER + 1
    report = _run()
    # THEN no message is sent and the row is failed, its reason naming the field
    assert report.malformed == 1 and receive_all(resources.queue_url) == []
    reason = _row(task)["failure_reason"]["S"]
    assert reason.startswith("malformed_task_row: ") and "message_group: not a tenant of its job" in reason
