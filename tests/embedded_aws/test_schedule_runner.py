"""Scheduler schedules and EventBridge rules on the virtual clock: cron() in a time zone, flexible
windows, re-reading schedules when they change, and a tick's cost at a thousand schedules."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from embedded_aws.async_invoke import AsyncInvoker
from embedded_aws.base import client
from embedded_aws.clock import VirtualClock
from embedded_aws.runtime import FunctionRuntime
from embedded_aws.schedule_expressions import flexible_offset
from embedded_aws.schedules import ScheduleRunner
from tests.embedded_aws.conftest import Lab, wait_for
from tests.embedded_aws.test_async_schedules import _scheduler_role, _timed_function

pytestmark = pytest.mark.e2e


@pytest.fixture
def running(lab: Lab, runtime: FunctionRuntime, clock: VirtualClock) -> Iterator[ScheduleRunner]:
    invoker = AsyncInvoker(runtime, clock, lab.endpoint)
    runner = ScheduleRunner(invoker, clock, lab.endpoint)
    invoker.start()
    runner.start()
    yield runner
    runner.stop()
    invoker.stop()


def _events(lab: Lab) -> list[tuple[float, Any]]:
    """(virtual time, event) of every invocation so far."""
    return [(float(i["bodies"][0]["at"]), i["bodies"][0]["event"]) for i in lab.invocations()]


def _target(lab: Lab, fn: str, payload: dict[str, Any]) -> dict[str, Any]:
    """A target on ``fn`` with ``payload``, through the lab's one execution role allowed to invoke."""
    iam = client("iam", lab.endpoint)
    try:
        role = iam.get_role(RoleName="scheduler")["Role"]["Arn"]
    except iam.exceptions.NoSuchEntityException:
        role = _scheduler_role(lab, "scheduler", allow_invoke=True)
    return {"Arn": fn, "RoleArn": role, "Input": json.dumps(payload)}


def _at(moment: float, zone: str = "UTC") -> str:
    return "at(" + datetime.fromtimestamp(moment, tz=ZoneInfo(zone)).strftime("%Y-%m-%dT%H:%M:%S") + ")"


def test_a_cron_schedule_fires_at_the_local_time_of_its_time_zone(
    lab: Lab, clock: VirtualClock, running: ScheduleRunner
) -> None:
    # GIVEN a cron() schedule for a wall-clock minute about 20 minutes ahead in Asia/Kolkata (UTC+05:30),
    # so reading it as UTC would put it hours away
    fn = _timed_function(lab, "cron-target")
    zone = ZoneInfo("Asia/Kolkata")
    local = (datetime.fromtimestamp(clock.now(), tz=zone) + timedelta(minutes=20)).replace(
        second=0, microsecond=0
    )
    client("scheduler", lab.endpoint).create_schedule(
        Name="kolkata",
        ScheduleExpression=f"cron({local.minute} {local.hour} * * ? *)",
        ScheduleExpressionTimezone="Asia/Kolkata",
        FlexibleTimeWindow={"Mode": "OFF"},
        Target=_target(lab, fn, {"at": "<aws.scheduler.scheduled-time>"}),
    )
    # WHEN the clock passes that minute
    wait_for(lambda: len(lab.invocations()) == 1, timeout=60)
    # THEN it fired once, not before the local time, with that time as its scheduled time
    [(fired_at, event)] = _events(lab)
    assert fired_at >= local.timestamp()
    assert event == {"at": local.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}


def _advance_to(clock: VirtualClock, moment: datetime) -> None:
    clock.advance(max(0.0, moment.timestamp() - clock.now()))


