"""How CloudWatch decides a metric alarm's state from its metric's datapoints: periods, statistic,
M out of N, missing data.

moto stores alarms and datapoints but never evaluates an alarm: it stays in the state it was created
or set in. CloudWatch, as documented (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html,
"Evaluating an alarm", and https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarms-and-missing-data.html):

- the metric's datapoints are aggregated per ``Period`` with the alarm's ``Statistic`` (SampleCount,
  Sum, Minimum, Maximum, Average) or ``ExtendedStatistic`` (``pNN``) into one value per period; a
  datapoint belongs to the alarm's metric when its namespace, name and whole set of dimensions are
  the alarm's (and its unit, when the alarm names one);
- ``EvaluationPeriods`` (N) is how many of the most recent periods are evaluated and
  ``DatapointsToAlarm`` (M, default N) how many of them must breach (``ComparisonOperator`` against
  ``Threshold``) for ALARM, "M out of N"; otherwise the alarm is OK;
- CloudWatch retrieves more periods than N, the evaluation range. With at least N real datapoints
  in the range the N most recent real ones are evaluated and missing ones do not matter; with fewer,
  the missing ones are filled with the ``TreatMissingData`` choice, as few as possible: ``missing``
  (the default: when every datapoint of the range is missing the alarm goes INSUFFICIENT_DATA),
  ``notBreaching``, ``breaching``, ``ignore`` (the alarm keeps its state when nothing is there);
  alarms on ``AWS/DynamoDB`` metrics always ignore missing data.

Here, unconfirmed where the pages do not say: periods are aligned to multiples of ``Period`` since the
epoch and only complete periods are evaluated (a datapoint counts once its period has ended, so an
alarm follows its data within one period); the range is N + ``extra_periods`` periods (default 2;
the pages say only "a higher number of data points"); a period with only pre-aggregated values
(StatisticValues) has no percentile and counts as missing for a ``pNN`` alarm; the state reason text
follows the form AWS writes (``Threshold Crossed: ...``). Not evaluated here (``evaluable`` says why):
metric-math alarms (``Metrics``), composite alarms, anomaly-detection operators.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

OK = "OK"
ALARM = "ALARM"
INSUFFICIENT_DATA = "INSUFFICIENT_DATA"
EXTRA_PERIODS = 2
COMPARISONS: dict[str, tuple[Callable[[float, float], bool], str]] = {
    "GreaterThanOrEqualToThreshold": (operator.ge, "greater than or equal to"),
    "GreaterThanThreshold": (operator.gt, "greater than"),
    "LessThanThreshold": (operator.lt, "less than"),
    "LessThanOrEqualToThreshold": (operator.le, "less than or equal to"),
}
_STATISTICS = ("SampleCount", "Sum", "Minimum", "Maximum", "Average")
_TREATMENTS = ("missing", "notBreaching", "breaching", "ignore")


@dataclass(frozen=True)
class Datapoint:
    """One period's value: the period's start (seconds since the epoch), the statistic, the samples."""

    start: float
    value: float
    sample_count: float


@dataclass(frozen=True)
class Evaluation:
    """The state an alarm's datapoints call for now, why, and the datapoints evaluated (newest first)."""

    state: str
    reason: str
    reason_data: dict[str, Any]
    datapoints: tuple[Datapoint, ...] = field(default=())


def evaluable(alarm: Any) -> str | None:
    """Why this emulator does not evaluate ``alarm`` (moto's model), or None when it does."""
    if getattr(alarm, "rule", None):
        return "a composite alarm"
    if alarm.metric_data_queries:
        return "a metric math alarm"
    if alarm.comparison_operator not in COMPARISONS:
        return f"the comparison {alarm.comparison_operator}"
    statistic = alarm.extended_statistic or alarm.statistic
    if statistic not in _STATISTICS and not _percentile(statistic):
        return f"the statistic {statistic}"
    return None


def _percentile(statistic: str | None) -> float | None:
    if not statistic or not statistic.startswith("p"):
        return None
    try:
        value = float(statistic[1:])
    except ValueError:  # outcome: not a percentile (pNN); evaluable() names the statistic
        return None
    return value if 0 <= value <= 100 else None


