"""The scraper's per-message classification under at-least-once delivery."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from outreach import clients, clock, config, scraper, task_store
from outreach.task_model import Status, Task
from outreach_dev import function_env
from tests.support.aws import REGION, Resources, receive_all
from tests.support.email import planned
from tests.support.events import sqs_event_from_queue
from tests.support.lambda_context import FakeContext
from tests.support.web_farm import Reply, WebFarm, running_farm

HOME = """<html lang="de"><head><title>Muster GmbH</title>
<meta name="description" content="Maschinenbau aus Ulm"></head>
<body><a href="/kontakt">Kontakt</a><p>info@muster.example</p></body></html>"""
CONTACT = (
    "<html><body><a href='mailto:vertrieb@muster.example'>Vertrieb</a> Tel: +49 731 123456</body></html>"
)


@pytest.fixture
def site(resources: Resources, monkeypatch: pytest.MonkeyPatch) -> Iterator[WebFarm]:
    monkeypatch.setenv("SCRAPER_ALLOW_LOOPBACK", "1")
    monkeypatch.setenv("SCRAPER_CONNECT_TIMEOUT_SECONDS", "2")
    monkeypatch.setenv("SCRAPER_READ_TIMEOUT_SECONDS", "2")
    with running_farm() as server:
        server.html("/", HOME)
        server.html("/kontakt", CONTACT)
        yield server


def _task_for(url: str, job_id: str = "job-1") -> Task:
    created = task_store.create_scrape_job(job_id, [url])
    task = task_store.get_task((created.created or created.existing)[0])
    assert task is not None
    return task


def _enqueue(resources: Resources, body: str) -> None:
    boto3.client("sqs", region_name=REGION).send_message(QueueUrl=resources.queue_url, MessageBody=body)


def _deliver(resources: Resources, context: FakeContext, body: str) -> dict[str, Any]:
    _enqueue(resources, body)
    return dict(scraper.lambda_handler(sqs_event_from_queue(resources.queue_url), context))


def _result_objects(resources: Resources) -> list[str]:
    listing = boto3.client("s3", region_name=REGION).list_objects_v2(Bucket=resources.bucket)
    return [obj["Key"] for obj in listing.get("Contents", [])]


def test_a_pending_task_is_scraped_stored_in_s3_and_finished(
    resources: Resources, site: WebFarm, lambda_context: FakeContext
) -> None:
    task = _task_for(site.url())
    response = _deliver(resources, lambda_context, json.dumps({"task_id": task.task_id}))
    done = task_store.get_task(task.task_id)
    assert response == {"batchItemFailures": []}
    assert done is not None and done.status is Status.FINISHED
    assert done.result_key is not None and _result_objects(resources) == [done.result_key]
    body = boto3.client("s3", region_name=REGION).get_object(Bucket=resources.bucket, Key=done.result_key)[
        "Body"
    ]
    document = json.loads(body.read())
    assert document["title"] == "Muster GmbH"
    assert {"info@muster.example", "vertrieb@muster.example"} <= {e["address"] for e in document["emails"]}


def test_duplicate_delivery_of_a_finished_task_does_no_fetch_and_no_write(
    resources: Resources, site: WebFarm, lambda_context: FakeContext
) -> None:
    # GIVEN a task that was finished by its first delivery
    task = _task_for(site.url())
    _deliver(resources, lambda_context, json.dumps({"task_id": task.task_id}))
    finished = task_store.get_task(task.task_id)
    hits_before, objects_before = site.total_hits(), _result_objects(resources)
    # WHEN the same task is delivered twice more
    for _ in range(2):
        response = _deliver(resources, lambda_context, json.dumps({"task_id": task.task_id}))
        assert response == {"batchItemFailures": []}
    # THEN no page was fetched, nothing was written, and the row is unchanged
    assert site.total_hits() == hits_before
    assert _result_objects(resources) == objects_before
    assert task_store.get_task(task.task_id) == finished


def test_job_counts_are_exact_after_duplicate_deliveries(
    resources: Resources, site: WebFarm, lambda_context: FakeContext
) -> None:
    task = _task_for(site.url())
    for _ in range(3):
        _deliver(resources, lambda_context, json.dumps({"task_id": task.task_id}))
    assert task_store.job_counts("job-1") == {
        "Pending": 0,
        "Running": 0,
        "Finished": 1,
        "Failed": 0,
        "Cancelled": 0,
    }


def test_a_delivery_of_a_task_held_by_another_live_delivery_is_acknowledged_without_work(
    resources: Resources, site: WebFarm, lambda_context: FakeContext
) -> None:
    # GIVEN another delivery has claimed the task and is still working on it
    task = _task_for(site.url())
    task_store.claim(task, message_id="other-delivery", receive_count=1, lease_seconds=600)
    # WHEN a second message for the task arrives
    response = _deliver(resources, lambda_context, json.dumps({"task_id": task.task_id}))
    # THEN it is acknowledged and nothing is fetched; the holder keeps the task
    assert response == {"batchItemFailures": []}
    assert site.total_hits() == 0
    held = task_store.get_task(task.task_id)
    assert held is not None and held.lease is not None and held.lease.message_id == "other-delivery"


def test_fatal_error_marks_the_task_failed_and_is_not_reported(
    resources: Resources, site: WebFarm, lambda_context: FakeContext
) -> None:
    # GIVEN a site whose home page is gone
    site.route("/", Reply(status=404, body=b"gone"))
    task = _task_for(site.url())
    # WHEN it is delivered
    response = _deliver(resources, lambda_context, json.dumps({"task_id": task.task_id}))
    # THEN the task failed with the reason, no retry is asked for and the message is gone
    failed = task_store.get_task(task.task_id)
    assert response == {"batchItemFailures": []}
    assert failed is not None and failed.status is Status.FAILED
    assert failed.failure_reason is not None and "404" in failed.failure_reason
    assert site.hits["/"] == 1
    assert task_store.job_counts("job-1")["Failed"] == 1


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("this is not json", "body_not_json"),
        ('{"job": "x"}', "missing_task_id"),
        ('["task"]', "body_not_object"),
        ('{"task_id": "scrape#nobody#0"}', "unknown_task"),
    ],
)
def test_an_unreadable_message_goes_to_the_dlq_with_its_reason_and_is_not_reported(
    resources: Resources, lambda_context: FakeContext, body: str, reason: str
) -> None:
    response = _deliver(resources, lambda_context, body)
    parked = receive_all(resources.dlq_url)
    assert response == {"batchItemFailures": []}
    assert [m["Body"] for m in parked] == [body]
    assert parked[0]["MessageAttributes"]["reason"]["StringValue"] == reason


def test_an_email_task_on_the_scrape_queue_is_unreadable(
    resources: Resources, lambda_context: FakeContext
) -> None:
    email = planned("a@example.org")
    task_store.create_email_tasks([email])
    response = _deliver(resources, lambda_context, json.dumps({"task_id": email.task_id}))
    assert response == {"batchItemFailures": []}
    assert (
        receive_all(resources.dlq_url)[0]["MessageAttributes"]["reason"]["StringValue"] == "not_a_scrape_task"
    )


class _VisibilitySpy:
    def __init__(self) -> None:
        self.real = clients.sqs()
        self.visibility: list[int] = []

    def change_message_visibility(self, **kwargs: Any) -> Any:
        self.visibility.append(kwargs["VisibilityTimeout"])
        return self.real.change_message_visibility(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def test_unknown_error_is_reported_the_claim_released_and_visibility_set_to_the_backoff(
    resources: Resources, site: WebFarm, lambda_context: FakeContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a scrape that fails in a way nobody classified
    def explode(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("parser crashed")

    monkeypatch.setattr(scraper, "scrape_site", explode)
    spy = _VisibilitySpy()
    monkeypatch.setattr(clients, "sqs", lambda: spy)
    task = _task_for(site.url())
    # WHEN it is delivered
    _enqueue(resources, json.dumps({"task_id": task.task_id}))
    event = sqs_event_from_queue(resources.queue_url)
    response = scraper.lambda_handler(event, lambda_context)
    # THEN the message is reported, waits the first backoff step, and the claim can be retaken
    assert response == {"batchItemFailures": [{"itemIdentifier": event["Records"][0]["messageId"]}]}
    assert spy.visibility == [30]
    held = task_store.get_task(task.task_id)
    assert held is not None and held.status is Status.RUNNING and not held.lease_is_live(clock.now())


def _visibilities_over_receives(
    resources: Resources, lambda_context: FakeContext, spy: _VisibilitySpy, receives: int
) -> list[int]:
    for receive_count in range(1, receives + 1):
        event = sqs_event_from_queue(resources.queue_url)
        event["Records"][0]["attributes"]["ApproximateReceiveCount"] = str(receive_count)
        assert scraper.lambda_handler(event, lambda_context)["batchItemFailures"]
        spy.real.change_message_visibility(
            QueueUrl=resources.queue_url,
            ReceiptHandle=event["Records"][0]["receiptHandle"],
            VisibilityTimeout=0,
        )
    return spy.visibility[-receives:]


def test_the_retry_schedule_gives_each_receive_its_delay_and_repeats_the_last(
    resources: Resources, site: WebFarm, lambda_context: FakeContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETRY_SCHEDULE_SECONDS", "60,900")
    site.route("/", Reply(status=503, body=b"busy"))
    spy = _VisibilitySpy()
    monkeypatch.setattr(clients, "sqs", lambda: spy)
    task = _task_for(site.url())
    _enqueue(resources, json.dumps({"task_id": task.task_id}))
    assert _visibilities_over_receives(resources, lambda_context, spy, 3) == [60, 900, 900]


def test_the_default_schedule_retries_within_five_minutes_and_spans_an_hour() -> None:
    # modules/scrape-pipeline's defaults: the schedule and the queue's receive count.
    schedule = config.RetrySchedule.parse(function_env.settings("scraper")["RETRY_SCHEDULE_SECONDS"])
    max_receive_count = int(function_env.scrape_queue_attributes()["maxReceiveCount"])
    # the first retry comes back within 5 minutes ...
    assert schedule.for_receive(1) <= 300
    # ... and the attempts one message gets (receives 1..3) are spread over at least 60 minutes
    assert sum(schedule.for_receive(n) for n in range(1, max_receive_count)) >= 3600


def test_a_sites_retry_after_is_honoured_within_the_schedules_bounds(
    resources: Resources, site: WebFarm, lambda_context: FakeContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a schedule of 60 s then 900 s, and a site that asks for 600 s, then for a day
    monkeypatch.setenv("RETRY_SCHEDULE_SECONDS", "60,900")
    site.route(
        "/",
        Reply(status=503, headers={"Retry-After": "600"}),
        Reply(status=429, headers={"Retry-After": "86400"}),
    )
    spy = _VisibilitySpy()
    monkeypatch.setattr(clients, "sqs", lambda: spy)
    task = _task_for(site.url())
    _enqueue(resources, json.dumps({"task_id": task.task_id}))
    # WHEN two receives fail
    # THEN the first waits what the site asked (above the schedule's 60 s), the second is capped at 900 s
    assert _visibilities_over_receives(resources, lambda_context, spy, 2) == [600, 900]


def test_a_retryable_failure_records_its_reason_on_the_task(
    resources: Resources, site: WebFarm, lambda_context: FakeContext
) -> None:
    site.route("/", Reply(status=503, body=b"busy"))
    task = _task_for(site.url())
    _deliver(resources, lambda_context, json.dumps({"task_id": task.task_id}))
    released = task_store.get_task(task.task_id)
    assert released is not None and released.last_error is not None
    assert released.last_error.startswith("http_503: ")


def test_a_persistently_failing_site_is_fetched_at_most_three_times_per_delivery_and_retried(
    resources: Resources, site: WebFarm, lambda_context: FakeContext
) -> None:
    site.route("/", Reply(status=503, body=b"busy"))
    task = _task_for(site.url())
    response = _deliver(resources, lambda_context, json.dumps({"task_id": task.task_id}))
    assert len(response["batchItemFailures"]) == 1
    assert site.hits["/"] == 3
    still = task_store.get_task(task.task_id)
    assert still is not None and still.status is Status.RUNNING


def test_a_redelivery_after_a_retryable_failure_claims_again_and_finishes(
    resources: Resources, site: WebFarm, lambda_context: FakeContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a site that fails three times (one delivery's attempts) and then answers
    monkeypatch.setenv("RETRY_SCHEDULE_SECONDS", "0")
    site.route("/", Reply(status=503), Reply(status=503), Reply(status=503), Reply(body=HOME.encode()))
    task = _task_for(site.url())
    _enqueue(resources, json.dumps({"task_id": task.task_id}))
    # WHEN the first delivery fails and SQS delivers the message again
    first = scraper.lambda_handler(sqs_event_from_queue(resources.queue_url), lambda_context)
    second = scraper.lambda_handler(sqs_event_from_queue(resources.queue_url), lambda_context)
    # THEN the redelivery reclaims the task and finishes it, with one task counted once
    assert len(first["batchItemFailures"]) == 1
    assert second == {"batchItemFailures": []}
    done = task_store.get_task(task.task_id)
    assert done is not None and done.status is Status.FINISHED and done.attempts == 2
    assert task_store.job_counts("job-1")["Finished"] == 1


class _ThrottledDynamoDb:
    """Passes calls through, except that the named operations are throttled."""

    def __init__(self, throttled: set[str]) -> None:
        self.real = clients.dynamodb()
        self.throttled = throttled

    def __getattr__(self, name: str) -> Any:
        if name in self.throttled:

            def throttle(**kwargs: Any) -> Any:
                raise ClientError(
                    {"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "slow down"}},
                    name,
                )

            return throttle
        return getattr(self.real, name)


@pytest.mark.parametrize("operation", ["get_item", "transact_write_items"])
def test_dynamodb_throttling_is_retried_with_the_backoff_and_never_fails_the_task(
    resources: Resources,
    site: WebFarm,
    lambda_context: FakeContext,
    monkeypatch: pytest.MonkeyPatch,
    operation: str,
) -> None:
    # GIVEN a tasks table that throttles reads or transitions
    task = _task_for(site.url())
    spy = _VisibilitySpy()
    real_dynamodb = clients.dynamodb
    throttled = _ThrottledDynamoDb({operation})
    monkeypatch.setattr(clients, "sqs", lambda: spy)
    monkeypatch.setattr(clients, "dynamodb", lambda: throttled)
    # WHEN the task is delivered
    _enqueue(resources, json.dumps({"task_id": task.task_id}))
    event = sqs_event_from_queue(resources.queue_url)
    response = scraper.lambda_handler(event, lambda_context)
    # THEN the message is reported for a retry after the backoff, and the task is not failed
    monkeypatch.setattr(clients, "dynamodb", real_dynamodb)
    assert response == {"batchItemFailures": [{"itemIdentifier": event["Records"][0]["messageId"]}]}
    assert spy.visibility == [30]
    after = task_store.get_task(task.task_id)
    assert after is not None and after.status is Status.PENDING
