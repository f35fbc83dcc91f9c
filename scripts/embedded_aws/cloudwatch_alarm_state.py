"""A CloudWatch alarm on the embedded AWS starts in INSUFFICIENT_DATA, and an update keeps its state.

moto creates every alarm in ``OK`` ("Unchecked: Initial alarm creation") and PutMetricAlarm on an
existing name replaces the alarm, state and history with it. On AWS an alarm that has just been
created has no data yet: INSUFFICIENT_DATA, "the alarm has just started"
(https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html, alarm
states), and "if you update an existing alarm, its state is left unchanged, but the update completely
overwrites the previous configuration of the alarm"
(https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html). That
matters once alarms are evaluated (``alarm_evaluation``): the first evaluation of a quiet alarm is a
change to OK (its OK actions run), and re-applying a configuration does not re-run an ALARM's actions.
Installed by ``start_alarms_without_data`` (idempotent).
"""

from __future__ import annotations

from typing import Any

from embedded_aws.alarm_evaluation import INSUFFICIENT_DATA

_PATCHED = "__outreach_alarm_state__"
_CARRIED = ("state_value", "state_reason", "state_reason_data", "state_updated_timestamp", "history")


def start_alarms_without_data() -> None:
    """Patch moto's PutMetricAlarm as described above (in-process and server mode). Idempotent."""
    from moto.cloudwatch.models import CloudWatchBackend

    if getattr(CloudWatchBackend, _PATCHED, False):
        return
    original = CloudWatchBackend.put_metric_alarm

    def put_metric_alarm(self: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        existing = self.alarms.get(name)
        alarm = original(self, name, *args, **kwargs)
        if existing is not None:
            for attribute in _CARRIED:
                setattr(alarm, attribute, getattr(existing, attribute))
        else:
            alarm.state_value = INSUFFICIENT_DATA
        return alarm

    CloudWatchBackend.put_metric_alarm = put_metric_alarm  # type: ignore[method-assign]
    setattr(CloudWatchBackend, _PATCHED, True)
