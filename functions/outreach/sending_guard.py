"""Sending guard: a reputation stop alarm that went to ALARM pauses the configuration set's sending.

An EventBridge rule on the default bus (modules/email) hands the guard CloudWatch's "CloudWatch Alarm
State Change" events of the stop alarms (the account's SES bounce or complaint rate at the
``reputation_stop_levels``) whose new state is ALARM
(https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-and-eventbridge.html).
The same alarms page a person through the alarm topic. Per invocation (asynchronous):

- the event is read as a stranger's: source ``aws.cloudwatch``, that detail-type, an ``alarmName``
  among ``REPUTATION_STOP_ALARMS``, ``state.value`` ALARM, every text bounded; anything else raises
  ``AlarmEventError`` naming the field, and after Lambda's retries the event lands in the guard's DLQ
  (alarm);
- SES v2 ``PutConfigurationSetSendingOptions(SendingEnabled=false)`` on the environment's
  configuration set (``EMAIL_CONFIGURATION_SET``): SES refuses every send through it from then on
  (``sending_pause`` says what the worker does with those emails). Idempotent: pausing a paused set
  changes nothing, so a repeated event or a second alarm does no harm
  (https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_PutConfigurationSetSendingOptions.html);
- the alarm's name, its reason and the metric value that crossed the level (the last of
  ``state.reasonData``'s ``recentDatapoints``, when CloudWatch gave one) are logged, and the metric
  ``SendingPausedByGuard`` is published.

A failed call to SES raises: Lambda retries the event and then puts it in the DLQ. Nothing here turns
sending back on: a person does, with ``outreach sending resume``, once the cause is understood.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from outreach import clients, config
from outreach.errors import AlarmEventError
from outreach.observability import MetricUnit, logger, metrics

__all__ = ["StopAlarm", "lambda_handler", "pause_sending", "read_stop_alarm"]

SOURCE = "aws.cloudwatch"
DETAIL_TYPE = "CloudWatch Alarm State Change"
# CloudWatch's limits: an alarm name is at most 255 characters, a state reason 1023, its reasonData
# 4000 (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_SetAlarmState.html).
_MAX_NAME_CHARS = 255
_MAX_REASON_CHARS = 1023
_MAX_REASON_DATA_CHARS = 4000


@dataclass(frozen=True)
class StopAlarm:
    """A stop alarm's change to ALARM: which alarm, why, when, and the value that crossed the level."""

    name: str
    reason: str
    timestamp: str
    value: float | None


def _text(value: Any, field: str, limit: int, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise AlarmEventError(f"{field}: missing or not text")
    if len(value) > limit:
        raise AlarmEventError(f"{field}: longer than {limit} characters")
    return value


def _crossing_value(reason_data: str) -> float | None:
    """The last of ``recentDatapoints`` in the state's ``reasonData`` JSON; None when it names none."""
    if not reason_data:
        return None
    try:
        data = json.loads(reason_data)
    except json.JSONDecodeError as exc:
        raise AlarmEventError("detail.state.reasonData: not JSON") from exc
    points = data.get("recentDatapoints") if isinstance(data, dict) else None
    if not isinstance(points, list) or not points:
        return None
    last = points[-1]
    if isinstance(last, bool) or not isinstance(last, (int, float)) or not math.isfinite(last):
        raise AlarmEventError("detail.state.reasonData.recentDatapoints: not a number")
    return float(last)


def read_stop_alarm(event: Any, stop_alarms: frozenset[str]) -> StopAlarm:
    """The stop alarm an event reports going to ALARM; ``AlarmEventError`` naming the field otherwise."""
    if not isinstance(event, dict):
        raise AlarmEventError("event: not an object")
    if event.get("source") != SOURCE:
        raise AlarmEventError(f"source: not {SOURCE}")
    if event.get("detail-type") != DETAIL_TYPE:
        raise AlarmEventError(f"detail-type: not {DETAIL_TYPE}")
    detail = event.get("detail")
    if not isinstance(detail, dict):
        raise AlarmEventError("detail: not an object")
    name = _text(detail.get("alarmName"), "detail.alarmName", _MAX_NAME_CHARS)
    if name not in stop_alarms:
        raise AlarmEventError("detail.alarmName: not a reputation stop alarm")
    state = detail.get("state")
    if not isinstance(state, dict):
        raise AlarmEventError("detail.state: not an object")
    if state.get("value") != "ALARM":
        raise AlarmEventError("detail.state.value: not ALARM")
    return StopAlarm(
        name=name,
        reason=_text(state.get("reason"), "detail.state.reason", _MAX_REASON_CHARS, required=False),
        timestamp=_text(state.get("timestamp"), "detail.state.timestamp", 64, required=False),
        value=_crossing_value(
            _text(state.get("reasonData"), "detail.state.reasonData", _MAX_REASON_DATA_CHARS, required=False)
        ),
    )


def pause_sending(configuration_set: str) -> None:
    """Turn the configuration set's sending off (idempotent)."""
    clients.sesv2().put_configuration_set_sending_options(
        ConfigurationSetName=configuration_set, SendingEnabled=False
    )


@metrics.log_metrics
@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, str]:
    stop_alarms = config.for_sending_guard()
    configuration_set = config.email_configuration_set()
    try:
        alarm = read_stop_alarm(event, stop_alarms)
    except AlarmEventError as exc:
        # Raised on purpose: after Lambda's retries the event lands in the guard's DLQ and its alarm fires.
        logger.error("event the sending guard cannot act on", extra={"reason": exc.reason})
        metrics.add_metric(name="UnreadableEvents", unit=MetricUnit.Count, value=1)
        raise
    pause_sending(configuration_set)
    logger.warning(
        "sending paused by the reputation guard",
        extra={
            "alarm": alarm.name,
            "alarm_reason": alarm.reason,
            "alarm_at": alarm.timestamp,
            "metric_value": alarm.value,
            "configuration_set": configuration_set,
        },
    )
    metrics.add_metric(name="SendingPausedByGuard", unit=MetricUnit.Count, value=1)
    return {"alarm": alarm.name, "configuration_set": configuration_set, "sending": "paused"}
