"""The dispatcher sends one message per scrape task that became Pending and stops at the first failure."""

from __future__ import annotations

import json
from typing import Any

import pytest

from outreach import clients, dispatcher, errors
from tests.support.aws import Resources, receive_all
from tests.support.events import load_event
from tests.support.lambda_context import FakeContext


def _sent_task_ids(resources: Resources) -> list[str]:
    return [json.loads(m["Body"])["task_id"] for m in receive_all(resources.queue_url)]


def test_stream_batch_201_202_203_with_202_failing_returns_202_and_does_not_process_203(
    resources: Resources, lambda_context: FakeContext
) -> None:
    # GIVEN records 201, 202, 203 where 202 cannot be parsed
    event = load_event("stream_201_202_203_with_unparseable_202.json")
    # WHEN the dispatcher handles the batch
    response = dispatcher.lambda_handler(event, lambda_context)
    # THEN it reports 202, has sent 201, and has not sent 203
    assert response == {"batchItemFailures": [{"itemIdentifier": "202"}]}
    assert _sent_task_ids(resources) == ["task-a"]


def test_each_insert_of_a_pending_scrape_task_becomes_one_message(
    resources: Resources, lambda_context: FakeContext
) -> None:
    response = dispatcher.lambda_handler(load_event("stream_201_202_203_inserts.json"), lambda_context)
    assert response == {"batchItemFailures": []}
    assert sorted(_sent_task_ids(resources)) == ["task-a", "task-b", "task-c"]


def test_message_body_is_exactly_the_task_id(resources: Resources, lambda_context: FakeContext) -> None:
    dispatcher.lambda_handler(load_event("stream_201_202_203_inserts.json"), lambda_context)
    bodies = [json.loads(m["Body"]) for m in receive_all(resources.queue_url)]
    assert all(set(body) == {"task_id"} for body in bodies)


def test_modify_that_stays_pending_remove_non_pending_insert_and_email_tasks_dispatch_nothing(
    resources: Resources, lambda_context: FakeContext
) -> None:
    response = dispatcher.lambda_handler(
        load_event("stream_changes_that_dispatch_nothing.json"), lambda_context
    )
    assert response == {"batchItemFailures": []}
    assert _sent_task_ids(resources) == []


def test_a_running_task_moved_back_to_pending_is_dispatched_again(
    resources: Resources, lambda_context: FakeContext
) -> None:
    dispatcher.lambda_handler(load_event("stream_requeue_running_to_pending.json"), lambda_context)
    assert _sent_task_ids(resources) == ["requeued"]


