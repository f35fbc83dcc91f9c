"""EventBridge rules and Scheduler schedules: when they fire on the virtual clock and the hand-over to Lambda.

Rules (rate() or cron() in UTC) and schedules (at(), rate() or cron() in their
``ScheduleExpressionTimezone``, spread by a FLEXIBLE window) fire on the virtual clock
(``schedule_expressions``) and hand their event to Lambda's event queue (``async_invoke``). Each tick
lists rules and schedules once; a schedule is read with GetSchedule only when it is new or its
summary (LastModificationDate, State, target) changed, so an UpdateSchedule or DeleteSchedule is
noticed on the next tick and a thousand unchanged schedules cost only the listing.

Only a failure of the hand-over is handled here: a rule's missing function or permission goes to the
target's DeadLetterConfig queue at once
(https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html); a schedule's refused
delivery (function missing, execution role without lambda:InvokeFunction, Input not JSON) is retried
with its RetryPolicy, then sent to its DeadLetterConfig queue as a dead-letter event
(https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html). A function
error after the hand-over is the event queue's to retry.
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from embedded_aws.async_invoke import AsyncInvoker
from embedded_aws.base import Journal, SourceStats, arn_parts, client, send_to_queue
from embedded_aws.clock import VirtualClock
from embedded_aws.errors import FunctionNotFoundError, InvalidScheduleExpressionError
from embedded_aws.iam_policies import arn_like, documents_allow, role_policy_documents
from embedded_aws.schedule_expressions import CronExpression, at_timestamp, flexible_offset, rate_seconds

# ListSchedules returns at most 100 schedules a page (API_ListSchedules.html, MaxResults).
_SCHEDULES_PAGE = 100


@dataclass
class _Timing:
    """What the runner knows of one rule or schedule between ticks.

    ``version``: what the listing shows of it (a change means reading it again); ``timing``: the
    fields that place its occurrences (expression, time zone, StartDate); ``source``: it as read;
    ``due``: its next scheduled time, None once it never fires again.
    """

    version: tuple[Any, ...]
    timing: tuple[Any, ...]
    source: dict[str, Any]
    due: float | None


def _first_due(expression: str, timezone: str | None, start: float | None, now: float) -> float | None:
    """The first scheduled time of an expression seen at ``now``; a rule's rate() is handled by its caller.

    at(): its moment. rate(): StartDate, or at once without one (schedule-types.html, rate-based).
    cron(): the first match at or after StartDate or now.
    """
    moment = at_timestamp(expression, timezone)
    if moment is not None:
        return moment
    if rate_seconds(expression) is not None:
        return start if start is not None else now
    cron = CronExpression.parse(expression)
    if cron is None:
        raise InvalidScheduleExpressionError(f"not at(), rate() or cron(): {expression}")
    return cron.next_after(max(now, start or now) - 1, timezone)


def _following_due(expression: str, timezone: str | None, due: float) -> float | None:
    """The scheduled time after ``due``: None for at(), one period later for rate(), the next cron match."""
    period = rate_seconds(expression)
    if period is not None:
        return due + period
    cron = CronExpression.parse(expression)
    return cron.next_after(due, timezone) if cron is not None else None


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
    """Fires EventBridge rules and Scheduler schedules on the virtual clock, re-reading what changed."""

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
        self._rules: dict[str, _Timing] = {}
        self._schedules: dict[str, _Timing] = {}
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
        rules = self._paginate(self._events, "list_rules", "Rules")
        self._forget(self._rules, {rule["Arn"] for rule in rules})
        for rule in rules:
            try:
                self._consider_rule(rule, now)
            except Exception as exc:  # one rule's error never stops the others; it is on record
                self.journal.record("schedule.source_error", source=rule.get("Arn"), error=repr(exc))
        summaries = self._paginate(
            self._scheduler, "list_schedules", "Schedules", PaginationConfig={"PageSize": _SCHEDULES_PAGE}
        )
        self._forget(self._schedules, {summary["Arn"] for summary in summaries})
        for summary in summaries:
            try:
                self._consider_schedule(summary, now)
            except Exception as exc:  # one schedule's error never stops the others; it is on record
                self.journal.record("schedule.source_error", source=summary.get("Arn"), error=repr(exc))
        self._retry_deliveries(now)

    @staticmethod
    def _paginate(client_: Any, operation: str, key: str, **kwargs: Any) -> list[dict[str, Any]]:
        pages = client_.get_paginator(operation).paginate(**kwargs)
        return [item for page in pages for item in page.get(key, [])]

    def _forget(self, known: dict[str, _Timing], listed: set[str]) -> None:
        """Drop what was deleted since the last tick (DeleteRule, DeleteSchedule)."""
        for arn in set(known) - listed:
            del known[arn]
            self.journal.record("schedule.forgotten", source=arn)

    def _consider_rule(self, rule: dict[str, Any], now: float) -> None:
        expression = rule.get("ScheduleExpression")
        if not expression or rule.get("State") != "ENABLED":
            return
        known = self._rules.get(rule["Arn"])
        if known is None or known.timing != (expression,):
            # A rule's rate() starts when the rule is created (eb-rate-expressions.html); when within
            # the first period it first fires is not documented, so the first firing is one period on.
            period = rate_seconds(expression)
            if period is None and CronExpression.parse(expression) is None:
                raise InvalidScheduleExpressionError(f"not rate() or cron(): {expression}")
            due = now + period if period is not None else _following_due(expression, None, now)
            known = self._rules[rule["Arn"]] = _Timing((expression,), (expression,), rule, due)
        if known.due is not None and now >= known.due:
            known.due = _following_due(expression, None, known.due)
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

    def _read_schedule(self, summary: dict[str, Any], now: float) -> _Timing:
        """The schedule's timing, from GetSchedule only when its summary changed since the last tick."""
        arn = summary["Arn"]
        version = (
            summary.get("LastModificationDate"),
            summary.get("State"),
            summary.get("Target", {}).get("Arn"),
        )
        known = self._schedules.get(arn)
        if known is not None and known.version == version:
            return known
        schedule = self._scheduler.get_schedule(
            Name=summary["Name"], GroupName=summary.get("GroupName", "default")
        )
        self.journal.record("schedule.read", source=arn, state=schedule.get("State"), at=now)
        start = schedule.get("StartDate")
        timezone = schedule.get("ScheduleExpressionTimezone")
        timing = (schedule["ScheduleExpression"], timezone, start)
        if known is not None and known.timing == timing:
            due = known.due  # the same expression keeps its place: a new target or state is not a new start
            if known.source.get("State") != "ENABLED" and schedule.get("State") == "ENABLED":
                # Enabled again: what passed while it was disabled is not made up (unconfirmed).
                while due is not None and due <= now:
                    due = _following_due(timing[0], timezone, due)
        else:
            due = _first_due(timing[0], timezone, start.timestamp() if start is not None else None, now)
        known = self._schedules[arn] = _Timing(version, timing, schedule, due)
        return known

    def _consider_schedule(self, summary: dict[str, Any], now: float) -> None:
        known = self._read_schedule(summary, now)
        schedule = known.source
        if schedule.get("State", "ENABLED") != "ENABLED" or known.due is None:
            return
        end = schedule.get("EndDate")
        if end is not None and known.due > end.timestamp():
            return
        arn = schedule["Arn"]
        # A FLEXIBLE window delivers within MaximumWindowInMinutes after the scheduled time
        # (managing-schedule-flexible-time-windows.html); the offset is fixed per occurrence.
        if now < known.due + flexible_offset(schedule.get("FlexibleTimeWindow"), arn, known.due):
            return
        scheduled = known.due
        expression, timezone, _ = known.timing
        known.due = _following_due(expression, timezone, scheduled)
        self._deliver(self._schedule_delivery(schedule, scheduled, now), now)
        last = known.due is None or (end is not None and known.due > end.timestamp())
        if last and schedule.get("ActionAfterCompletion") == "DELETE":
            # Deleted after its last planned invocation (managing-schedule-delete.html).
            self._scheduler.delete_schedule(
                Name=schedule["Name"], GroupName=schedule.get("GroupName", "default")
            )
            self.journal.record("schedule.deleted_after_completion", source=arn)

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
            self.journal.record(
                "schedule.delivered",
                source=delivery.source_arn,
                target=delivery.target["Arn"],
                scheduled_time=delivery.scheduled_time or delivery.first_attempt,
                at=now,
            )
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
        except FunctionNotFoundError:
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
