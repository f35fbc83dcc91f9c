"""What CloudWatch does when a metric alarm changes state: the new state kept on the alarm, its actions'
SNS notifications, the "CloudWatch Alarm State Change" event on the default bus, and a record of each.

moto runs none of it (``alarm_evaluation`` says why alarms never change state there). On AWS:

- the alarm's state, reason and reason data change (DescribeAlarms shows them) and the change is in
  its history (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_DescribeAlarmHistory.html);
- when its actions are enabled, the actions of the new state run (``AlarmActions`` for ALARM,
  ``OKActions`` for OK, ``InsufficientDataActions``): an SNS topic is sent a notification
  (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Notify_Users_Alarm_Changes.html);
  the message here is the JSON AWS sends (``AlarmName``, ``AlarmDescription``, ``AWSAccountId``,
  ``NewStateValue``, ``NewStateReason``, ``StateChangeTime``, ``Region``, ``AlarmArn``,
  ``OldStateValue``, the action lists and the ``Trigger``), its subject ``ALARM: "name" in <Region>``,
  unconfirmed (the page shows no message; AWS writes the Region's long name, here its code). Other
  action kinds (Auto Scaling, EC2, Systems Manager, Lambda) are recorded as not run;
- whatever the actions, CloudWatch sends a ``CloudWatch Alarm State Change`` event (source
  ``aws.cloudwatch``, the alarm's ARN in ``resources``; ``detail`` with ``alarmName``, ``state`` and
  ``previousState`` (value, reason, reasonData, timestamp) and ``configuration`` (description and
  the metric)) to the account's default event bus, delivery guaranteed
  (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-and-eventbridge.html).
  Here it goes through ``event_bus.deliver_event``, so rules with SQS or Lambda targets get it.

``change_state`` does all of it for one evaluation; ``alarm_state_changes`` reads the record (in the
process running moto). An action or event that cannot be delivered (its topic is gone, say) is kept in
the change's ``errors``; the state change stands, as on AWS.
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass
from typing import Any

from embedded_aws.alarm_evaluation import ALARM, OK, Evaluation, epoch_seconds, iso

_STATE = "_outreach_alarm_changes"
_LOCK = threading.Lock()
_DETAIL_TYPE = "CloudWatch Alarm State Change"


@dataclass(frozen=True)
class AlarmStateChange:
    """One state change of one alarm: when (virtual seconds), from and to, why, what it notified."""

    alarm_name: str
    alarm_arn: str
    old_state: str
    new_state: str
    reason: str
    at: float
    notified: tuple[str, ...]  # the SNS topics sent the notification
    not_run: tuple[str, ...]  # actions of other kinds
    event_id: str  # the id of the event put on the default bus
    errors: tuple[str, ...] = ()


def _backend(region: str, account_id: str | None) -> Any:
    from moto.cloudwatch.models import cloudwatch_backends
    from moto.core.models import DEFAULT_ACCOUNT_ID

    return cloudwatch_backends[account_id or DEFAULT_ACCOUNT_ID][region]


def _record(backend: Any) -> list[AlarmStateChange]:
    """Per CloudWatch backend (account and region), created on first use; moto's reset drops it."""
    with _LOCK:
        found = backend.__dict__.get(_STATE)
        if found is None:
            found = []
            backend.__dict__[_STATE] = found
        return found  # type: ignore[no-any-return]


def alarm_state_changes(
    region: str, account_id: str | None = None, alarm_name: str | None = None
) -> list[AlarmStateChange]:
    """Every state change of the alarms of ``region`` (or of one alarm), oldest first."""
    changes = _record(_backend(region, account_id))
    with _LOCK:
        return [c for c in changes if alarm_name is None or c.alarm_name == alarm_name]


def _actions(alarm: Any, state: str) -> list[str]:
    if state == ALARM:
        return list(alarm.alarm_actions or [])
    if state == OK:
        return list(alarm.ok_actions or [])
    return list(alarm.insufficient_data_actions or [])


def _dimensions(alarm: Any) -> dict[str, str]:
    return {str(d.name): str(d.value) for d in alarm.dimensions}