def test_more_than_ten_dispatches_are_sent_in_batches_of_at_most_ten(
    resources: Resources, lambda_context: FakeContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    template = load_event("stream_201_202_203_inserts.json")["Records"][0]
    records = []
    for n in range(25):
        record = json.loads(json.dumps(template))
        record["dynamodb"]["SequenceNumber"] = str(1000 + n)
        record["dynamodb"]["Keys"]["task_id"]["S"] = f"t-{n}"
        record["dynamodb"]["NewImage"]["task_id"]["S"] = f"t-{n}"
        records.append(record)
    real = clients.sqs()
    sizes: list[int] = []

    class Recording:
        def send_message_batch(self, **kwargs: Any) -> Any:
            sizes.append(len(kwargs["Entries"]))
            return real.send_message_batch(**kwargs)

    monkeypatch.setattr(clients, "sqs", lambda: Recording())
    assert dispatcher.lambda_handler({"Records": records}, lambda_context) == {"batchItemFailures": []}
    assert sizes == [10, 10, 5]
    assert len(_sent_task_ids(resources)) == 25


class _PartialFailureSqs:
    """Accepts every entry except those for the given task ids, which fail with a server error."""

    def __init__(self, failing: set[str]) -> None:
        self.failing = failing
        self.accepted: list[str] = []
        self.calls = 0

    def send_message_batch(self, QueueUrl: str, Entries: list[dict[str, str]]) -> dict[str, Any]:
        self.calls += 1
        ok, failed = [], []
        for entry in Entries:
            task_id = json.loads(entry["MessageBody"])["task_id"]
            if task_id in self.failing:
                failed.append({"Id": entry["Id"], "SenderFault": False, "Code": "InternalError"})
            else:
                self.accepted.append(task_id)
                ok.append({"Id": entry["Id"], "MessageId": "m", "MD5OfMessageBody": ""})
        return {"Successful": ok, "Failed": failed}


def test_partial_send_failure_returns_the_first_unsent_record_after_resending(
    resources: Resources, lambda_context: FakeContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN SQS keeps rejecting the message for record 202
    fake = _PartialFailureSqs({"task-b"})
    monkeypatch.setattr(clients, "sqs", lambda: fake)
    # WHEN the batch is dispatched
    response = dispatcher.lambda_handler(load_event("stream_201_202_203_inserts.json"), lambda_context)
    # THEN the rejected entry was resent before giving up, and 202 goes back to the stream's retry
    assert response == {"batchItemFailures": [{"itemIdentifier": "202"}]}
    assert fake.calls == 3
    assert fake.accepted == ["task-a", "task-c"]


def test_a_transient_partial_failure_that_succeeds_on_resend_reports_nothing(
    resources: Resources, lambda_context: FakeContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _PartialFailureSqs({"task-b"})
    original = fake.send_message_batch

    def heal_after_first(QueueUrl: str, Entries: list[dict[str, str]]) -> dict[str, Any]:
        if fake.calls >= 1:
            fake.failing.clear()
        return original(QueueUrl, Entries)

    monkeypatch.setattr(fake, "send_message_batch", heal_after_first)
    monkeypatch.setattr(clients, "sqs", lambda: fake)
    response = dispatcher.lambda_handler(load_event("stream_201_202_203_inserts.json"), lambda_context)
    assert response == {"batchItemFailures": []}
    assert sorted(fake.accepted) == ["task-a", "task-b", "task-c"]


def test_sqs_unavailable_returns_the_first_record_of_the_unsent_chunk(
    resources: Resources, lambda_context: FakeContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRAPE_QUEUE_URL", resources.queue_url + "-missing")
    response = dispatcher.lambda_handler(load_event("stream_201_202_203_inserts.json"), lambda_context)
    assert response == {"batchItemFailures": [{"itemIdentifier": "201"}]}


def test_a_record_without_sequence_number_fails_the_whole_batch_for_bisect(
    resources: Resources, lambda_context: FakeContext
) -> None:
    event = load_event("stream_201_202_203_inserts.json")
    del event["Records"][1]["dynamodb"]["SequenceNumber"]
    with pytest.raises(errors.StreamBatchError):
        dispatcher.lambda_handler(event, lambda_context)


def test_an_unparseable_record_is_logged_with_its_sequence_number(
    resources: Resources, lambda_context: FakeContext, caplog: pytest.LogCaptureFixture
) -> None:
    dispatcher.lambda_handler(load_event("stream_201_202_203_with_unparseable_202.json"), lambda_context)
    errors = [record for record in caplog.records if record.levelname == "ERROR"]
    assert [getattr(record, "sequence_number", None) for record in errors] == ["202"]


def test_every_scrape_message_carries_the_tenant_its_row_names_as_its_message_group(
    resources: Resources, lambda_context: FakeContext
) -> None:
    # GIVEN inserts of Pending scrape tasks of job-1 whose rows name their tenants (SQS fair queues:
    # the group is the tenant,
    # https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-fair-queues.html)
    event = load_event("stream_201_202_203_inserts.json")
    for record, tenant in zip(event["Records"], ["job-1#3", "job-1#0", "job-1#29"], strict=True):
        record["dynamodb"]["NewImage"]["message_group"] = {"S": tenant}
    dispatcher.lambda_handler(event, lambda_context)
    # THEN each message names its row's tenant as its group
    groups = {
        json.loads(m["Body"])["task_id"]: m["Attributes"].get("MessageGroupId")
        for m in receive_all(resources.queue_url)
    }
    assert groups == {"task-a": "job-1#3", "task-b": "job-1#0", "task-c": "job-1#29"}


def test_a_message_whose_row_names_no_tenant_carries_its_job_as_its_message_group(
    resources: Resources, lambda_context: FakeContext
) -> None:
    # GIVEN inserts of Pending scrape tasks of job-1 written before rows named their tenant
    dispatcher.lambda_handler(load_event("stream_201_202_203_inserts.json"), lambda_context)
    # THEN every message names job-1 as its group
    groups = [m["Attributes"].get("MessageGroupId") for m in receive_all(resources.queue_url)]
    assert groups == ["job-1", "job-1", "job-1"]


@pytest.mark.parametrize("tenant", ["job-2#1", "job-1#1 ", "j" * 129, "job-1#99"])
def test_a_pending_scrape_task_naming_a_tenant_not_of_its_job_is_an_unparseable_record(
    resources: Resources, lambda_context: FakeContext, caplog: pytest.LogCaptureFixture, tenant: str
) -> None:
    # GIVEN records 201, 202, 203 where 202's new image names a tenant that is not one of job-1's
    event = load_event("stream_201_202_203_inserts.json")
    event["Records"][1]["dynamodb"]["NewImage"]["message_group"] = {"S": tenant}
    # WHEN the dispatcher handles the batch
    response = dispatcher.lambda_handler(event, lambda_context)
    # THEN 202 is reported, naming the field, 201 was sent and 203 was not
    assert response == {"batchItemFailures": [{"itemIdentifier": "202"}]}
    assert _sent_task_ids(resources) == ["task-a"]
    reasons = [getattr(r, "reason", "") for r in caplog.records if r.levelname == "ERROR"]
    assert len(reasons) == 1 and reasons[0].startswith("message_group: ")


def test_a_pending_scrape_task_that_names_no_job_is_an_unparseable_record(
    resources: Resources, lambda_context: FakeContext
) -> None:
    # GIVEN records 201, 202, 203 where 202's images have no job_id
    event = load_event("stream_201_202_203_inserts.json")
    del event["Records"][1]["dynamodb"]["NewImage"]["job_id"]
    # WHEN the dispatcher handles the batch
    response = dispatcher.lambda_handler(event, lambda_context)
    # THEN 202 is reported, 201 was sent and 203 was not
    assert response == {"batchItemFailures": [{"itemIdentifier": "202"}]}
    assert _sent_task_ids(resources) == ["task-a"]
