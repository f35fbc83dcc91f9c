"""EventBridge rules, Scheduler schedules and Lambda's asynchronous retries on the virtual clock."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from outreach_tools.localaws.async_invoke import AsyncInvoker
from outreach_tools.localaws.base import client
from outreach_tools.localaws.clock import VirtualClock
from outreach_tools.localaws.runtime import FunctionRuntime
from outreach_tools.localaws.schedules import ScheduleRunner
from tests.unit.localaws.conftest import Lab, wait_for

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
        Target={"Arn": fn, "RoleArn": lab.role, "Input": json.dumps({"email": "e-1"})},
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


def test_a_rule_without_invoke_permission_is_a_delivery_failure_that_goes_to_the_target_dlq(
    lab: Lab, clock: VirtualClock, machinery: tuple[AsyncInvoker, ScheduleRunner]
) -> None:
    # GIVEN a rule whose target function grants no permission to EventBridge, with a target DLQ
    fn = _timed_function(lab, "unreachable")
    dlq_url, dlq_arn, _ = lab.queue("rule-dlq")
    events = client("events", lab.endpoint)
    events.put_rule(Name="orphan", ScheduleExpression="rate(1 minute)", State="ENABLED")
    events.put_targets(
        Rule="orphan",
        Targets=[
            {
                "Id": "fn",
                "Arn": fn,
                "RetryPolicy": {"MaximumRetryAttempts": 0, "MaximumEventAgeInSeconds": 60},
                "DeadLetterConfig": {"Arn": dlq_arn},
            }
        ],
    )
    # WHEN it fires
    wait_for(lambda: lab.visible(dlq_url) >= 1, timeout=20)
    events.disable_rule(Name="orphan")
    # THEN the function never ran and the DLQ message names the error
    assert lab.invocations() == []
    message = lab.sqs.receive_message(QueueUrl=dlq_url, MessageAttributeNames=["All"])["Messages"][0]
    assert message["MessageAttributes"]["ERROR_CODE"]["StringValue"] == "AccessDeniedException"


def test_a_rate_schedule_fires_at_each_interval_and_stays(
    lab: Lab, clock: VirtualClock, machinery: tuple[AsyncInvoker, ScheduleRunner]
) -> None:
    # GIVEN a Scheduler rate(30 minutes) schedule, like the email reconciler's
    fn = _timed_function(lab, "every-half-hour")
    sch = client("scheduler", lab.endpoint)
    start = clock.now()
    schedule_arn = sch.create_schedule(
        Name="reconcile-email",
        ScheduleExpression="rate(30 minutes)",
        FlexibleTimeWindow={"Mode": "OFF"},
        Target={"Arn": fn, "RoleArn": lab.role, "Input": json.dumps({"kind": "email"})},
    )["ScheduleArn"]
    # (the period counts from when the runner first sees the schedule: let it see it before time moves)
    runner = machinery[1]
    wait_for(lambda: schedule_arn in runner._next_fire)
    # WHEN 95 virtual minutes pass in 5-minute steps, each taken once the firing due so far happened
    # (on a busy machine the runner may see a step late; the clock waits for it, not the other way)
    for step in range(1, 20):
        clock.advance(300)
        due = step * 300 // 1800
        wait_for(lambda: len(lab.invocations()) >= due)  # noqa: B023 - evaluated inside the loop
    # THEN it fired three times, about 30 minutes apart, and the schedule is still there
    times = _invocation_times(lab)
    assert len(times) == 3
    gaps = [later - earlier for earlier, later in zip([start, *times], times, strict=False)]
    assert all(1500 <= gap <= 2100 for gap in gaps[1:]), gaps
    assert [s["Name"] for s in sch.list_schedules()["Schedules"]] == ["reconcile-email"]
