"""The runner of EventBridge rules and Scheduler schedules: each tick fires what is due on the virtual clock.

Rules (rate() or cron() in UTC) and schedules (at(), rate() or cron() in their
``ScheduleExpressionTimezone``, spread by a FLEXIBLE window) fire on the virtual clock
(``schedule_expressions``, ``schedule_timing``) and hand their event to Lambda's event queue
(``async_invoke``). Each tick lists rules and schedules once; a schedule is read with GetSchedule
only when it is new or its summary (LastModificationDate, State, target) changed, so an
UpdateSchedule or DeleteSchedule is noticed on the next tick and a thousand unchanged schedules cost
only the listing.

What happens when a hand-over is refused (retries, dead-letter events) is ``schedule_delivery``'s.
"""

from __future__ import annotations

import json
import threading
import uuid
from datetime import UTC, datetime
from typing import Any

from embedded_aws.async_invoke import AsyncInvoker
from embedded_aws.base import Journal, SourceStats, arn_parts, client
from embedded_aws.clock import VirtualClock
from embedded_aws.errors import InvalidScheduleExpressionError
from embedded_aws.schedule_delivery import Delivery, TargetDelivery
from embedded_aws.schedule_expressions import CronExpression, flexible_offset, rate_seconds
from embedded_aws.schedule_timing import Timing, first_due, following_due

# ListSchedules returns at most 100 schedules a page (API_ListSchedules.html, MaxResults).
_SCHEDULES_PAGE = 100


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
        self._targets = TargetDelivery(invoker, endpoint, region, self.journal)
        self.stats: dict[str, SourceStats] = self._targets.stats
        self._events = client("events", endpoint, region)
        self._scheduler = client("scheduler", endpoint, region)
        self._rules: dict[str, Timing] = {}
        self._schedules: dict[str, Timing] = {}
        self._tick = tick_real_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="schedules", daemon=True)

    @property
    def _retrying(self) -> list[Delivery]:
        """The schedule deliveries refused so far that wait for their next attempt."""
        return self._targets.retrying

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
        self._targets.retry_due(now)

    @staticmethod
    def _paginate(client_: Any, operation: str, key: str, **kwargs: Any) -> list[dict[str, Any]]:
        pages = client_.get_paginator(operation).paginate(**kwargs)
        return [item for page in pages for item in page.get(key, [])]

    def _forget(self, known: dict[str, Timing], listed: set[str]) -> None:
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
            due = now + period if period is not None else following_due(expression, None, now)
            known = self._rules[rule["Arn"]] = Timing((expression,), (expression,), rule, due)
        if known.due is not None and now >= known.due:
            known.due = following_due(expression, None, known.due)
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
            self._targets.deliver(Delivery(rule["Arn"], target, event, now), now)

    def _read_schedule(self, summary: dict[str, Any], now: float) -> Timing:
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
                    due = following_due(timing[0], timezone, due)
        else:
            due = first_due(timing[0], timezone, start.timestamp() if start is not None else None, now)
        known = self._schedules[arn] = Timing(version, timing, schedule, due)
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
        known.due = following_due(expression, timezone, scheduled)
        self._targets.deliver(self._schedule_delivery(schedule, scheduled, now), now)
        last = known.due is None or (end is not None and known.due > end.timestamp())
        if last and schedule.get("ActionAfterCompletion") == "DELETE":
            # Deleted after its last planned invocation (managing-schedule-delete.html).
            self._scheduler.delete_schedule(
                Name=schedule["Name"], GroupName=schedule.get("GroupName", "default")
            )
            self.journal.record("schedule.deleted_after_completion", source=arn)

    @staticmethod
    def _schedule_delivery(schedule: dict[str, Any], scheduled_time: float, now: float) -> Delivery:
        identity = {"Name": schedule["Name"], "GroupName": schedule.get("GroupName", "default")}
        target = schedule["Target"]
        return Delivery(
            schedule["Arn"],
            target,
            target.get("Input"),
            now,
            schedule=identity,
            scheduled_time=scheduled_time,
        )
