"""EventBridge rules and Scheduler schedules: their rate()/at() expressions and the hand-over to Lambda.

Rules with ``rate()`` and schedules with ``at()`` or ``rate()`` fire on the virtual clock and hand
their event to Lambda's event queue (``async_invoke``). Only a failure of that hand-over is handled
here: a rule's missing function or permission goes to the target's DeadLetterConfig queue at once
(https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html); a schedule's refused
delivery (function missing, execution role without lambda:InvokeFunction, Input not JSON) is retried
with its RetryPolicy, then sent to its DeadLetterConfig queue as a dead-letter event
(https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html). A function
error after the hand-over is the event queue's to retry.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from outreach_tools.localaws.async_invoke import AsyncInvoker
from outreach_tools.localaws.base import Journal, SourceStats, arn_parts, client, send_to_queue
from outreach_tools.localaws.clock import VirtualClock
from outreach_tools.localaws.iam_policies import arn_like, documents_allow, role_policy_documents
from outreach_tools.localaws.runtime import FunctionNotFound

_RATE = re.compile(r"^rate\((\d+)\s+(minute|minutes|hour|hours|day|days)\)$")
_AT = re.compile(r"^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$")
_UNIT_SECONDS = {"minute": 60, "hour": 3600, "day": 86400}


def rate_seconds(expression: str) -> int | None:
    """The period of a ``rate(value unit)`` expression in seconds; None for any other expression.

    https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-scheduled-rule-pattern.html
    """
    match = _RATE.match(expression.strip())
    if not match:
        return None
    return int(match.group(1)) * _UNIT_SECONDS[match.group(2).rstrip("s")]


def at_timestamp(expression: str, timezone: str | None = None) -> float | None:
    """The moment of an ``at(yyyy-mm-ddThh:mm:ss)`` expression in ``timezone``; None for others.

    https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html
    """
    match = _AT.match(expression.strip())
    if not match:
        return None
    moment = datetime.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S").replace(
        tzinfo=ZoneInfo(timezone or "UTC")
    )
    return moment.timestamp()


@dataclass
class _Delivery:
    """One hand-over of an event to Lambda, with the source's retry policy for delivery failures.

    A rule's event is fixed; a schedule's is its target's ``Input`` rendered again for every attempt,
    with the context attributes of that attempt.
    """

    source_arn: str
    target: dict[str, Any]
    event: Any
    first_attempt: float
    schedule: dict[str, Any] | None = None
    scheduled_time: float = 0.0
    attempts: int = 0
    due: float = 0.0


def render_schedule_input(
    template: str | None, schedule_arn: str, scheduled_time: float, attempt: int
) -> str:
    """The target ``Input`` with Scheduler's context attributes substituted (``{}`` when it has none).

    https://docs.aws.amazon.com/scheduler/latest/UserGuide/managing-schedule-context-attributes.html
    """
    if not template:
        return "{}"
    values = {
        "<aws.scheduler.schedule-arn>": schedule_arn,
        "<aws.scheduler.scheduled-time>": datetime.fromtimestamp(scheduled_time, tz=UTC).strftime(
            "%Y-%m-%dT%H:%M:%SZ"
        ),
        "<aws.scheduler.execution-id>": uuid.uuid4().hex[:16],
        "<aws.scheduler.attempt-number>": str(attempt),
    }
    for placeholder, value in values.items():
        template = template.replace(placeholder, value)
    return template


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
        self._iam = client("iam", endpoint, region)
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
            try:
                self._consider_rule(rule, now)
            except Exception as exc:  # one rule's error never stops the others; it is on record
                self.journal.record("schedule.source_error", source=rule.get("Arn"), error=repr(exc))
        for summary in self._paginate(self._scheduler, "list_schedules", "Schedules"):
            try:
                schedule = self._scheduler.get_schedule(
                    Name=summary["Name"], GroupName=summary.get("GroupName", "default")
                )
                self._consider_schedule(schedule, now)
            except Exception as exc:  # one schedule's error never stops the others; it is on record
                self.journal.record("schedule.source_error", source=summary.get("Arn"), error=repr(exc))
        self._retry_deliveries(now)

    @staticmethod
    def _paginate(client_: Any, operation: str, key: str) -> list[dict[str, Any]]:
        pages = client_.get_paginator(operation).paginate()
        return [item for page in pages for item in page.get(key, [])]

    def _consider_rule(self, rule: dict[str, Any], now: float) -> None:
        expression = rule.get("ScheduleExpression")
        if not expression or rule.get("State") != "ENABLED":
            return
        period = rate_seconds(expression)
        if period is None:
            self.journal.record("schedule.unsupported_expression", source=rule["Arn"], expression=expression)
            return
        due = self._next_fire.setdefault(rule["Arn"], now + period)
        if now >= due:
            self._next_fire[rule["Arn"]] = due + period
            self._fire_rule(rule, now)

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
        one_time = at_timestamp(expression, schedule.get("ScheduleExpressionTimezone"))
        if one_time is not None:
            if arn in self._fired_once or now < one_time:
                return
            self._fired_once.add(arn)
            self._deliver(self._schedule_delivery(schedule, one_time, now), now)
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
        # A rate() schedule starts at its StartDate, or at once when it has none (schedule-types.html).
        due = self._next_fire.setdefault(arn, start.timestamp() if start is not None else now)
        if now >= due:
            self._next_fire[arn] = due + period
            self._deliver(self._schedule_delivery(schedule, due, now), now)

    @staticmethod
    def _schedule_delivery(schedule: dict[str, Any], scheduled_time: float, now: float) -> _Delivery:
        identity = {"Name": schedule["Name"], "GroupName": schedule.get("GroupName", "default")}
        target = schedule["Target"]
        return _Delivery(
            schedule["Arn"],
            target,
            target.get("Input"),
            now,
            schedule=identity,
            scheduled_time=scheduled_time,
        )

    # -- delivery with the source's retry policy -------------------------------------------------------
    def _stats(self, source: str) -> SourceStats:
        return self.stats.setdefault(source, SourceStats())

    def _deliver(self, delivery: _Delivery, now: float) -> None:
        delivery.attempts += 1
        stats = self._stats(delivery.source_arn)
        body, event, reason = self._payload(delivery)
        if reason is None:
            reason = self._refusal(delivery)
        if reason is None:
            self.invoker.submit(delivery.target["Arn"], event)
            stats.add(invocations=1)
            return
        stats.add(delivery_failures=1)
        if delivery.schedule is None:
            # A missing target or permission is not retried: its event goes to the DLQ at once (eb-rule-dlq).
            self._dead_letter(delivery, body, reason, "MaximumRetryAttempts")
            return
        policy = delivery.target.get("RetryPolicy") or {}
        max_attempts = int(policy.get("MaximumRetryAttempts", 185))
        max_age = int(policy.get("MaximumEventAgeInSeconds", 86_400))
        next_due = now + min(2**delivery.attempts, 300)
        if delivery.attempts - 1 >= max_attempts:
            self._dead_letter(delivery, body, reason, "MaximumRetryAttempts")
        elif next_due - delivery.first_attempt > max_age:
            self._dead_letter(delivery, body, reason, "MaximumEventAgeInSeconds")
        else:
            delivery.due = next_due
            self._retrying.append(delivery)

    def _payload(self, delivery: _Delivery) -> tuple[str, Any, tuple[str, str] | None]:
        """(body, event, refusal): a schedule's Input rendered for this attempt must be JSON for Lambda."""
        if delivery.schedule is None:
            return json.dumps(delivery.event), delivery.event, None
        body = render_schedule_input(
            delivery.event, delivery.source_arn, delivery.scheduled_time, delivery.attempts
        )
        try:
            return body, json.loads(body), None
        except json.JSONDecodeError:
            return body, None, ("InvalidRequestContentException", "Could not parse request body into json")

    def _dead_letter(self, delivery: _Delivery, body: str, reason: tuple[str, str], condition: str) -> None:
        """Send the undelivered event to the target's DLQ with the attributes AWS documents for the source.

        Rules: eb-rule-dlq.html. Schedules: configuring-schedule-dlq.html ("dead-letter event").
        """
        self.journal.record(
            "schedule.delivery_failed", source=delivery.source_arn, reason=reason, condition=condition
        )
        dead_letter = (delivery.target.get("DeadLetterConfig") or {}).get("Arn")
        if not dead_letter:
            return
        attributes = {
            "ERROR_CODE": reason[0],
            "ERROR_MESSAGE": reason[1],
            "EXHAUSTED_RETRY_CONDITION": condition,
            "RETRY_ATTEMPTS": str(delivery.attempts - 1),
            "TARGET_ARN": delivery.target["Arn"],
        }
        if delivery.schedule is None:
            attributes["RULE_ARN"] = delivery.source_arn
        else:
            attributes.update(
                {
                    "X-Amz-Scheduler-Attempt": str(delivery.attempts),
                    "X-Amz-Scheduler-Group": delivery.schedule["GroupName"],
                    "X-Amz-Scheduler-Schedule": delivery.schedule["Name"],
                    "X-Amz-Scheduler-Schedule-Arn": delivery.source_arn,
                }
            )
        send_to_queue(self.endpoint, dead_letter, body, attributes)

    def _retry_deliveries(self, now: float) -> None:
        due = [d for d in self._retrying if d.due <= now]
        self._retrying = [d for d in self._retrying if d.due > now]
        for delivery in due:
            self._deliver(delivery, now)

    def _refusal(self, delivery: _Delivery) -> tuple[str, str] | None:
        """Why Lambda would refuse the hand-over, or None.

        A rule needs a resource-based permission for ``events.amazonaws.com``
        (eb-use-resource-based.html); a schedule needs an execution role that allows
        ``lambda:InvokeFunction`` on the function (scheduler setting-up.html, "Set up the execution role").
        """
        function = delivery.target["Arn"]
        try:
            self.invoker.runtime.spec(function, fresh=True)
        except FunctionNotFound:
            return ("ResourceNotFoundException", f"Function not found: {function}")
        if delivery.schedule is not None:
            return self._role_refusal(delivery.target.get("RoleArn", ""), function)
        try:
            policy = json.loads(self._lambda.get_policy(FunctionName=function)["Policy"])
        except self._lambda.exceptions.ResourceNotFoundException:
            return ("AccessDeniedException", "no resource-based policy allows events.amazonaws.com")
        for statement in policy.get("Statement", []):
            principal = statement.get("Principal", {})
            service = principal.get("Service") if isinstance(principal, dict) else principal
            if service == "events.amazonaws.com" and self._source_arn_allows(statement, delivery.source_arn):
                return None
        return ("AccessDeniedException", "no resource-based policy allows this rule to invoke the function")

    @staticmethod
    def _source_arn_allows(statement: dict[str, Any], source_arn: str) -> bool:
        """Whether the statement's ``AWS:SourceArn`` condition (ArnLike or ArnEquals) admits the rule."""
        for operator, conditions in (statement.get("Condition") or {}).items():
            for key, value in conditions.items():
                if key.lower() != "aws:sourcearn":
                    continue
                patterns = value if isinstance(value, list) else [value]
                if operator in ("ArnLike", "StringLike"):
                    admitted = any(arn_like(p, source_arn) for p in patterns)
                else:
                    admitted = source_arn in patterns
                if not admitted:
                    return False
        return True

    def _role_refusal(self, role_arn: str, function: str) -> tuple[str, str] | None:
        documents = role_policy_documents(self._iam, role_arn) if role_arn else None
        if documents is None:
            return ("AccessDeniedException", f"execution role not found: {role_arn}")
        if documents_allow(documents, "lambda:InvokeFunction", function):
            return None
        return (
            "AccessDeniedException",
            f"{role_arn} is not authorized to perform lambda:InvokeFunction on {function}",
        )
