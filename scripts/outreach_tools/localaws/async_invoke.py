"""Asynchronous invocation (Lambda's event queue) and the schedulers that use it.

Two layers, as in AWS:
1. Delivery: an EventBridge rule target or a Scheduler schedule hands the event to Lambda. Only a
   failure of that hand-over (function missing, permission missing) is retried with the target's or
   schedule's RetryPolicy and then sent to its DeadLetterConfig queue
   (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html,
   https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html).
2. Execution: once accepted, a function error is retried by Lambda's async invocation: the function's
   event invoke config (MaximumRetryAttempts 0-2, default 2, about 1 then 2 minutes apart;
   MaximumEventAgeInSeconds, default 6 hours), then the on-failure destination or dead-letter queue
   (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html,
   invocation-async-retain-records.html).
"""

from __future__ import annotations

import heapq
import itertools
import json
import re
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from outreach_tools.localaws.base import Journal, SourceStats, arn_parts, client, iso_timestamp
from outreach_tools.localaws.clock import VirtualClock
from outreach_tools.localaws.runtime import FunctionNotFound, FunctionRuntime

ASYNC_RETRY_DELAYS = (60.0, 120.0)  # Lambda waits about one minute, then two, between async attempts
DEFAULT_EVENT_AGE = 21_600


@dataclass(order=True)
class _Queued:
    due: float
    order: int
    function: str = field(compare=False)
    event: Any = field(compare=False)
    enqueued_at: float = field(compare=False)
    request_id: str = field(compare=False)
    attempts: int = field(default=0, compare=False)


