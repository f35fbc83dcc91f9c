"""EventBridge rules, Scheduler schedules and Lambda's asynchronous retries on the virtual clock."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from embedded_aws.async_invoke import AsyncInvoker
from embedded_aws.base import client, send_to_queue
from embedded_aws.clock import VirtualClock
from embedded_aws.runtime import FunctionRuntime
from embedded_aws.schedules import ScheduleRunner
from tests.embedded_aws.conftest import Lab, wait_for
from tests.embedded_aws.test_eventbridge_rules import queue_policy

pytestmark = pytest.mark.e2e


@pytest.fixture
def machinery(
    lab: Lab, runtime: FunctionRuntime, clock: VirtualClock
) -> Iterator[tuple[AsyncInvoker, ScheduleRunner]]:
    invoker = AsyncInvoker(runtime, clock, lab.endpoint)
    runner = ScheduleRunner(invoker, clock, lab.endpoint)
    invoker.start()
    runner.start()
    yield invoker, runner
    runner.stop()
    invoker.stop()


def _invocation_times(lab: Lab) -> list[float]:
    return [float(i["bodies"][0]["at"]) for i in lab.invocations()]


# Records the virtual time of each invocation (the worker's outreach.clock follows the shared clock).
TIMED_HANDLER = """
import json, os
from outreach import clock
def handler(event, context):
    with open(os.environ["RECORD_PATH"], "a") as h:
        h.write(json.dumps({"bodies": [{"at": clock.now(), "event": event}]}) + "\\n")
    if os.environ.get("FAIL"):
        raise RuntimeError("reconciler failed")
    return {"ok": True}