def _notification(alarm: Any, account_id: str, old: str, evaluation: Evaluation, at: float) -> str:
    trigger = {
        "MetricName": alarm.metric_name,
        "Namespace": alarm.namespace,
        "StatisticType": "ExtendedStatistic" if alarm.extended_statistic else "Statistic",
        "Statistic": (alarm.extended_statistic or alarm.statistic or "").upper(),
        "Unit": alarm.unit,
        "Dimensions": [{"value": v, "name": n} for n, v in _dimensions(alarm).items()],
        "Period": int(alarm.period),
        "EvaluationPeriods": int(alarm.evaluation_periods),
        "DatapointsToAlarm": int(alarm.datapoints_to_alarm or alarm.evaluation_periods),
        "ComparisonOperator": alarm.comparison_operator,
        "Threshold": float(alarm.threshold),
        "TreatMissingData": alarm.treat_missing_data or "missing",
        "EvaluateLowSampleCountPercentile": alarm.evaluate_low_sample_count_percentile or "",
    }
    return json.dumps(
        {
            "AlarmName": alarm.name,
            "AlarmDescription": alarm.description,
            "AWSAccountId": account_id,
            "AlarmConfigurationUpdatedTimestamp": iso(epoch_seconds(alarm.configuration_updated_timestamp)),
            "NewStateValue": evaluation.state,
            "NewStateReason": evaluation.reason,
            "StateChangeTime": iso(at),
            "Region": alarm.region_name,
            "AlarmArn": alarm.alarm_arn,
            "OldStateValue": old,
            "OKActions": list(alarm.ok_actions or []),
            "AlarmActions": list(alarm.alarm_actions or []),
            "InsufficientDataActions": list(alarm.insufficient_data_actions or []),
            "Trigger": trigger,
        }
    )


def _event(
    alarm: Any, account_id: str, previous: dict[str, Any], evaluation: Evaluation, at: float
) -> dict[str, Any]:
    from embedded_aws.event_bus import event_time

    metric = {"namespace": alarm.namespace, "name": alarm.metric_name, "dimensions": _dimensions(alarm)}
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": _DETAIL_TYPE,
        "source": "aws.cloudwatch",
        "account": account_id,
        "time": event_time(at),
        "region": alarm.region_name,
        "resources": [alarm.alarm_arn],
        "detail": {
            "alarmName": alarm.name,
            "state": {
                "value": evaluation.state,
                "reason": evaluation.reason,
                "reasonData": json.dumps(evaluation.reason_data),
                "timestamp": iso(at),
            },
            "previousState": previous,
            "configuration": {
                "description": alarm.description,
                "metrics": [
                    {
                        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, alarm.alarm_arn)),
                        "metricStat": {
                            "metric": metric,
                            "period": int(alarm.period),
                            "stat": alarm.extended_statistic or alarm.statistic,
                        },
                        "returnData": True,
                    }
                ],
            },
        },
    }


def _described(exc: Exception) -> str:
    return f"{type(exc).__name__}: {getattr(exc, 'message', None) or exc}"


def change_state(alarm: Any, account_id: str, evaluation: Evaluation, at: float) -> AlarmStateChange:
    """Put ``alarm`` (moto's model) in the evaluated state and do what CloudWatch does on the change."""
    from moto.sns.models import sns_backends

    from embedded_aws.base import arn_parts
    from embedded_aws.event_bus import deliver_event

    old = str(alarm.state_value)
    previous = {
        "value": old,
        "reason": alarm.state_reason,
        "reasonData": alarm.state_reason_data,
        "timestamp": iso(epoch_seconds(alarm.state_updated_timestamp)),
    }
    alarm.update_state(evaluation.reason, json.dumps(evaluation.reason_data), evaluation.state)
    notified: list[str] = []
    not_run: list[str] = []
    errors: list[str] = []
    if alarm.actions_enabled:
        for action in _actions(alarm, evaluation.state):
            if not action.startswith("arn:") or arn_parts(action)[0] != "sns":
                not_run.append(action)
                continue
            _, region, account, _ = arn_parts(action)
            subject = f'{evaluation.state}: "{alarm.name}" in {alarm.region_name}'[:100]
            try:
                sns_backends[account][region].publish(
                    _notification(alarm, account_id, old, evaluation, at), arn=action, subject=subject
                )
            except Exception as exc:  # outcome: kept in the change's errors; the state change stands
                errors.append(f"{action}: {_described(exc)}")
                continue
            notified.append(action)
    event = _event(alarm, account_id, previous, evaluation, at)
    try:
        deliver_event(account_id, alarm.region_name, "default", event)
    except Exception as exc:  # outcome: kept in the change's errors; the state change stands
        errors.append(f"{_DETAIL_TYPE} to the default bus: {_described(exc)}")
    change = AlarmStateChange(
        alarm.name,
        alarm.alarm_arn,
        old,
        evaluation.state,
        evaluation.reason,
        at,
        tuple(notified),
        tuple(not_run),
        str(event["id"]),
        tuple(errors),
    )
    changes = _record(_backend(alarm.region_name, account_id))
    with _LOCK:
        changes.append(change)
    return change