class AsyncInvoker:
    """Lambda's internal queue: accepts events, runs them, retries errors, routes exhausted ones."""

    def __init__(
        self,
        runtime: FunctionRuntime,
        clock: VirtualClock,
        endpoint: str,
        *,
        journal: Journal | None = None,
        workers: int = 4,
    ) -> None:
        self.runtime = runtime
        self.clock = clock
        self.endpoint = endpoint
        self.journal = journal or Journal()
        self.stats = SourceStats()
        self._lambda = client("lambda", endpoint)
        self._heap: list[_Queued] = []
        self._order = itertools.count()
        self._cv = threading.Condition()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._run, name=f"async-{i}", daemon=True) for i in range(workers)
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self._cv:
            self._cv.notify_all()
        for thread in self._threads:
            if thread.is_alive():
                thread.join(timeout=30)

    def pending(self) -> int:
        with self._cv:
            return len(self._heap)

    def submit(self, function: str, event: Any) -> str:
        """InvokeAsync: raises FunctionNotFound when Lambda would refuse the event (delivery failure)."""
        self.runtime.spec(function, fresh=True)
        request_id = str(uuid.uuid4())
        now = self.clock.now()
        with self._cv:
            heapq.heappush(self._heap, _Queued(now, next(self._order), function, event, now, request_id))
            self._cv.notify()
        return request_id

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._cv:
                if not self._heap or self._heap[0].due > self.clock.now():
                    wait = 0.05
                    if self._heap:
                        wait = min(wait, self.clock.real_seconds(self._heap[0].due - self.clock.now()))
                    self._cv.wait(max(wait, 0.001))
                    continue
                item = heapq.heappop(self._heap)
            try:
                self._attempt(item)
            except Exception as exc:  # keep the queue alive; the event is reported, not dropped silently
                self.journal.record("async.internal_error", function=item.function, error=repr(exc))

    def _config(self, function: str) -> dict[str, Any]:
        try:
            config: dict[str, Any] = self._lambda.get_function_event_invoke_config(FunctionName=function)
        except self._lambda.exceptions.ResourceNotFoundException:
            return {}
        return config

    def _attempt(self, item: _Queued) -> None:
        config = self._config(item.function)
        max_retries = int(config.get("MaximumRetryAttempts", 2))
        max_age = int(config.get("MaximumEventAgeInSeconds", DEFAULT_EVENT_AGE))
        if self.clock.now() - item.enqueued_at > max_age:
            self._exhausted(item, config, "EventAgeExceeded", None)
            return
        item.attempts += 1
        self.stats.enter(1)
        try:
            result = self.runtime.invoke(item.function, item.event)
        finally:
            self.stats.leave()
        if result.ok:
            # What the function returned, as its CloudWatch log would show (reports read it).
            self.journal.record("async.succeeded", function=item.function, payload=result.payload)
            self.stats.add(records_done=1)
            return
        self.stats.add(function_errors=1)
        retries_done = item.attempts - 1
        if retries_done >= max_retries:
            self._exhausted(item, config, "RetriesExhausted", result.error_payload())
            return
        delay = ASYNC_RETRY_DELAYS[min(retries_done, len(ASYNC_RETRY_DELAYS) - 1)]
        if self.clock.now() + delay - item.enqueued_at > max_age:
            self._exhausted(item, config, "EventAgeExceeded", result.error_payload())
            return
        self.stats.add(retries=1)
        item.due = self.clock.now() + delay
        with self._cv:
            heapq.heappush(self._heap, item)
            self._cv.notify()

    def _exhausted(
        self, item: _Queued, config: dict[str, Any], condition: str, error: dict[str, Any] | None
    ) -> None:
        spec = self.runtime.spec(item.function)
        record = {
            "version": "1.0",
            "timestamp": iso_timestamp(self.clock.now()),
            "requestContext": {
                "requestId": item.request_id,
                "functionArn": f"{spec.arn}:$LATEST",
                "condition": condition,
                "approximateInvokeCount": item.attempts,
            },
            "requestPayload": item.event,
            "responseContext": {
                "statusCode": 200,
                "executedVersion": "$LATEST",
                "functionError": "Unhandled",
            },
            "responsePayload": error,
        }
        destination = ((config.get("DestinationConfig") or {}).get("OnFailure") or {}).get("Destination")
        self.journal.record(
            "async.exhausted", function=spec.name, condition=condition, destination=destination, error=error
        )
        if destination:
            self._send_record(destination, record, spec.name)
            # Counted after the record is written, so a reader that sees the count sees the record.
            self.stats.add(discarded_records=1)
            return
        dead_letter = self._lambda.get_function_configuration(FunctionName=spec.name).get(
            "DeadLetterConfig", {}
        )
        target = dead_letter.get("TargetArn")
        if target:
            attributes = {
                "RequestID": item.request_id,
                "ErrorCode": "200",
                "ErrorMessage": (error or {}).get("errorMessage") or condition,
            }
            _send_to_queue(self.endpoint, target, json.dumps(item.event), attributes)
        self.stats.add(discarded_records=1)

    def _send_record(self, destination: str, record: dict[str, Any], function: str) -> None:
        service, region, _, resource = arn_parts(destination)
        body = json.dumps(record)
        if service == "sqs":
            _send_to_queue(self.endpoint, destination, body, {})
        elif service == "sns":
            client("sns", self.endpoint, region).publish(TopicArn=destination, Message=body)
        elif service == "s3":
            key = f"aws/lambda/async/{function}/{uuid.uuid4()}"
            client("s3", self.endpoint, region).put_object(Bucket=resource, Key=key, Body=body.encode())
        elif service == "lambda":
            self.submit(destination, record)
        elif service == "events":
            client("events", self.endpoint, region).put_events(
                Entries=[
                    {
                        "Source": "lambda",
                        "DetailType": "Lambda Function Invocation Result - Failure",
                        "Detail": body,
                        "EventBusName": destination,
                    }
                ]
            )


def _send_to_queue(endpoint: str, queue_arn: str, body: str, attributes: dict[str, str]) -> None:
    _, region, account, name = arn_parts(queue_arn)
    sqs = client("sqs", endpoint, region)
    url = sqs.get_queue_url(QueueName=name, QueueOwnerAWSAccountId=account)["QueueUrl"]
    sqs.send_message(
        QueueUrl=url,
        MessageBody=body,
        MessageAttributes={k: {"DataType": "String", "StringValue": v} for k, v in attributes.items()},
    )