"""
CLOCK_MODULE = (
    "import time\n_now = time.time\n"
    "def now():\n    return _now()\n"
    "def set_time_source(source):\n    global _now\n    _now = source or time.time\n"
)


def _timed_function(lab: Lab, name: str, **env: str) -> str:
    return lab.function(
        name, TIMED_HANDLER, env=env, extra={"outreach/__init__.py": "", "outreach/clock.py": CLOCK_MODULE}
    )


def _scheduler_role(lab: Lab, name: str, *, allow_invoke: bool) -> str:
    """A Scheduler execution role; with ``allow_invoke`` its inline policy allows lambda:InvokeFunction."""
    iam = client("iam", lab.endpoint)
    arn: str = iam.create_role(RoleName=name, AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    action = "lambda:InvokeFunction" if allow_invoke else "lambda:GetFunction"
    statement = {"Effect": "Allow", "Action": action, "Resource": "arn:aws:lambda:*:*:function:*"}
    iam.put_role_policy(
        RoleName=name,
        PolicyName="invoke",
        PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [statement]}),
    )
    return arn


def _dlq_messages(lab: Lab, url: str) -> list[dict[str, Any]]:
    response = lab.sqs.receive_message(QueueUrl=url, MessageAttributeNames=["All"], MaxNumberOfMessages=10)
    return list(response.get("Messages", []))


def _attributes(message: dict[str, Any]) -> dict[str, str]:
    return {k: v["StringValue"] for k, v in message["MessageAttributes"].items()}


def test_a_one_time_schedule_fires_once_and_is_deleted_after_completion(
    lab: Lab, clock: VirtualClock, machinery: tuple[AsyncInvoker, ScheduleRunner]
) -> None:
    # GIVEN a Scheduler at() schedule ten virtual minutes ahead with ActionAfterCompletion DELETE
    fn = _timed_function(lab, "one-shot")
    sch = client("scheduler", lab.endpoint)
    when = datetime.fromtimestamp(clock.now() + 600, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    sch.create_schedule(
        Name="send-once",
        ScheduleExpression=f"at({when})",
        FlexibleTimeWindow={"Mode": "OFF"},
        Target={
            "Arn": fn,
            "RoleArn": _scheduler_role(lab, "scheduler", allow_invoke=True),
            "Input": json.dumps({"email": "e-1"}),
        },
        ActionAfterCompletion="DELETE",
    )
    # WHEN the clock passes the time
    clock.advance(900)
    wait_for(lambda: len(lab.invocations()) == 1)
    # THEN it fired once, with its input, not before its time, and the schedule is gone
    assert lab.invocations()[0]["bodies"][0]["event"] == {"email": "e-1"}
    wait_for(lambda: sch.list_schedules()["Schedules"] == [])
    clock.advance(3600)
    assert len(lab.invocations()) == 1


def test_a_failing_async_invocation_is_retried_twice_a_minute_then_two_apart_then_sent_on_failure(
    lab: Lab, clock: VirtualClock, machinery: tuple[AsyncInvoker, ScheduleRunner]
) -> None:
    # GIVEN a rate(5 minutes) rule invoking a function that always fails, with an on-failure queue
    fn = _timed_function(lab, "reconciler", FAIL="1")
    failures_url, failures_arn, _ = lab.queue("reconciler-failures")
    lab.lam.put_function_event_invoke_config(
        FunctionName="reconciler",
        MaximumRetryAttempts=2,
        MaximumEventAgeInSeconds=3600,
        DestinationConfig={"OnFailure": {"Destination": failures_arn}},
    )
    events = client("events", lab.endpoint)
    rule_arn = events.put_rule(Name="reconcile", ScheduleExpression="rate(5 minutes)", State="ENABLED")[
        "RuleArn"
    ]
    events.put_targets(Rule="reconcile", Targets=[{"Id": "fn", "Arn": fn}])
    lab.lam.add_permission(
        FunctionName="reconciler",
        StatementId="events",
        Action="lambda:InvokeFunction",
        Principal="events.amazonaws.com",
        SourceArn=rule_arn,
    )
    # WHEN the rule fires once and Lambda retries
    wait_for(lambda: len(lab.invocations()) >= 3, timeout=30)
    events.disable_rule(Name="reconcile")
    # THEN the first three attempts are about 1 and 2 minutes apart (the first fire's retries)
    times = _invocation_times(lab)[:3]
    assert 55 <= times[1] - times[0] <= 80
    assert 115 <= times[2] - times[1] <= 140
    # ... and the exhausted event lands in the on-failure queue as an invocation record
    wait_for(lambda: lab.visible(failures_url) >= 1)
    record = json.loads(lab.sqs.receive_message(QueueUrl=failures_url)["Messages"][0]["Body"])
    assert record["requestContext"]["condition"] == "RetriesExhausted"
    assert record["requestContext"]["approximateInvokeCount"] == 3
    assert record["requestPayload"]["source"] == "aws.events"
    assert record["responsePayload"]["errorMessage"] == "reconciler failed"


def test_a_rule_target_without_invoke_permission_goes_to_the_dlq_at_once_without_retries(
    lab: Lab, clock: VirtualClock, machinery: tuple[AsyncInvoker, ScheduleRunner]
) -> None:
    # GIVEN a rule whose target function grants no permission to EventBridge, with a target DLQ and
    # the default retry policy (185 attempts over 24 hours)
    fn = _timed_function(lab, "unreachable")
    dlq_url, dlq_arn, _ = lab.queue("rule-dlq")
    events = client("events", lab.endpoint)
    rule_arn = events.put_rule(Name="orphan", ScheduleExpression="rate(1 minute)", State="ENABLED")["RuleArn"]
    events.put_targets(Rule="orphan", Targets=[{"Id": "fn", "Arn": fn, "DeadLetterConfig": {"Arn": dlq_arn}}])
    # WHEN it fires
    wait_for(lambda: lab.visible(dlq_url) >= 1, timeout=20)
    events.disable_rule(Name="orphan")
    # THEN the function never ran, nothing waits for a retry, and the DLQ message carries the
    # documented attributes with no retry attempts
    runner = machinery[1]
    assert lab.invocations() == []
    assert runner._retrying == []
    message = _dlq_messages(lab, dlq_url)[0]
    attributes = _attributes(message)
    assert attributes["ERROR_CODE"] == "AccessDeniedException"
    assert attributes["RETRY_ATTEMPTS"] == "0"
    assert attributes["EXHAUSTED_RETRY_CONDITION"] == "MaximumRetryAttempts"
    assert attributes["RULE_ARN"] == rule_arn
    assert attributes["TARGET_ARN"] == fn
    assert json.loads(message["Body"])["detail-type"] == "Scheduled Event"


def test_a_resource_policy_source_arn_is_matched_like_arnlike_with_wildcards(
    lab: Lab, clock: VirtualClock, machinery: tuple[AsyncInvoker, ScheduleRunner]
) -> None:
    # GIVEN a permission for events.amazonaws.com whose SourceArn is a wildcard over "reconcile-*" rules
    fn = _timed_function(lab, "reconciler")
    dlq_url, dlq_arn, _ = lab.queue("other-dlq")
    events = client("events", lab.endpoint)
    allowed_arn = events.put_rule(Name="reconcile-scrape", ScheduleExpression="rate(1 minute)")["RuleArn"]
    events.put_rule(Name="other", ScheduleExpression="rate(1 minute)")
    events.put_targets(Rule="reconcile-scrape", Targets=[{"Id": "fn", "Arn": fn}])
    events.put_targets(Rule="other", Targets=[{"Id": "fn", "Arn": fn, "DeadLetterConfig": {"Arn": dlq_arn}}])
    lab.lam.add_permission(
        FunctionName="reconciler",
        StatementId="events",
        Action="lambda:InvokeFunction",
        Principal="events.amazonaws.com",
        SourceArn=allowed_arn.rsplit("/", 1)[0] + "/reconcile-*",
    )
    # WHEN both rules fire
    wait_for(lambda: len(lab.invocations()) >= 1 and lab.visible(dlq_url) >= 1, timeout=20)
    events.disable_rule(Name="reconcile-scrape")
    events.disable_rule(Name="other")
    # THEN the matching rule invoked the function and the other was refused
    assert {i["bodies"][0]["event"]["resources"][0] for i in lab.invocations()} == {allowed_arn}
    assert _attributes(_dlq_messages(lab, dlq_url)[0])["ERROR_CODE"] == "AccessDeniedException"


def test_a_rate_schedule_without_start_date_fires_at_once_then_every_period(
    lab: Lab, clock: VirtualClock, machinery: tuple[AsyncInvoker, ScheduleRunner]
) -> None:
    # GIVEN a Scheduler rate(30 minutes) schedule without StartDate, like the email reconciler's
    fn = _timed_function(lab, "every-half-hour")
    sch = client("scheduler", lab.endpoint)
    start = clock.now()
    sch.create_schedule(
        Name="reconcile-email",
        ScheduleExpression="rate(30 minutes)",
        FlexibleTimeWindow={"Mode": "OFF"},
        Target={
            "Arn": fn,
            "RoleArn": _scheduler_role(lab, "scheduler", allow_invoke=True),
            "Input": json.dumps({"kind": "email"}),
        },
    )
    # WHEN the runner first sees it, it fires before any time is made to pass
    wait_for(lambda: len(lab.invocations()) == 1)
    # ... and 95 virtual minutes pass in 5-minute steps, each taken once the firing due so far happened
    # (on a busy machine the runner may see a step late; the clock waits for it, not the other way)
    for step in range(1, 20):
        clock.advance(300)
        due = 1 + step * 300 // 1800
        wait_for(lambda: len(lab.invocations()) >= due)  # noqa: B023 - evaluated inside the loop
    # THEN it fired four times: at once, then about 30 minutes apart, and the schedule is still there
    times = _invocation_times(lab)
    assert len(times) == 4
    assert times[0] - start < 300
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert all(1500 <= gap <= 2100 for gap in gaps), gaps
    assert [s["Name"] for s in sch.list_schedules()["Schedules"]] == ["reconcile-email"]


def test_scheduler_substitutes_its_context_attributes_in_the_input(
    lab: Lab, clock: VirtualClock, machinery: tuple[AsyncInvoker, ScheduleRunner]
) -> None:
    # GIVEN an at() schedule whose Input names every context attribute
    fn = _timed_function(lab, "with-context")
    sch = client("scheduler", lab.endpoint)
    when = datetime.fromtimestamp(clock.now() + 600, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    template = {
        "arn": "<aws.scheduler.schedule-arn>",
        "at": "<aws.scheduler.scheduled-time>",
        "execution": "<aws.scheduler.execution-id>",
        "attempt": "<aws.scheduler.attempt-number>",
    }
    arn = sch.create_schedule(
        Name="with-context",
        ScheduleExpression=f"at({when})",
        FlexibleTimeWindow={"Mode": "OFF"},
        Target={
            "Arn": fn,
            "RoleArn": _scheduler_role(lab, "scheduler", allow_invoke=True),
            "Input": json.dumps(template),
        },
    )["ScheduleArn"]
    # WHEN it fires
    clock.advance(900)
    wait_for(lambda: len(lab.invocations()) == 1)
    # THEN the function got the values, the scheduled time being the at() time, not the firing time
    event = lab.invocations()[0]["bodies"][0]["event"]
    assert event["arn"] == arn
    assert event["at"] == when + "Z"
    assert event["attempt"] == "1"
    assert len(event["execution"]) == 16 and "<" not in event["execution"]


def test_a_non_json_schedule_input_fails_only_its_own_schedule_into_its_dlq(
    lab: Lab, clock: VirtualClock, machinery: tuple[AsyncInvoker, ScheduleRunner]
) -> None:
    # GIVEN two schedules: one whose Input is not JSON (with a DLQ and no retries), one healthy
    fn = _timed_function(lab, "target")
    dlq_url, dlq_arn, _ = lab.queue("schedule-dlq")
    role = _scheduler_role(lab, "scheduler", allow_invoke=True)
    sch = client("scheduler", lab.endpoint)
    when = datetime.fromtimestamp(clock.now() + 600, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    for name, text, extra in (
        ("broken", "not json <aws.scheduler.attempt-number>", {"DeadLetterConfig": {"Arn": dlq_arn}}),
        ("healthy", json.dumps({"ok": True}), {}),
    ):
        sch.create_schedule(
            Name=name,
            ScheduleExpression=f"at({when})",
            FlexibleTimeWindow={"Mode": "OFF"},
            Target={
                "Arn": fn,
                "RoleArn": role,
                "Input": text,
                "RetryPolicy": {"MaximumRetryAttempts": 0, "MaximumEventAgeInSeconds": 60},
                **extra,
            },
        )
    # WHEN both are due
    clock.advance(900)
    wait_for(lambda: len(lab.invocations()) == 1 and lab.visible(dlq_url) == 1)
    # THEN the healthy one ran and the broken one's dead-letter event names the schedule and the error
    assert lab.invocations()[0]["bodies"][0]["event"] == {"ok": True}
    message = _dlq_messages(lab, dlq_url)[0]
    assert message["Body"] == "not json 1"
    attributes = _attributes(message)
    assert attributes["ERROR_CODE"] == "InvalidRequestContentException"
    assert attributes["X-Amz-Scheduler-Schedule"] == "broken"
    assert attributes["X-Amz-Scheduler-Group"] == "default"
    assert attributes["X-Amz-Scheduler-Attempt"] == "1"
    assert attributes["RETRY_ATTEMPTS"] == "0"
    assert attributes["EXHAUSTED_RETRY_CONDITION"] == "MaximumRetryAttempts"


def test_a_schedule_whose_role_does_not_allow_invoke_is_retried_then_dead_lettered(
    lab: Lab, clock: VirtualClock, machinery: tuple[AsyncInvoker, ScheduleRunner]
) -> None:
    # GIVEN an at() schedule whose execution role allows only lambda:GetFunction, two retries, a DLQ
    fn = _timed_function(lab, "guarded")
    dlq_url, dlq_arn, _ = lab.queue("schedule-dlq")
    sch = client("scheduler", lab.endpoint)
    when = datetime.fromtimestamp(clock.now() + 60, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    schedule_arn = sch.create_schedule(
        Name="guarded",
        ScheduleExpression=f"at({when})",
        FlexibleTimeWindow={"Mode": "OFF"},
        Target={
            "Arn": fn,
            "RoleArn": _scheduler_role(lab, "no-invoke", allow_invoke=False),
            "Input": json.dumps({"attempt": "<aws.scheduler.attempt-number>"}),
            "RetryPolicy": {"MaximumRetryAttempts": 2, "MaximumEventAgeInSeconds": 3600},
            "DeadLetterConfig": {"Arn": dlq_arn},
        },
    )["ScheduleArn"]
    # WHEN it is due and every attempt is refused
    clock.advance(120)
    wait_for(lambda: lab.visible(dlq_url) == 1)
    # THEN the function never ran; the dead-letter event comes after three attempts
    runner = machinery[1]
    assert lab.invocations() == []
    assert runner.stats[schedule_arn].delivery_failures == 3
    message = _dlq_messages(lab, dlq_url)[0]
    assert json.loads(message["Body"]) == {"attempt": "3"}
    attributes = _attributes(message)
    assert attributes["ERROR_CODE"] == "AccessDeniedException"
    assert attributes["X-Amz-Scheduler-Attempt"] == "3"
    assert attributes["RETRY_ATTEMPTS"] == "2"
    assert attributes["X-Amz-Scheduler-Schedule-Arn"] == schedule_arn


def _fail_once_and_give_up(lab: Lab, name: str, on_failure: str) -> str:
    """A function that always fails, with no async retries and the ``on_failure`` destination."""
    fn = _timed_function(lab, name, FAIL="1")
    lab.lam.put_function_event_invoke_config(
        FunctionName=name,
        MaximumRetryAttempts=0,
        DestinationConfig={"OnFailure": {"Destination": on_failure}},
    )
    return fn


def test_an_async_failure_record_in_s3_is_stored_under_a_date_path(
    lab: Lab, clock: VirtualClock, machinery: tuple[AsyncInvoker, ScheduleRunner]
) -> None:
    # GIVEN a failing function whose on-failure destination is a bucket
    lab.s3.create_bucket(Bucket="failures")
    fn = _fail_once_and_give_up(lab, "to-s3", "arn:aws:s3:::failures")
    # WHEN an async event fails
    machinery[0].submit(fn, {"n": 1})
    wait_for(lambda: lab.s3.list_objects_v2(Bucket="failures").get("KeyCount", 0) == 1)
    # THEN the object is named aws/lambda/async/<function>/YYYY/MM/DD/YYYY-MM-DDTHH.MM.SS-<uuid>
    key = lab.s3.list_objects_v2(Bucket="failures")["Contents"][0]["Key"]
    day = datetime.fromtimestamp(clock.now(), tz=UTC)
    pattern = (
        rf"aws/lambda/async/to-s3/{day:%Y/%m/%d}/{day:%Y-%m-%d}T\d{{2}}\.\d{{2}}\.\d{{2}}-"
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    )
    assert re.fullmatch(pattern, key), key
    record = json.loads(lab.s3.get_object(Bucket="failures", Key=key)["Body"].read())
    assert record["requestPayload"] == {"n": 1}


def test_an_async_failure_record_on_eventbridge_has_source_aws_lambda(
    lab: Lab, clock: VirtualClock, machinery: tuple[AsyncInvoker, ScheduleRunner]
) -> None:
    # GIVEN a failing function whose on-failure destination is a bus with a rule for aws.lambda events
    events = client("events", lab.endpoint)
    bus_arn = events.create_event_bus(Name="failures")["EventBusArn"]
    seen_url, seen_arn, _ = lab.queue("seen")
    rule_arn = events.put_rule(
        Name="lambda-failures",
        EventBusName="failures",
        EventPattern=json.dumps(
            {"source": ["aws.lambda"], "detail-type": ["Lambda Function Invocation Result - Failure"]}
        ),
    )["RuleArn"]
    # EventBridge sends to a queue whose policy allows it (eb-use-resource-based.html#eb-sqs-permissions).
    lab.sqs.set_queue_attributes(QueueUrl=seen_url, Attributes={"Policy": queue_policy(seen_arn, rule_arn)})
    events.put_targets(
        Rule="lambda-failures", EventBusName="failures", Targets=[{"Id": "q", "Arn": seen_arn}]
    )
    fn = _fail_once_and_give_up(lab, "to-bus", bus_arn)
    # WHEN an async event fails
    machinery[0].submit(fn, {"n": 2})
    wait_for(lambda: lab.visible(seen_url) == 1)
    # THEN the bus got the invocation record as detail, from aws.lambda, naming function and bus
    event = json.loads(lab.sqs.receive_message(QueueUrl=seen_url)["Messages"][0]["Body"])
    assert event["source"] == "aws.lambda"
    assert event["detail"]["requestPayload"] == {"n": 2}
    assert set(event["resources"]) == {f"{fn}:$LATEST", bus_arn}


def test_a_dead_letter_error_code_is_sent_as_a_number_attribute(lab: Lab) -> None:
    # GIVEN the attributes AsyncInvoker gives a function DLQ message (the emulator does not store a
    # function's DeadLetterConfig, so the queue is addressed directly)
    dlq_url, dlq_arn, _ = lab.queue("function-dlq")
    # WHEN they are sent
    send_to_queue(lab.endpoint, dlq_arn, "{}", {"RequestID": "r-1", "ErrorCode": 200, "ErrorMessage": "boom"})
    # THEN ErrorCode arrives as a Number, the others as strings
    attributes = _dlq_messages(lab, dlq_url)[0]["MessageAttributes"]
    assert attributes["ErrorCode"] == {"DataType": "Number", "StringValue": "200"}
    assert attributes["RequestID"] == {"DataType": "String", "StringValue": "r-1"}
