"""The embedded AWS's CloudWatch loop: SES reputation datapoints, then every metric alarm evaluated and its
state changes acted on, on the virtual clock.

Part of ``LocalCloud`` like the schedule runner: every ``tick_real_seconds`` (default 1 real second,
10 virtual seconds at ``make local``'s scale) it publishes the reputation metrics when due
(``ses_reputation_metrics.ReputationPublisher``) and evaluates each alarm moto holds
(``alarm_evaluation``); an alarm whose state differs from the evaluated one changes state and runs
what CloudWatch runs (``alarm_actions.change_state``). ``evaluate_alarms`` does one round at once
(``LocalPipeline.evaluate_alarms`` and the tests).

Which alarms: only those whose metric has had a datapoint published (PutMetricData, or the
reputation metrics) are evaluated. moto publishes no metric of its own services (SQS queue depths,
Lambda errors), so an alarm on such a metric would see nothing but missing data and move to
INSUFFICIENT_DATA (or OK, or ALARM) on no evidence; those keep the state they were created with.
Metric-math, composite and anomaly-detection alarms are left alone too (``alarm_evaluation.evaluable``).
Evaluation and emulator share one process (the embedded server is a thread of it), so both read and
change moto's models directly, as ``event_rule_invoker`` does.
"""

from __future__ import annotations

import threading
from typing import Any

from embedded_aws.alarm_actions import AlarmStateChange, change_state
from embedded_aws.alarm_evaluation import EXTRA_PERIODS, evaluable, evaluate
from embedded_aws.base import Journal
from embedded_aws.clock import VirtualClock
from embedded_aws.ses_reputation_metrics import ReputationPublisher, ReputationSettings

# One round at a time: the loop's and a caller's (LocalPipeline.evaluate_alarms) never interleave,
# so a change is acted on once.
_ROUND = threading.Lock()
_SEEN = "_outreach_alarm_inputs"  # per CloudWatch backend: what each alarm was last evaluated on


def evaluate_alarms(
    region: str,
    account_id: str | None = None,
    *,
    now: float | None = None,
    extra_periods: int = EXTRA_PERIODS,
) -> list[AlarmStateChange]:
    """Evaluate every alarm of ``region`` whose metric has datapoints, at ``now`` (the emulator's clock
    unless given); change and act on those whose state differs. Returns the changes made."""
    from moto.cloudwatch.models import cloudwatch_backends
    from moto.core.models import DEFAULT_ACCOUNT_ID

    from embedded_aws.ses_account import emulator_now

    account = account_id or DEFAULT_ACCOUNT_ID
    moment = emulator_now() if now is None else now
    backend = cloudwatch_backends[account][region]
    changes = []
    with _ROUND:
        by_metric: dict[tuple[str, str], list[Any]] = {}
        for datum in list(backend.metric_data):
            by_metric.setdefault((datum.namespace, datum.name), []).append(datum)
        seen: dict[str, tuple[Any, ...]] = backend.__dict__.setdefault(_SEEN, {})
        for alarm in list(backend.alarms.values()):
            data = by_metric.get((alarm.namespace, alarm.metric_name))
            if not data or evaluable(alarm) is not None:
                continue
            # The same alarm, state, last complete period and datapoints give the same answer.
            inputs = (id(alarm), alarm.state_value, moment // float(alarm.period), len(data))
            if seen.get(alarm.name) == inputs:
                continue
            seen[alarm.name] = inputs
            evaluation = evaluate(alarm, data, moment, extra_periods=extra_periods)
            if evaluation.state != alarm.state_value:
                changes.append(change_state(alarm, account, evaluation, moment))
    return changes


class MetricAlarmRunner:
    """Publishes the reputation metrics and evaluates the alarms of one account and Region, each tick."""

    def __init__(
        self,
        clock: VirtualClock,
        *,
        region: str = "us-east-1",
        account_id: str | None = None,
        journal: Journal | None = None,
        reputation: ReputationSettings | None = None,
        extra_periods: int = EXTRA_PERIODS,
        tick_real_seconds: float = 1.0,
    ) -> None:
        self.clock = clock
        self.region = region
        self.account_id = account_id
        self.journal = journal or Journal()
        self.reputation = ReputationPublisher(region, account_id, reputation)
        self.extra_periods = extra_periods
        self._tick = tick_real_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="metric-alarms", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.wait(self._tick):
            try:
                self.tick()
            except Exception as exc:  # outcome: in the journal (alarms.runner_error); the next tick retries
                self.journal.record("alarms.runner_error", error=repr(exc))

    def tick(self) -> list[AlarmStateChange]:
        """Publish the reputation metrics if due, then evaluate every alarm; returns the changes."""
        now = self.clock.now()
        self.reputation.tick(now)
        changes = evaluate_alarms(self.region, self.account_id, now=now, extra_periods=self.extra_periods)
        for change in changes:
            self.journal.record(
                "alarms.state_changed",
                alarm=change.alarm_name,
                old_state=change.old_state,
                new_state=change.new_state,
                at=change.at,
                notified=list(change.notified),
                errors=list(change.errors),
            )
        return changes