# --- schedule expressions -------------------------------------------------------------------------
_RATE = re.compile(r"^rate\((\d+)\s+(minute|minutes|hour|hours|day|days)\)$")
_AT = re.compile(r"^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$")
_UNIT_SECONDS = {"minute": 60, "hour": 3600, "day": 86400}


def rate_seconds(expression: str) -> int | None:
    match = _RATE.match(expression.strip())
    if not match:
        return None
    return int(match.group(1)) * _UNIT_SECONDS[match.group(2).rstrip("s")]


def at_timestamp(expression: str, timezone: str | None = None) -> float | None:
    match = _AT.match(expression.strip())
    if not match:
        return None
    moment = datetime.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S").replace(
        tzinfo=ZoneInfo(timezone or "UTC")
    )
    return moment.timestamp()


@dataclass
class _Delivery:
    """One hand-over of an event to Lambda, with the source's retry policy for delivery failures."""

    source_arn: str
    target: dict[str, Any]
    event: Any
    first_attempt: float
    attempts: int = 0
    due: float = 0.0


class ScheduleRunner:
    """Fires EventBridge rules with rate() and Scheduler schedules with at()/rate() on the virtual clock."""

    def __init__(
        self,
        invoker: AsyncInvoker,
        clock: VirtualClock,
        endpoint: str,
        *,
        journal: Journal | None = None,
        region: str = "us-east-1",
        tick_real_seconds: float = 0.05,
    ) -> None:
        self.invoker = invoker
        self.clock = clock
        self.endpoint = endpoint
        self.region = region
        self.journal = journal or Journal()
        self.stats: dict[str, SourceStats] = {}
        self._events = client("events", endpoint, region)
        self._scheduler = client("scheduler", endpoint, region)
        self._lambda = client("lambda", endpoint, region)
        self._next_fire: dict[str, float] = {}
        self._fired_once: set[str] = set()
        self._retrying: list[_Delivery] = []
        self._tick = tick_real_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="schedules", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.tick()
            except Exception as exc:  # keep firing later ticks; the error is on record
                self.journal.record("schedule.runner_error", error=repr(exc))
            self._stop.wait(self._tick)

    # -- one pass over the applied configuration ---------------------------------------------------
    def tick(self) -> None:
        now = self.clock.now()
        for rule in self._paginate(self._events, "list_rules", "Rules"):
            expression = rule.get("ScheduleExpression")
            if not expression or rule.get("State") != "ENABLED":
                continue
            period = rate_seconds(expression)
            if period is None:
                self.journal.record(
                    "schedule.unsupported_expression", source=rule["Arn"], expression=expression
                )
                continue
            due = self._next_fire.setdefault(rule["Arn"], now + period)
            if now >= due:
                self._next_fire[rule["Arn"]] = due + period
                self._fire_rule(rule, now)
        for summary in self._paginate(self._scheduler, "list_schedules", "Schedules"):
            schedule = self._scheduler.get_schedule(
                Name=summary["Name"], GroupName=summary.get("GroupName", "default")
            )
            self._consider_schedule(schedule, now)
        self._retry_deliveries(now)

    @staticmethod
    def _paginate(client_: Any, operation: str, key: str) -> list[dict[str, Any]]:
        pages = client_.get_paginator(operation).paginate()
        return [item for page in pages for item in page.get(key, [])]

    def _fire_rule(self, rule: dict[str, Any], now: float) -> None:
        targets = self._events.list_targets_by_rule(
            Rule=rule["Name"], EventBusName=rule.get("EventBusName", "default")
        )
        for target in targets.get("Targets", []):
            if "Input" in target:
                event: Any = json.loads(target["Input"])
            else:
                event = {
                    "version": "0",
                    "id": str(uuid.uuid4()),
                    "detail-type": "Scheduled Event",
                    "source": "aws.events",
                    "account": arn_parts(rule["Arn"])[2],
                    "time": datetime.fromtimestamp(now, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "region": self.region,
                    "resources": [rule["Arn"]],
                    "detail": {},
                }
            self._deliver(_Delivery(rule["Arn"], target, event, now), now)

    def _consider_schedule(self, schedule: dict[str, Any], now: float) -> None:
        arn = schedule["Arn"]
        if schedule.get("State", "ENABLED") != "ENABLED":
            return
        expression = schedule["ScheduleExpression"]
        start = schedule.get("StartDate")
        end = schedule.get("EndDate")
        if start is not None and now < start.timestamp():
            return
        if end is not None and now > end.timestamp():
            return
        target = schedule["Target"]
        event = json.loads(target["Input"]) if target.get("Input") else {}
        one_time = at_timestamp(expression, schedule.get("ScheduleExpressionTimezone"))
        if one_time is not None:
            if arn in self._fired_once or now < one_time:
                return
            self._fired_once.add(arn)
            self._deliver(_Delivery(arn, target, event, now), now)
            if schedule.get("ActionAfterCompletion") == "DELETE":
                self._scheduler.delete_schedule(
                    Name=schedule["Name"], GroupName=schedule.get("GroupName", "default")
                )
                self.journal.record("schedule.deleted_after_completion", source=arn)
            return
        period = rate_seconds(expression)
        if period is None:
            self.journal.record("schedule.unsupported_expression", source=arn, expression=expression)
            return
        due = self._next_fire.setdefault(arn, now + period)
        if now >= due:
            self._next_fire[arn] = due + period
            self._deliver(_Delivery(arn, target, event, now), now)

    # -- delivery with the source's retry policy -------------------------------------------------------
    def _stats(self, source: str) -> SourceStats:
        return self.stats.setdefault(source, SourceStats())

    def _deliver(self, delivery: _Delivery, now: float) -> None:
        delivery.attempts += 1
        stats = self._stats(delivery.source_arn)
        reason = self._refusal(delivery)
        if reason is None:
            self.invoker.submit(delivery.target["Arn"], delivery.event)
            stats.add(invocations=1)
            return
        stats.add(delivery_failures=1)
        policy = delivery.target.get("RetryPolicy") or {}
        max_attempts = int(policy.get("MaximumRetryAttempts", 185))
        max_age = int(policy.get("MaximumEventAgeInSeconds", 86_400))
        if delivery.attempts - 1 < max_attempts and now - delivery.first_attempt < max_age:
            delivery.due = now + min(2**delivery.attempts, 300)
            self._retrying.append(delivery)
            return
        self.journal.record("schedule.delivery_failed", source=delivery.source_arn, reason=reason)
        dead_letter = (delivery.target.get("DeadLetterConfig") or {}).get("Arn")
        if dead_letter:
            _send_to_queue(
                self.endpoint,
                dead_letter,
                json.dumps(delivery.event),
                {
                    "RULE_ARN": delivery.source_arn,
                    "TARGET_ARN": delivery.target["Arn"],
                    "ERROR_CODE": reason[0],
                    "ERROR_MESSAGE": reason[1],
                },
            )

    def _retry_deliveries(self, now: float) -> None:
        due = [d for d in self._retrying if d.due <= now]
        self._retrying = [d for d in self._retrying if d.due > now]
        for delivery in due:
            self._deliver(delivery, now)

    def _refusal(self, delivery: _Delivery) -> tuple[str, str] | None:
        """Why Lambda would refuse the hand-over, or None. Rules need a resource-based permission."""
        function = delivery.target["Arn"]
        try:
            self.invoker.runtime.spec(function, fresh=True)
        except FunctionNotFound:
            return ("ResourceNotFoundException", f"Function not found: {function}")
        if ":rule/" not in delivery.source_arn:
            return None  # Scheduler invokes with the schedule's execution role
        try:
            policy = json.loads(self._lambda.get_policy(FunctionName=function)["Policy"])
        except self._lambda.exceptions.ResourceNotFoundException:
            return ("AccessDeniedException", "no resource-based policy allows events.amazonaws.com")
        for statement in policy.get("Statement", []):
            principal = statement.get("Principal", {})
            service = principal.get("Service") if isinstance(principal, dict) else principal
            condition = statement.get("Condition", {}).get("ArnLike", {}).get("AWS:SourceArn")
            if service == "events.amazonaws.com" and condition in (None, delivery.source_arn):
                return None
        return ("AccessDeniedException", "no resource-based policy allows this rule to invoke the function")
