"""The sending guard: a reputation stop alarm's change to ALARM pauses the configuration set (once or
many times, the same pause) and is counted; an event it cannot act on (another source, another alarm,
another state, a malformed field) raises a named error for the DLQ and pauses nothing."""

from __future__ import annotations

import copy
import json
from typing import Any

import boto3
import pytest

from embedded_aws.ses_v2 import sending_enabled
from outreach import sending_guard
from outreach.errors import AlarmEventError
from tests.support.aws import REGION, Resources
from tests.support.email import CONFIGURATION_SET, create_ses_resources
from tests.support.lambda_context import FakeContext

BOUNCE_STOP = "outreach-test-email-bounce-rate-stop"
COMPLAINT_STOP = "outreach-test-email-complaint-rate-stop"

# CloudWatch's event for a single-metric alarm's state change, as its documentation shows it
# (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-and-eventbridge.html).
ALARM_EVENT: dict[str, Any] = {
    "version": "0",
    "id": "c4c1c1c9-6542-e61b-6ef0-8c4d36933a92",
    "detail-type": "CloudWatch Alarm State Change",
    "source": "aws.cloudwatch",
    "account": "123456789012",
    "time": "2027-03-02T10:04:40Z",
    "region": REGION,
    "resources": [f"arn:aws:cloudwatch:{REGION}:123456789012:alarm:{BOUNCE_STOP}"],
    "detail": {
        "alarmName": BOUNCE_STOP,
        "state": {
            "value": "ALARM",
            "reason": "Threshold Crossed: 1 datapoint [0.0625 (02/03/27 10:00:00)] was >= the threshold.",
            "reasonData": json.dumps(
                {"version": "1.0", "statistic": "Maximum", "period": 900, "recentDatapoints": [0.0625]}
            ),
            "timestamp": "2027-03-02T10:04:40.985+0000",
        },
        "previousState": {"value": "OK", "timestamp": "2027-03-02T09:49:40.985+0000"},
        "configuration": {"description": "stop level"},
    },
}


@pytest.fixture
def guard(resources: Resources, monkeypatch: pytest.MonkeyPatch) -> None:
    """SES with the configuration set sending, and the guard's settings as modules/email sets them."""
    create_ses_resources()
    monkeypatch.setenv("EMAIL_CONFIGURATION_SET", CONFIGURATION_SET)
    monkeypatch.setenv("REPUTATION_STOP_ALARMS", f"{BOUNCE_STOP},{COMPLAINT_STOP}")


def _sending() -> bool:
    from moto.core.models import DEFAULT_ACCOUNT_ID
    from moto.sesv2.models import sesv2_backends

    return sending_enabled(sesv2_backends[DEFAULT_ACCOUNT_ID][REGION], CONFIGURATION_SET)


def _metrics(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if '"_aws"' in line]


def test_a_stop_alarm_going_to_alarm_pauses_the_configuration_set(
    guard: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _sending()

    result = sending_guard.lambda_handler(copy.deepcopy(ALARM_EVENT), FakeContext())

    assert result == {"alarm": BOUNCE_STOP, "configuration_set": CONFIGURATION_SET, "sending": "paused"}
    assert not _sending()
    described = boto3.client("sesv2", region_name=REGION).get_configuration_set(
        ConfigurationSetName=CONFIGURATION_SET
    )
    assert described["SendingOptions"]["SendingEnabled"] is False
    emitted = _metrics(capsys.readouterr().out)
    assert any(line.get("SendingPausedByGuard") == [1.0] for line in emitted)


def test_a_repeated_event_or_the_other_stop_alarm_leaves_sending_paused(guard: None) -> None:
    complaint = copy.deepcopy(ALARM_EVENT)
    complaint["detail"]["alarmName"] = COMPLAINT_STOP
    for event in (ALARM_EVENT, ALARM_EVENT, complaint):
        sending_guard.lambda_handler(copy.deepcopy(event), FakeContext())
        assert not _sending()


def test_the_guard_reads_which_alarm_and_the_value_that_crossed_the_level() -> None:
    alarm = sending_guard.read_stop_alarm(ALARM_EVENT, frozenset({BOUNCE_STOP}))
    assert alarm.name == BOUNCE_STOP
    assert alarm.value == 0.0625
    assert alarm.timestamp == "2027-03-02T10:04:40.985+0000"


def _changed(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    event = copy.deepcopy(ALARM_EVENT)
    target = event
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return event


@pytest.mark.parametrize(
    ("event", "field"),
    [
        (_changed(("source",), "aws.ses"), "source"),
        (_changed(("detail-type",), "CloudWatch Alarm Configuration Change"), "detail-type"),
        (_changed(("detail", "alarmName"), "outreach-test-email-bounce-rate"), "detail.alarmName"),
        (_changed(("detail", "alarmName"), "x" * 300), "detail.alarmName"),
        (_changed(("detail", "state", "value"), "OK"), "detail.state.value"),
        (_changed(("detail", "state"), "ALARM"), "detail.state"),
        (_changed(("detail", "state", "reasonData"), "{not json"), "detail.state.reasonData"),
        (_changed(("detail", "state", "reason"), "r" * 2000), "detail.state.reason"),
        (_changed(("detail",), None), "detail"),
        ([], "event"),
    ],
)
def test_an_event_the_guard_cannot_act_on_is_raised_by_name_and_pauses_nothing(
    guard: None, event: Any, field: str
) -> None:
    with pytest.raises(AlarmEventError) as raised:
        sending_guard.lambda_handler(event, FakeContext())
    assert raised.value.reason.startswith(f"{field}:")
    assert _sending()
