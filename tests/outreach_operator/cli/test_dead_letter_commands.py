"""``outreach dlq`` and ``outreach failures``: show, redrive and replay, deleting only what was handled."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from moto import mock_aws

from outreach import clients, clock, task_store
from outreach.task_ids import normalise_url, scrape_task_id
from tests.outreach_operator.cli.conftest import Run, as_json, aws_state, fail_task
from tests.support.aws import REGION, Resources, create_resources, receive_all

URLS = [f"https://site{n}.example" for n in range(4)]
IDS = [scrape_task_id("jd", normalise_url(u)) for u in URLS]


def _sqs() -> Any:
    return boto3.client("sqs", region_name=REGION)


def _queue(name: str) -> str:
    return str(_sqs().create_queue(QueueName=name)["QueueUrl"])


def _bodies(url: str) -> list[str]:
    return sorted(m["Body"] for m in receive_all(url))


def test_dlq_show_lists_reason_receive_count_and_task_status_and_leaves_the_messages(
    run: Run, resources: Resources
) -> None:
    task_store.create_scrape_job("jd", URLS)
    fail_task(IDS[1], "http_status: 404")
    _sqs().send_message(
        QueueUrl=resources.dlq_url,
        MessageBody="not json",
        MessageAttributes={
            "reason": {"DataType": "String", "StringValue": "body_not_json"},
            "receive_count": {"DataType": "Number", "StringValue": "1"},
        },
    )
    _sqs().send_message(QueueUrl=resources.dlq_url, MessageBody=json.dumps({"task_id": IDS[1]}))
    rows = as_json(run("--json", "dlq", "show", "scrape"))
    by_reason = {r["reason"]: r for r in rows}
    assert by_reason["body_not_json"]["receive_count"] == 1
    assert by_reason["body_not_json"]["task_id"] is None
    exhausted = by_reason["receives exhausted (maxReceiveCount)"]
    assert (exhausted["task_id"], exhausted["task_status"]) == (IDS[1], "Failed")
    # the messages are still there, visible, for the next look
    assert len(receive_all(resources.dlq_url)) == 2


def test_dlq_redrive_moves_every_message_back_to_the_scrape_queue(run: Run, resources: Resources) -> None:
    for task_id in IDS:
        _sqs().send_message(QueueUrl=resources.dlq_url, MessageBody=json.dumps({"task_id": task_id}))
    before = aws_state(resources)
    dry = as_json(run("--json", "dlq", "redrive", "scrape", "--dry-run"))
    assert dry["would_move"] == 4
    assert aws_state(resources) == before
    report = as_json(run("--json", "dlq", "redrive", "scrape"))
    assert (report["Status"], report["ApproximateNumberOfMessagesMoved"]) == ("COMPLETED", 4)
    assert _bodies(resources.queue_url) == sorted(json.dumps({"task_id": t}) for t in IDS)
    assert receive_all(resources.dlq_url) == []


def test_dlq_redrive_ses_events_moves_the_events_dlq_back_to_the_events_queue(
    run: Run, resources: Resources
) -> None:
    dlq_url = _queue("outreach-test-ses-events-dlq")
    dlq_arn = _sqs().get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    queue_url = str(
        _sqs().create_queue(
            QueueName="outreach-test-ses-events",
            Attributes={"RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 5})},
        )["QueueUrl"]
    )
    flags = ("--ses-events-queue-url", queue_url, "--ses-events-dlq-url", dlq_url)
    events = [json.dumps({"id": f"event-{n}", "source": "aws.ses"}) for n in range(3)]
    for body in events:
        _sqs().send_message(QueueUrl=dlq_url, MessageBody=body)
    dry = as_json(run(*flags, "--json", "dlq", "redrive", "ses-events", "--dry-run"))
    assert dry["would_move"] == 3
    assert len(receive_all(queue_url)) == 0
    report = as_json(run(*flags, "--json", "dlq", "redrive", "ses-events"))
    assert (report["Status"], report["ApproximateNumberOfMessagesMoved"]) == ("COMPLETED", 3)
    assert _bodies(queue_url) == sorted(events)
    assert receive_all(dlq_url) == []


def _failure_record(records: list[dict[str, Any]], arrival: str | None = None) -> dict[str, Any]:
    """An invocation record as the stream mapping writes it to an S3 on-failure destination."""
    return {
        "requestContext": {"condition": "RetryAttemptsExhausted", "approximateInvokeCount": 3},
        "DDBStreamBatchInfo": {
            "shardId": "shardId-0001",
            "startSequenceNumber": records[0]["dynamodb"]["SequenceNumber"],
            "endSequenceNumber": records[-1]["dynamodb"]["SequenceNumber"],
            "batchSize": len(records),
            "approximateArrivalOfFirstRecord": arrival or clock.iso(),
            "approximateArrivalOfLastRecord": arrival or clock.iso(),
        },
        "payload": json.dumps({"Records": records}),
    }


def _insert(task_id: str, sequence: str) -> dict[str, Any]:
    return {
        "eventName": "INSERT",
        "dynamodb": {
            "SequenceNumber": sequence,
            "Keys": {"task_id": {"S": task_id}},
            "NewImage": {"task_id": {"S": task_id}, "kind": {"S": "scrape"}, "status": {"S": "Pending"}},
        },
    }


@pytest.fixture
def failure_bucket(resources: Resources) -> str:
    name = "outreach-test-dispatch-failures"
    boto3.client("s3", region_name=REGION).create_bucket(
        Bucket=name, CreateBucketConfiguration={"LocationConstraint": REGION}
    )
    return name


def test_failures_replay_heals_the_tasks_of_a_poison_stream_record(
    run: Run, resources: Resources, failure_bucket: str
) -> None:
    # GIVEN the poison-record outcome: one task never dispatched (still Pending) and its failure record,
    # plus a second record whose task has moved on (Failed) since
    task_store.create_scrape_job("jd", URLS)
    fail_task(IDS[2], "http_status: 404")
    s3 = boto3.client("s3", region_name=REGION)
    poison_key = "aws/lambda/uuid-1/shardId-0001/2026/11/30/2026-11-30T10.00.00-a"
    moved_key = "aws/lambda/uuid-1/shardId-0001/2026/11/30/2026-11-30T10.00.01-b"
    s3.put_object(
        Bucket=failure_bucket, Key=poison_key, Body=json.dumps(_failure_record([_insert(IDS[0], "100")]))
    )
    s3.put_object(
        Bucket=failure_bucket, Key=moved_key, Body=json.dumps(_failure_record([_insert(IDS[2], "200")]))
    )
    flags = ["--failure-bucket", failure_bucket]
    # WHEN the operator lists the records
    listed = as_json(run("--json", "failures", "list", extra=flags))
    # THEN each shows its shard, sequence range and the tasks it covers
    assert [(r["shard"], r["sequence_range"], r["tasks"]) for r in listed] == [
        ("shardId-0001", ["100", "100"], [IDS[0]]),
        ("shardId-0001", ["200", "200"], [IDS[2]]),
    ]
    # AND a dry run changes nothing
    before = aws_state(resources, buckets=[failure_bucket])
    dry = as_json(run("--json", "failures", "replay", "--dry-run", extra=flags))
    assert [r["to_send"] for r in dry["records"]] == [[IDS[0]], []]
    assert aws_state(resources, buckets=[failure_bucket]) == before
    # WHEN they are replayed
    report = as_json(run("--json", "failures", "replay", extra=flags))
    # THEN only the Pending task was sent, as the dispatcher would have, and both records are marked
    assert [r["sent"] for r in report["records"]] == [[IDS[0]], []]
    assert _bodies(resources.queue_url) == [json.dumps({"task_id": IDS[0]})]
    assert as_json(run("--json", "failures", "list", extra=flags)) == []
    assert len(as_json(run("--json", "failures", "list", "--all", extra=flags))) == 2


def test_failures_replay_that_cannot_send_marks_no_record(
    run: Run, resources: Resources, failure_bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    task_store.create_scrape_job("jd", URLS)
    s3 = boto3.client("s3", region_name=REGION)
    key = "aws/lambda/uuid-1/shardId-0001/2026/11/30/2026-11-30T10.00.00-a"
    s3.put_object(Bucket=failure_bucket, Key=key, Body=json.dumps(_failure_record([_insert(IDS[0], "100")])))
    # the scrape queue is gone: every send fails
    _sqs().delete_queue(QueueUrl=resources.queue_url)
    result = run("failures", "replay", extra=["--failure-bucket", failure_bucket])
    assert result.exit_code == 1
    assert "not done: " + key in result.stderr
    assert s3.get_object_tagging(Bucket=failure_bucket, Key=key)["TagSet"] == []


def test_pipe_replay_redispatches_the_pending_tasks_of_the_dead_lettered_batch(
    run: Run, resources: Resources
) -> None:
    # GIVEN two tasks whose stream batch the pipe gave up on (arrival stamped to the second, as AWS does)
    arrival = clock.iso(int(clock.now()))
    task_store.create_scrape_job("jd", URLS[:2])
    pipe_dlq = _queue("outreach-test-dispatch-dlq")
    record = _failure_record([_insert(IDS[0], "100"), _insert(IDS[1], "101")], arrival)
    del record["payload"]
    _sqs().send_message(
        QueueUrl=pipe_dlq,
        MessageBody=json.dumps({"context": {"condition": "RetryAttemptsExhausted"}, **record}),
    )
    flags = ["--pipe-dlq-url", pipe_dlq]
    before = aws_state(resources, queues=[pipe_dlq])
    dry = as_json(run("--json", "dlq", "replay", "pipe", "--job", "jd", "--dry-run", extra=flags))
    assert sorted(dry["would_replay"][0]["to_send"]) == sorted(IDS[:2])
    assert aws_state(resources, queues=[pipe_dlq]) == before
    report = as_json(run("--json", "dlq", "replay", "pipe", "--job", "jd", extra=flags))
    assert sorted(report["replayed"][0]["sent"]) == sorted(IDS[:2])
    assert _bodies(resources.queue_url) == sorted(json.dumps({"task_id": t}) for t in IDS[:2])
    assert receive_all(pipe_dlq) == []


def test_a_replayed_message_carries_the_tenant_its_row_names_as_its_message_group(
    run: Run, resources: Resources
) -> None:
    # GIVEN a task of job jd whose stream batch the pipe gave up on; its row names one of jd's tenants
    arrival = clock.iso(int(clock.now()))
    task_store.create_scrape_job("jd", URLS[:1])
    task = task_store.get_task(IDS[0])
    assert task is not None and task.message_group is not None and task.message_group.startswith("jd#")
    pipe_dlq = _queue("outreach-test-dispatch-dlq")
    record = _failure_record([_insert(IDS[0], "100")], arrival)
    del record["payload"]
    _sqs().send_message(QueueUrl=pipe_dlq, MessageBody=json.dumps(record))
    # WHEN it is replayed
    run("--json", "dlq", "replay", "pipe", "--job", "jd", extra=["--pipe-dlq-url", pipe_dlq])
    # THEN its message names that tenant as its group, as the dispatcher's would (SQS fair queues)
    (message,) = receive_all(resources.queue_url)
    assert message["Attributes"].get("MessageGroupId") == task.message_group


def test_a_pipe_replay_that_fails_halfway_says_what_it_did_and_leaves_the_rest_in_the_dlq(
    run: Run, resources: Resources
) -> None:
    # GIVEN two dead-lettered batches: an old one whose window holds no Pending task (nothing to send)
    # and a recent one whose task is still Pending, while the scrape queue cannot take messages
    now = int(clock.now())
    pipe_dlq = _queue("outreach-test-dispatch-dlq")
    task_store.create_scrape_job("jd", URLS[:1])
    ids = {}
    for name, arrival in (("moved_on", clock.iso(now - 3600)), ("pending", clock.iso(now))):
        record = _failure_record([_insert(IDS[0], "100")], arrival)
        del record["payload"]
        ids[name] = _sqs().send_message(QueueUrl=pipe_dlq, MessageBody=json.dumps(record))["MessageId"]
    _sqs().delete_queue(QueueUrl=resources.queue_url)
    # WHEN the pipe DLQ is replayed
    result = run("dlq", "replay", "pipe", "--job", "jd", extra=["--pipe-dlq-url", pipe_dlq])
    # THEN it fails (exit 1) naming what was done and what was not, and exactly the undone stay queued
    assert result.exit_code == 1
    done_line = next(line for line in result.stderr.splitlines() if line.startswith("done: "))
    not_done_line = next(line for line in result.stderr.splitlines() if line.startswith("not done: "))
    assert ids["pending"] in not_done_line
    left = {m["MessageId"] for m in receive_all(pipe_dlq)}
    assert ids["pending"] in left
    assert (ids["moved_on"] in left) == (ids["moved_on"] in not_done_line)
    assert (ids["moved_on"] in left) != (ids["moved_on"] in done_line)


@pytest.fixture
def lambda_resources(aws_env: None, monkeypatch: pytest.MonkeyPatch) -> Any:
    """moto with Lambda invocations that run no code and answer with the event (no Docker)."""
    with mock_aws(config={"lambda": {"use_docker": False}}):
        clients.reset()
        created = create_resources("outreach-lam")
        for name, value in (("TASKS_TABLE", created.table), ("SCRAPE_QUEUE_URL", created.queue_url)):
            monkeypatch.setenv(name, value)
        yield created
        clients.reset()


def _function(name: str) -> str:
    iam = boto3.client("iam", region_name=REGION)
    role = iam.create_role(RoleName=f"{name}-role", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    return str(
        boto3.client("lambda", region_name=REGION).create_function(
            FunctionName=name, Runtime="python3.12", Role=role, Handler="x.handler", Code={"ZipFile": b"PK"}
        )["FunctionArn"]
    )


def test_reconciler_replay_reinvokes_the_named_function_and_leaves_what_failed_in_the_queue(
    lambda_resources: Resources,
) -> None:
    from click.testing import CliRunner

    from outreach_operator.cli.app import cli
    from tests.outreach_operator.cli.conftest import target_flags

    # GIVEN a reconciler DLQ with EventBridge dead letters: two whose target function exists, one whose
    # target is not a function and one without a target (neither of those two can be replayed)
    arn = _function("outreach-test-reconciler")
    dlq = _queue("outreach-test-reconciler-dlq")

    def dead_letter(target: str | None, n: int) -> None:
        attributes = {
            "RULE_ARN": {"DataType": "String", "StringValue": "arn:aws:events:eu-central-1:1:rule/r"}
        }
        if target:
            attributes["TARGET_ARN"] = {"DataType": "String", "StringValue": target}
        body = json.dumps({"id": f"event-{n}", "detail": {}})
        _sqs().send_message(QueueUrl=dlq, MessageBody=body, MessageAttributes=attributes)

    dead_letter(arn, 1)
    dead_letter(arn, 2)
    dead_letter(None, 3)
    dead_letter("arn:aws:sqs:eu-central-1:123456789012:not-a-function", 4)
    base = [
        *target_flags(lambda_resources),
        *("--reconciler-dlq-url", dlq, "--scrape-reconciler-function", arn, "--json"),
    ]
    before = aws_state(lambda_resources, queues=[dlq])
    dry = CliRunner().invoke(cli, [*base, "dlq", "replay", "reconciler", "--dry-run"])
    assert dry.exit_code == 2  # a target that is not a function is refused, which a dry run already says
    assert sorted(r["function"] for r in json.loads(dry.stdout)["would_replay"]) == [arn, arn]
    assert aws_state(lambda_resources, queues=[dlq]) == before
    # WHEN the DLQ is replayed
    result = CliRunner().invoke(cli, [*base, "dlq", "replay", "reconciler"])
    # THEN the two events were handed to the function again and deleted; the other two stay: one
    # without a target (it failed), one whose target is not a function (refused, exit 2)
    assert result.exit_code == 2
    report = json.loads(result.stdout)
    assert [(r["function"], r["status_code"]) for r in report["replayed"]] == [(arn, 200), (arn, 200)]
    assert len(report["failed"]) == 1
    assert [r["subject"] for r in report["refused"]] == [
        "arn:aws:sqs:eu-central-1:123456789012:not-a-function"
    ]
    assert "left in the queue" in result.stderr
    assert sorted(json.loads(m["Body"])["id"] for m in receive_all(dlq)) == ["event-3", "event-4"]


def test_reconciler_replay_reruns_a_run_whose_lambda_retries_ran_out_from_its_on_failure_record(
    lambda_resources: Resources,
) -> None:
    from click.testing import CliRunner

    from outreach_operator.cli.app import cli
    from tests.outreach_operator.cli.conftest import target_flags

    # GIVEN the record Lambda sends to the on-failure destination after a run's async retries ran out
    arn = _function("outreach-test-reconciler")
    dlq = _queue("outreach-test-reconciler-dlq")
    record = {
        "version": "1.0",
        "requestContext": {
            "requestId": "r-1",
            "functionArn": f"{arn}:$LATEST",
            "condition": "RetriesExhausted",
            "approximateInvokeCount": 3,
        },
        "requestPayload": {"id": "event-1", "detail-type": "Scheduled Event", "detail": {}},
        "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
        "responsePayload": {"errorType": "ClientError", "errorMessage": "throttled"},
    }
    _sqs().send_message(QueueUrl=dlq, MessageBody=json.dumps(record))
    base = [
        *target_flags(lambda_resources),
        *("--reconciler-dlq-url", dlq, "--scrape-reconciler-function", "outreach-test-reconciler", "--json"),
    ]
    # WHEN the reconciler DLQ is replayed
    result = CliRunner().invoke(cli, [*base, "dlq", "replay", "reconciler"])
    # THEN the function named in the record (the environment's reconciler, known by its name) ran
    # again with the original event, and the record is gone
    assert result.exit_code == 0, result.output
    [replayed] = json.loads(result.stdout)["replayed"]
    assert (replayed["function"], replayed["error"], replayed["status_code"]) == (
        "outreach-test-reconciler",
        "RetriesExhausted",
        200,
    )
    assert receive_all(dlq) == []


def _pipe_dead_letter(pipe_dlq: str, arrival: str, records: list[dict[str, Any]]) -> str:
    """A pipe's dead letter as the embedded AWS writes it: the batch's shard, sequences and arrival."""
    record = _failure_record(records, arrival)
    del record["payload"]
    body = json.dumps({"context": {"condition": "RetryAttemptsExhausted"}, **record})
    return str(_sqs().send_message(QueueUrl=pipe_dlq, MessageBody=body)["MessageId"])


OTHER_IDS = [scrape_task_id("other", normalise_url(u)) for u in URLS[:2]]


def test_a_pipe_dead_letter_names_no_job_so_its_replay_requires_job_and_sends_nothing(
    run: Run, resources: Resources
) -> None:
    # GIVEN a dead-lettered batch of job jd, and job other's Pending tasks written in the same second
    arrival = clock.iso(int(clock.now()))
    task_store.create_scrape_job("jd", URLS[:2])
    task_store.create_scrape_job("other", URLS[:2])
    pipe_dlq = _queue("outreach-test-dispatch-dlq")
    message_id = _pipe_dead_letter(pipe_dlq, arrival, [_insert(IDS[0], "100"), _insert(IDS[1], "101")])
    before = aws_state(resources, queues=[pipe_dlq])
    # WHEN it is replayed without --job
    result = run("--json", "dlq", "replay", "pipe", extra=["--pipe-dlq-url", pipe_dlq])
    # THEN it is refused (exit 2) saying to pass --job; nothing was sent, the dead letter stays
    assert result.exit_code == 2, result.output
    assert "pass --job" in result.stderr
    assert json.loads(result.stdout)["refused"][0]["message_id"] == message_id
    assert aws_state(resources, queues=[pipe_dlq]) == before
    assert receive_all(resources.queue_url) == []


def test_a_pipe_replay_sends_only_the_pending_tasks_of_the_jobs_it_names(
    run: Run, resources: Resources
) -> None:
    # GIVEN job jd's dead-lettered batch and job other's Pending tasks in the same window
    arrival = clock.iso(int(clock.now()))
    task_store.create_scrape_job("jd", URLS[:2])
    task_store.create_scrape_job("other", URLS[:2])
    pipe_dlq = _queue("outreach-test-dispatch-dlq")
    _pipe_dead_letter(pipe_dlq, arrival, [_insert(IDS[0], "100"), _insert(IDS[1], "101")])
    # WHEN the operator replays it for job jd
    report = as_json(
        run("--json", "dlq", "replay", "pipe", "--job", "jd", extra=["--pipe-dlq-url", pipe_dlq])
    )
    # THEN only jd's Pending tasks were sent; other's were not touched
    [replayed] = report["replayed"]
    assert (sorted(replayed["sent"]), replayed["jobs"]) == (sorted(IDS[:2]), ["jd"])
    assert _bodies(resources.queue_url) == sorted(json.dumps({"task_id": t}) for t in IDS[:2])
    assert not set(OTHER_IDS) & set(replayed["sent"])


def test_a_reconciler_replay_invokes_only_this_environments_reconcilers_and_refuses_any_other_target(
    lambda_resources: Resources,
) -> None:
    from click.testing import CliRunner

    from outreach_operator.cli.app import cli
    from tests.outreach_operator.cli.conftest import target_flags

    # GIVEN a reconciler DLQ whose dead letters name this environment's reconciler, its email worker,
    # another environment's reconciler and a function in another account (all but the last exist)
    own = _function("outreach-test-scrape-reconciler")
    worker = _function("outreach-test-email-worker")
    other_env = _function("outreach-prod-scrape-reconciler")
    other_account = "arn:aws:lambda:eu-central-1:999999999999:function:outreach-test-scrape-reconciler"
    dlq = _queue("outreach-test-reconciler-dlq")
    for n, target in enumerate((own, worker, other_env, other_account)):
        _sqs().send_message(
            QueueUrl=dlq,
            MessageBody=json.dumps({"id": f"event-{n}"}),
            MessageAttributes={"TARGET_ARN": {"DataType": "String", "StringValue": target}},
        )
    # the environment knows its reconciler by name, as the root's outputs give it
    base = [
        *target_flags(lambda_resources),
        *("--reconciler-dlq-url", dlq, "--scrape-reconciler-function", "outreach-test-scrape-reconciler"),
        "--json",
    ]
    # WHEN the DLQ is replayed
    result = CliRunner().invoke(cli, [*base, "dlq", "replay", "reconciler"])
    # THEN only the environment's reconciler ran; the other three are refused (exit 2), named, and stay
    assert result.exit_code == 2, result.output
    report = json.loads(result.stdout)
    assert [(r["function"], r["status_code"]) for r in report["replayed"]] == [
        ("outreach-test-scrape-reconciler", 200)
    ]
    assert sorted(r["subject"] for r in report["refused"]) == sorted([worker, other_env, other_account])
    assert worker in result.stderr
    assert sorted(json.loads(m["Body"])["id"] for m in receive_all(dlq)) == ["event-1", "event-2", "event-3"]
    # AND --function naming anything else is refused before any message is read
    forced = CliRunner().invoke(cli, [*base, "dlq", "replay", "reconciler", "--function", worker])
    assert forced.exit_code == 2
    assert f"--function {worker}" in forced.stderr
    depth = _sqs().get_queue_attributes(QueueUrl=dlq, AttributeNames=["All"])["Attributes"]
    assert (
        int(depth["ApproximateNumberOfMessages"]) + int(depth["ApproximateNumberOfMessagesNotVisible"]) == 3
    )