@pytest.mark.parametrize(
    ("created", "changed_day", "next_day", "scheduled"),
    [
        # 28 March 2027: 02:00 -> 03:00, there is no 02:30; the next firing is the 29th's
        ((2027, 3, 27), (2027, 3, 28), (2027, 3, 29), ["2027-03-29T00:30:00Z"]),
        # 31 October 2027: 03:00 -> 02:00, 02:30 happens twice and fires once, the first time
        ((2027, 10, 30), (2027, 10, 31), (2027, 11, 1), ["2027-10-31T00:30:00Z", "2027-11-01T01:30:00Z"]),
    ],
    ids=["spring-forward", "fall-back"],
)
def test_a_daily_0230_berlin_schedule_skips_the_missing_time_and_fires_a_repeated_one_once(
    lab: Lab,
    clock: VirtualClock,
    running: ScheduleRunner,
    created: tuple[int, int, int],
    changed_day: tuple[int, int, int],
    next_day: tuple[int, int, int],
    scheduled: list[str],
) -> None:
    # GIVEN a cron(30 2 * * ? *) Europe/Berlin schedule created at noon the day before a DST change
    berlin = ZoneInfo("Europe/Berlin")
    _advance_to(clock, datetime(*created, 12, tzinfo=berlin))
    fn = _timed_function(lab, "berlin")
    client("scheduler", lab.endpoint).create_schedule(
        Name="daily-0230",
        ScheduleExpression="cron(30 2 * * ? *)",
        ScheduleExpressionTimezone="Europe/Berlin",
        FlexibleTimeWindow={"Mode": "OFF"},
        Target=_target(lab, fn, {"at": "<aws.scheduler.scheduled-time>"}),
    )
    wait_for(lambda: len(running.journal.entries("schedule.read")) == 1)
    # WHEN the clock passes the day of the change (to 04:00 local) and then 02:30 of the next day
    _advance_to(clock, datetime(*changed_day, 4, tzinfo=berlin))
    _advance_to(clock, datetime(*next_day, 2, 31, tzinfo=berlin))
    wait_for(lambda: any(e["at"] == scheduled[-1] for _, e in _events(lab)), timeout=60)
    # THEN it fired for exactly the documented occurrences (schedule-types.html, daylight saving time)
    assert [e["at"] for _, e in _events(lab)] == scheduled