def epoch_seconds(moment: datetime) -> float:
    """Seconds since the epoch of a moto time (naive UTC, or aware)."""
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def iso(moment: float) -> str:
    """A moment as CloudWatch writes it in alarm reasons and events: ``2019-10-02T17:04:40.985+0000``."""
    return datetime.fromtimestamp(moment, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "+0000"


def belongs(alarm: Any, datum: Any) -> bool:
    """Whether a moto datapoint is of the alarm's metric: namespace, name, all dimensions, unit."""
    if datum.namespace != alarm.namespace or datum.name != alarm.metric_name:
        return False
    if alarm.unit and datum.unit != alarm.unit:
        return False
    wanted = {(d.name, d.value) for d in alarm.dimensions}
    return {(d.name, d.value) for d in datum.dimensions} == wanted


def _statistic(alarm: Any, data: list[Any]) -> tuple[float, float] | None:
    """(value, sample count) of one period's moto datapoints, or None when it has no value."""
    singles = [float(d.value) for d in data if hasattr(d, "value")]
    aggregated = [d for d in data if not hasattr(d, "value")]
    count = len(singles) + sum(float(d.sample_count) for d in aggregated)
    if count <= 0:
        return None
    percentile = _percentile(alarm.extended_statistic)
    if percentile is not None:
        if not singles:
            return None
        ordered = sorted(singles)
        rank = max(math.ceil(percentile / 100 * len(ordered)), 1)
        return ordered[rank - 1], count
    total = sum(singles) + sum(float(d.sum) for d in aggregated)
    values = {
        "SampleCount": count,
        "Sum": total,
        "Minimum": min([*singles, *(float(d.min) for d in aggregated)]),
        "Maximum": max([*singles, *(float(d.max) for d in aggregated)]),
        "Average": total / count,
    }
    return values[alarm.statistic], count


def datapoints(
    alarm: Any, data: Iterable[Any], now: float, *, extra_periods: int = EXTRA_PERIODS
) -> list[Datapoint]:
    """The alarm's values in the complete periods of its evaluation range at ``now``, newest first."""
    period = float(alarm.period)
    end = math.floor(now / period) * period
    start = end - (int(alarm.evaluation_periods) + extra_periods) * period
    # moto keeps naive UTC times: compared as they are, converted only inside the range
    first, last = (datetime.fromtimestamp(t, tz=UTC).replace(tzinfo=None) for t in (start, end))
    by_period: dict[float, list[Any]] = {}
    for datum in data:
        stamp = datum.timestamp
        if stamp.tzinfo is not None:
            stamp = stamp.astimezone(UTC).replace(tzinfo=None)
        if first <= stamp < last and belongs(alarm, datum):
            moment = epoch_seconds(stamp)
            by_period.setdefault(math.floor(moment / period) * period, []).append(datum)
    found = []
    for begin in sorted(by_period, reverse=True):
        value = _statistic(alarm, by_period[begin])
        if value is not None:
            found.append(Datapoint(begin, value[0], value[1]))
    return found


def _stamp(moment: float) -> str:
    return datetime.fromtimestamp(moment, tz=UTC).strftime("%d/%m/%y %H:%M:%S")


def evaluate(
    alarm: Any, data: Iterable[Any], now: float, *, extra_periods: int = EXTRA_PERIODS
) -> Evaluation:
    """The state ``alarm`` (moto's model, evaluable) is in at ``now`` given the datapoints ``data``."""
    compare, words = COMPARISONS[alarm.comparison_operator]
    threshold = float(alarm.threshold)
    periods = int(alarm.evaluation_periods)
    needed = int(alarm.datapoints_to_alarm or periods)
    treatment = alarm.treat_missing_data if alarm.treat_missing_data in _TREATMENTS else "missing"
    if alarm.namespace == "AWS/DynamoDB":
        treatment = "ignore"
    real = datapoints(alarm, data, now, extra_periods=extra_periods)
    evaluated = tuple(real[:periods])
    filled = periods - len(evaluated)
    statistic = alarm.extended_statistic or alarm.statistic
    reason_data: dict[str, Any] = {
        "version": "1.0",
        "queryDate": iso(now),
        "statistic": statistic,
        "period": int(alarm.period),
        "recentDatapoints": [p.value for p in reversed(evaluated)],
        "threshold": threshold,
        "evaluatedDatapoints": [
            {"timestamp": iso(p.start), "sampleCount": p.sample_count, "value": p.value} for p in evaluated
        ],
    }
    if evaluated:
        reason_data["startDate"] = iso(evaluated[-1].start)
    if not evaluated and treatment in ("missing", "ignore"):
        state = INSUFFICIENT_DATA if treatment == "missing" else alarm.state_value
        reason = f"Insufficient Data: {periods} datapoint{'s were' if periods > 1 else ' was'} unknown."
        return Evaluation(state, reason, reason_data, evaluated)
    breaching = sum(1 for p in evaluated if compare(p.value, threshold))
    if treatment == "breaching":
        breaching += filled
    listed = ", ".join(f"{p.value} ({_stamp(p.start)})" for p in evaluated)
    if breaching >= needed:
        reason = (
            f"Threshold Crossed: {breaching} out of the last {periods} datapoints [{listed}] "
            f"{'were' if breaching > 1 else 'was'} {words} the threshold ({threshold}) "
            f"(minimum {needed} datapoint{'s' if needed > 1 else ''} for OK -> ALARM transition)."
        )
        return Evaluation(ALARM, reason, reason_data, evaluated)
    reason = (
        f"Threshold Crossed: {len(evaluated)} datapoint{'s' if len(evaluated) != 1 else ''} [{listed}] "
        f"{'were' if len(evaluated) != 1 else 'was'} not {words} the threshold ({threshold}) "
        f"(minimum {needed} datapoint{'s' if needed > 1 else ''} for OK -> ALARM transition)."
    )
    return Evaluation(OK, reason, reason_data, evaluated)