def test_a_rule_with_cron_fires_on_its_utc_minutes(
    lab: Lab, clock: VirtualClock, running: ScheduleRunner
) -> None:
    # GIVEN an EventBridge rule cron(0/10 * * * ? *) allowed to invoke its function
    fn = _timed_function(lab, "rule-cron")
    events = client("events", lab.endpoint)
    created = clock.now()
    rule_arn = events.put_rule(Name="every-ten", ScheduleExpression="cron(0/10 * * * ? *)")["RuleArn"]
    events.put_targets(Rule="every-ten", Targets=[{"Id": "fn", "Arn": fn}])
    lab.lam.add_permission(
        FunctionName="rule-cron",
        StatementId="events",
        Action="lambda:InvokeFunction",
        Principal="events.amazonaws.com",
        SourceArn=rule_arn,
    )
    # WHEN it fires twice
    wait_for(lambda: len(lab.invocations()) >= 2, timeout=60)
    events.disable_rule(Name="every-ten")
    # THEN neither firing came before the next whole ten minutes (UTC) after its creation, and the
    # event's time is a whole ten minutes apart
    first_slot = (int(created) // 600 + 1) * 600
    times = [t for t, _ in _events(lab)][:2]
    assert times[0] >= first_slot and times[1] >= first_slot + 600
    stamps = [datetime.strptime(e["time"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) for _, e in _events(lab)]
    assert all(stamp.timestamp() >= first_slot for stamp in stamps)


def test_a_flexible_window_delivers_after_its_offset_inside_the_window(
    lab: Lab, clock: VirtualClock, running: ScheduleRunner
) -> None:
    # GIVEN two at() schedules for the same minute, one OFF and one FLEXIBLE with a 20-minute window
    fn = _timed_function(lab, "flexible-target")
    sch = client("scheduler", lab.endpoint)
    moment = float(int(clock.now()) + 120)
    arns = {}
    for name, window in (
        ("exact", {"Mode": "OFF"}),
        ("spread", {"Mode": "FLEXIBLE", "MaximumWindowInMinutes": 20}),
    ):
        arns[name] = sch.create_schedule(
            Name=name,
            ScheduleExpression=_at(moment),
            FlexibleTimeWindow=window,
            Target=_target(lab, fn, {"name": name, "at": "<aws.scheduler.scheduled-time>"}),
        )["ScheduleArn"]
    offset = flexible_offset({"Mode": "FLEXIBLE", "MaximumWindowInMinutes": 20}, arns["spread"], moment)
    # WHEN both have fired
    wait_for(lambda: len(lab.invocations()) == 2, timeout=60)
    # THEN the OFF one came at its time, the FLEXIBLE one only after its offset, and both report the
    # same scheduled time
    fired = {event["name"]: (at, event["at"]) for at, event in _events(lab)}
    assert fired["exact"][0] >= moment
    assert fired["spread"][0] >= moment + offset
    assert fired["exact"][0] < fired["spread"][0]
    scheduled = datetime.fromtimestamp(moment, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert fired["exact"][1] == fired["spread"][1] == scheduled


def test_an_updated_schedule_is_read_again_and_fires_as_updated(
    lab: Lab, clock: VirtualClock, running: ScheduleRunner
) -> None:
    # GIVEN an at() schedule an hour ahead that the runner has read
    fn = _timed_function(lab, "updated-target")
    sch = client("scheduler", lab.endpoint)
    arn = sch.create_schedule(
        Name="moved",
        ScheduleExpression=_at(clock.now() + 3600),
        FlexibleTimeWindow={"Mode": "OFF"},
        Target=_target(lab, fn, {"version": 1}),
    )["ScheduleArn"]
    wait_for(lambda: len(running.journal.entries("schedule.read")) == 1)
    # WHEN it is updated to two minutes ahead with a new input
    moved_to = clock.now() + 120
    sch.update_schedule(
        Name="moved",
        ScheduleExpression=_at(moved_to),
        FlexibleTimeWindow={"Mode": "OFF"},
        Target=_target(lab, fn, {"version": 2}),
    )
    # THEN it fires at the new time with the new input
    wait_for(lambda: len(lab.invocations()) == 1, timeout=60)
    [(fired_at, event)] = _events(lab)
    assert event == {"version": 2}
    assert moved_to <= fired_at < moved_to + 1800
    assert [e["source"] for e in running.journal.entries("schedule.read")] == [arn, arn]


def test_a_disabled_or_deleted_schedule_stops_firing_on_the_next_tick(
    lab: Lab, clock: VirtualClock, running: ScheduleRunner
) -> None:
    # GIVEN three rate(5 minutes) schedules without StartDate, which each fire at once
    fn = _timed_function(lab, "rated")
    sch = client("scheduler", lab.endpoint)
    for name in ("kept", "disabled", "deleted"):
        sch.create_schedule(
            Name=name,
            ScheduleExpression="rate(5 minutes)",
            FlexibleTimeWindow={"Mode": "OFF"},
            Target=_target(lab, fn, {"name": name}),
        )
    wait_for(lambda: len(lab.invocations()) == 3)
    # WHEN one is disabled and one deleted, and the runner has noticed both
    disabled = sch.get_schedule(Name="disabled")
    sch.update_schedule(
        Name="disabled",
        ScheduleExpression=disabled["ScheduleExpression"],
        FlexibleTimeWindow=disabled["FlexibleTimeWindow"],
        Target=disabled["Target"],
        State="DISABLED",
    )
    deleted_arn = sch.get_schedule(Name="deleted")["Arn"]
    sch.delete_schedule(Name="deleted")
    wait_for(
        lambda: (
            any(e["state"] == "DISABLED" for e in running.journal.entries("schedule.read"))
            and [e["source"] for e in running.journal.entries("schedule.forgotten")] == [deleted_arn]
        )
    )
    # ... and the kept one fires three more times
    wait_for(lambda: [e["name"] for _, e in _events(lab)].count("kept") >= 4, timeout=90)
    # THEN the other two never fired again
    names = [e["name"] for _, e in _events(lab)]
    assert names.count("disabled") == 1 and names.count("deleted") == 1


def test_a_reenabled_schedule_does_not_make_up_the_occurrences_missed_while_disabled(
    lab: Lab, clock: VirtualClock, running: ScheduleRunner
) -> None:
    # GIVEN a rate(5 minutes) schedule that fired at once and was then disabled for at least 15 minutes
    fn = _timed_function(lab, "paused")
    sch = client("scheduler", lab.endpoint)
    arn = sch.create_schedule(
        Name="paused",
        ScheduleExpression="rate(5 minutes)",
        FlexibleTimeWindow={"Mode": "OFF"},
        Target=_target(lab, fn, {"name": "paused"}),
    )["ScheduleArn"]
    wait_for(lambda: len(lab.invocations()) == 1)
    settings = sch.get_schedule(Name="paused")
    same = {k: settings[k] for k in ("ScheduleExpression", "FlexibleTimeWindow", "Target")}
    sch.update_schedule(Name="paused", State="DISABLED", **same)

    def read_as(state: str) -> list[float]:
        return [e["at"] for e in running.journal.entries("schedule.read") if e["state"] == state]

    wait_for(lambda: bool(read_as("DISABLED")))
    disabled_at = read_as("DISABLED")[0]
    clock.advance(900)
    # WHEN it is enabled again and fires
    sch.update_schedule(Name="paused", State="ENABLED", **same)
    wait_for(lambda: len(lab.invocations()) == 2, timeout=60)
    # THEN that firing is an occurrence after the pause, not one of the three it missed
    delivered = [e for e in running.journal.entries("schedule.delivered") if e["source"] == arn]
    assert delivered[1]["scheduled_time"] > disabled_at + 900


def test_a_tick_over_a_thousand_unchanged_schedules_only_lists_them(
    lab: Lab, runtime: FunctionRuntime, clock: VirtualClock
) -> None:
    # GIVEN 1,000 one-time schedules a day ahead with ActionAfterCompletion DELETE, as an email
    # campaign creates them, and a runner that is ticked by hand
    fn = _timed_function(lab, "campaign")
    role = _scheduler_role(lab, "scheduler", allow_invoke=True)
    sch = client("scheduler", lab.endpoint)
    when = _at(clock.now() + 86_400)
    for n in range(1000):
        sch.create_schedule(
            Name=f"email-{n:04d}",
            ScheduleExpression=when,
            FlexibleTimeWindow={"Mode": "OFF"},
            Target={"Arn": fn, "RoleArn": role, "Input": json.dumps({"n": n})},
            ActionAfterCompletion="DELETE",
        )
    runner = ScheduleRunner(AsyncInvoker(runtime, clock, lab.endpoint), clock, lab.endpoint)
    calls: dict[str, int] = {"ListSchedules": 0, "GetSchedule": 0}

    def count(event_name: str, **_: Any) -> None:
        calls[event_name.rsplit(".", 1)[1]] += 1

    for operation in calls:
        runner._scheduler.meta.events.register(f"before-call.scheduler.{operation}", count)

    def timed_tick() -> tuple[float, dict[str, int]]:
        before = dict(calls)
        started = time.perf_counter()
        runner.tick()
        return time.perf_counter() - started, {k: calls[k] - before[k] for k in calls}

    # WHEN it ticks three times, one schedule being updated before the third
    first_seconds, first = timed_tick()
    second_seconds, second = timed_tick()
    sch.update_schedule(
        Name="email-0500",
        ScheduleExpression=_at(clock.now() + 7200),
        FlexibleTimeWindow={"Mode": "OFF"},
        Target={"Arn": fn, "RoleArn": role, "Input": json.dumps({"n": 500})},
        ActionAfterCompletion="DELETE",
    )
    _, third = timed_tick()
    # THEN the first tick reads each schedule once, an unchanged tick lists 10 pages and reads none,
    # and a changed schedule is the only one read again
    assert first == {"ListSchedules": 10, "GetSchedule": 1000}
    assert second == {"ListSchedules": 10, "GetSchedule": 0}
    assert third == {"ListSchedules": 10, "GetSchedule": 1}
    print(f"\ntick at 1,000 schedules: first {first_seconds:.2f} s, unchanged {second_seconds:.3f} s")
