"""The embedded CloudWatch evaluates metric alarms as CloudWatch does, on the virtual clock, and acts on
each state change once: the state on the alarm, the SNS notification, the EventBridge event.

Pages: https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html
("Evaluating an alarm": Period, EvaluationPeriods, DatapointsToAlarm; alarm states),
https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarms-and-missing-data.html
(TreatMissingData), https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Notify_Users_Alarm_Changes.html
(SNS actions), https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-and-eventbridge.html
(the "CloudWatch Alarm State Change" event), https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html
(an update keeps the state).
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

import pytest

from embedded_aws.alarm_actions import alarm_state_changes
from embedded_aws.alarm_runner import MetricAlarmRunner, evaluate_alarms
from embedded_aws.base import client
from embedded_aws.clock import VirtualClock
from embedded_aws.cloud import LocalCloud
from embedded_aws.runtime import FunctionRuntime
from tests.embedded_aws.conftest import Lab, wait_for
from tests.embedded_aws.test_eventbridge_rules import EVENT_RECORDER, drain, rule_to_queue

REGION = "us-east-1"
NAMESPACE = "Outreach/Test"
METRIC = "Bounces"
PERIOD = 60
ALARM_EVENTS = {"source": ["aws.cloudwatch"], "detail-type": ["CloudWatch Alarm State Change"]}


def period_start(clock: VirtualClock, periods_ago: int = 10) -> float:
    """The start of a whole period ``periods_ago`` periods before now: a fixed past to place data in."""
    return (math.floor(clock.now() / PERIOD) - periods_ago) * PERIOD


def put(lab: Lab, at: float, value: float, **extra: Any) -> None:
    client("cloudwatch", lab.endpoint).put_metric_data(
        Namespace=NAMESPACE,
        MetricData=[
            {"MetricName": METRIC, "Value": value, "Timestamp": datetime.fromtimestamp(at, tz=UTC), **extra}
        ],
    )


def alarm(lab: Lab, name: str = "bounces", **settings: Any) -> None:
    client("cloudwatch", lab.endpoint).put_metric_alarm(
        **{
            "AlarmName": name,
            "Namespace": NAMESPACE,
            "MetricName": METRIC,
            "Statistic": "Maximum",
            "Period": PERIOD,
            "EvaluationPeriods": 1,
            "Threshold": 5.0,
            "ComparisonOperator": "GreaterThanOrEqualToThreshold",
            **settings,
        }
    )


def state(lab: Lab, name: str = "bounces") -> str:
    found = client("cloudwatch", lab.endpoint).describe_alarms(AlarmNames=[name])["MetricAlarms"]
    return str(found[0]["StateValue"])


def topic_to_queue(lab: Lab, name: str) -> tuple[str, str]:
    """An SNS topic with a new queue subscribed: (topic ARN, queue URL)."""
    url, queue_arn, _ = lab.queue(f"{name}-subscriber")
    sns = client("sns", lab.endpoint)
    topic = str(sns.create_topic(Name=name)["TopicArn"])
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn)
    return topic, url


def test_a_new_alarm_starts_with_insufficient_data_and_an_update_keeps_its_state(
    lab: Lab, clock: VirtualClock
) -> None:
    # GIVEN a new alarm: it has no data yet
    alarm(lab)
    assert state(lab) == "INSUFFICIENT_DATA"
    # WHEN its metric breaches for a whole period and it is evaluated, then its threshold is updated
    start = period_start(clock)
    put(lab, start + 1, 9.0)
    evaluate_alarms(REGION, now=start + PERIOD)
    assert state(lab) == "ALARM"
    alarm(lab, Threshold=6.0)
    # THEN the update changed the configuration, not the state
    found = client("cloudwatch", lab.endpoint).describe_alarms(AlarmNames=["bounces"])["MetricAlarms"][0]
    assert (found["Threshold"], found["StateValue"]) == (6.0, "ALARM")


def test_an_alarm_goes_to_alarm_when_the_breaching_period_ends_and_not_before(
    lab: Lab, clock: VirtualClock
) -> None:
    # GIVEN an alarm on one 60 s period and a breaching datapoint 10 s into a period
    alarm(lab)
    start = period_start(clock)
    put(lab, start + 10, 7.0)
    # WHEN it is evaluated while that period is still running
    assert evaluate_alarms(REGION, now=start + PERIOD - 1) == []
    # THEN nothing changed; once the period has ended it is in ALARM, one period after the data at most
    assert state(lab) == "INSUFFICIENT_DATA"
    [change] = evaluate_alarms(REGION, now=start + PERIOD)
    assert (change.old_state, change.new_state, change.at) == ("INSUFFICIENT_DATA", "ALARM", start + PERIOD)
    assert state(lab) == "ALARM"
    assert change.reason.startswith("Threshold Crossed: 1 out of the last 1 datapoints [7.0")


def test_m_out_of_n_needs_datapoints_to_alarm_breaching_periods(lab: Lab, clock: VirtualClock) -> None:
    # GIVEN an alarm that needs 2 breaching periods out of the last 3
    alarm(lab, EvaluationPeriods=3, DatapointsToAlarm=2)
    start = period_start(clock)
    put(lab, start + 1, 1.0)
    put(lab, start + PERIOD + 1, 8.0)
    # WHEN one of three periods breached
    evaluate_alarms(REGION, now=start + 2 * PERIOD)
    # THEN it is OK; the second breaching period puts it in ALARM
    assert state(lab) == "OK"
    put(lab, start + 2 * PERIOD + 1, 5.0)
    evaluate_alarms(REGION, now=start + 3 * PERIOD)
    assert state(lab) == "ALARM"
    # ... and fewer than two breaching of the last three bring it back to OK
    put(lab, start + 3 * PERIOD + 1, 0.0)
    put(lab, start + 4 * PERIOD + 1, 0.0)
    evaluate_alarms(REGION, now=start + 4 * PERIOD)
    assert state(lab) == "ALARM"
    evaluate_alarms(REGION, now=start + 5 * PERIOD)
    assert state(lab) == "OK"


def test_the_statistic_aggregates_each_period_before_the_comparison(lab: Lab, clock: VirtualClock) -> None:
    # GIVEN an Average alarm and a period whose maximum breaches but whose average does not
    alarm(lab, Statistic="Average")
    start = period_start(clock)
    for value in (9.0, 1.0, 2.0):
        put(lab, start + 5, value)
    # WHEN it is evaluated
    evaluate_alarms(REGION, now=start + PERIOD)
    # THEN it is OK (average 4 < 5); a Maximum alarm on the same data is in ALARM
    assert state(lab) == "OK"
    alarm(lab, "bounces-max")
    evaluate_alarms(REGION, now=start + PERIOD)
    assert state(lab, "bounces-max") == "ALARM"


def test_missing_data_is_treated_as_the_alarm_says(lab: Lab, clock: VirtualClock) -> None:
    # GIVEN one alarm per treatment and a datapoint far outside their evaluation range
    start = period_start(clock)
    put(lab, start - 100 * PERIOD, 9.0)
    for treatment in ("missing", "notBreaching", "breaching", "ignore"):
        alarm(lab, treatment, TreatMissingData=treatment)
    # WHEN they are evaluated with every datapoint of their range missing
    evaluate_alarms(REGION, now=start + PERIOD)
    # THEN missing: INSUFFICIENT_DATA, notBreaching: OK, breaching: ALARM, ignore: as it was
    assert [state(lab, t) for t in ("missing", "notBreaching", "breaching", "ignore")] == [
        "INSUFFICIENT_DATA",
        "OK",
        "ALARM",
        "INSUFFICIENT_DATA",
    ]


def test_each_state_change_notifies_the_topic_once_and_puts_one_event_on_the_default_bus(
    lab: Lab, clock: VirtualClock
) -> None:
    # GIVEN an alarm whose ALARM and OK actions are a topic a queue subscribes to, and a rule taking
    # alarm state change events to another queue
    topic, notifications = topic_to_queue(lab, "alarm-topic")
    events_url, _ = rule_to_queue(lab, "alarm-events", ALARM_EVENTS)
    alarm(lab, AlarmActions=[topic], OKActions=[topic], AlarmDescription="bounces are up")
    start = period_start(clock)
    put(lab, start + 1, 9.0)
    # WHEN it is evaluated three times in the same state (ALARM), then the data recovers
    for _ in range(3):
        evaluate_alarms(REGION, now=start + PERIOD)
    # THEN the topic got one ALARM notification and the bus one event
    [message] = drain(lab, notifications)
    notice = json.loads(json.loads(message["Body"])["Message"])
    assert (notice["AlarmName"], notice["OldStateValue"], notice["NewStateValue"]) == (
        "bounces",
        "INSUFFICIENT_DATA",
        "ALARM",
    )
    assert notice["Trigger"]["MetricName"] == METRIC
    [delivered] = drain(lab, events_url)
    event = json.loads(delivered["Body"])
    assert (event["source"], event["detail-type"]) == ("aws.cloudwatch", "CloudWatch Alarm State Change")
    assert event["resources"] == [notice["AlarmArn"]]
    detail = event["detail"]
    assert (detail["alarmName"], detail["state"]["value"], detail["previousState"]["value"]) == (
        "bounces",
        "ALARM",
        "INSUFFICIENT_DATA",
    )
    assert json.loads(detail["state"]["reasonData"])["recentDatapoints"] == [9.0]
    metric = detail["configuration"]["metrics"][0]["metricStat"]
    assert (metric["metric"]["name"], metric["period"], metric["stat"]) == (METRIC, PERIOD, "Maximum")
    # ... and the change back to OK one of each again
    put(lab, start + PERIOD + 1, 0.0)
    evaluate_alarms(REGION, now=start + 2 * PERIOD)
    evaluate_alarms(REGION, now=start + 2 * PERIOD)
    [ok] = drain(lab, notifications)
    assert json.loads(json.loads(ok["Body"])["Message"])["NewStateValue"] == "OK"
    [back] = drain(lab, events_url)
    assert json.loads(back["Body"])["detail"]["state"]["value"] == "OK"
    assert [(c.new_state, c.notified) for c in alarm_state_changes(REGION, alarm_name="bounces")] == [
        ("ALARM", (topic,)),
        ("OK", (topic,)),
    ]


def test_disabled_actions_change_the_state_and_send_the_event_but_not_the_notification(
    lab: Lab, clock: VirtualClock
) -> None:
    # GIVEN an alarm with actions disabled
    topic, notifications = topic_to_queue(lab, "quiet-topic")
    events_url, _ = rule_to_queue(lab, "quiet-events", ALARM_EVENTS)
    alarm(lab, AlarmActions=[topic], ActionsEnabled=False)
    start = period_start(clock)
    put(lab, start + 1, 9.0)
    # WHEN it breaches
    evaluate_alarms(REGION, now=start + PERIOD)
    # THEN it is in ALARM and the event went out, the notification did not
    assert state(lab) == "ALARM"
    assert len(drain(lab, events_url)) == 1
    assert drain(lab, notifications) == []


def test_an_alarm_whose_metric_never_had_a_datapoint_keeps_its_state(lab: Lab, clock: VirtualClock) -> None:
    # GIVEN an alarm on a metric nothing publishes here (as moto's own services publish none), whose
    # missing data would breach
    alarm(lab, "queue-depth", MetricName="ApproximateNumberOfMessagesVisible", TreatMissingData="breaching")
    # WHEN alarms are evaluated
    evaluate_alarms(REGION, now=period_start(clock) + PERIOD)
    # THEN it was left as created
    assert state(lab, "queue-depth") == "INSUFFICIENT_DATA"


def test_the_cloud_loop_evaluates_the_alarms_by_itself_on_the_virtual_clock(
    lab: Lab, clock: VirtualClock
) -> None:
    # GIVEN the alarm loop running and an alarm whose metric breaches now
    alarm(lab)
    runner = MetricAlarmRunner(clock, region=REGION, tick_real_seconds=0.05)
    runner.start()
    try:
        put(lab, clock.now(), 9.0)
        # WHEN the virtual clock passes the end of the period
        clock.advance(PERIOD)
        # THEN the loop has put it in ALARM without being asked
        wait_for(lambda: state(lab) == "ALARM")
    finally:
        runner.stop()
    assert alarm_state_changes(REGION, alarm_name="bounces")[0].new_state == "ALARM"


@pytest.mark.e2e
def test_in_the_local_cloud_an_alarm_event_invokes_the_rule_s_lambda_target_once(
    lab: Lab, clock: VirtualClock, runtime: FunctionRuntime
) -> None:
    # GIVEN the local cloud running, a rule on ALARM state changes whose Lambda target admits the rule,
    # and an alarm whose metric breaches now
    events = client("events", lab.endpoint)
    function = lab.function("guard", EVENT_RECORDER)
    pattern = {"source": ["aws.cloudwatch"], "detail": {"state": {"value": ["ALARM"]}}}
    rule_arn = events.put_rule(Name="guard", EventPattern=json.dumps(pattern))["RuleArn"]
    lab.lam.add_permission(
        FunctionName="guard",
        StatementId="events",
        Action="lambda:InvokeFunction",
        Principal="events.amazonaws.com",
        SourceArn=rule_arn,
    )
    events.put_targets(Rule="guard", Targets=[{"Id": "guard", "Arn": function}])
    alarm(lab)
    with LocalCloud(lab.endpoint, clock, runtime, region=REGION):
        put(lab, clock.now(), 9.0)
        # WHEN the virtual clock passes the end of the period
        clock.advance(PERIOD)
        # THEN the function gets the alarm's state change event, once
        wait_for(lambda: len(lab.invocations()) == 1)
        [invocation] = lab.invocations()
        assert invocation["event"]["detail"]["alarmName"] == "bounces"
        assert invocation["event"]["detail"]["state"]["value"] == "ALARM"
        # ... and not again when its datapoint has left the evaluation range (INSUFFICIENT_DATA)
        clock.advance(3 * PERIOD)
        wait_for(lambda: len(alarm_state_changes(REGION, alarm_name="bounces")) == 2)
    assert alarm_state_changes(REGION, alarm_name="bounces")[1].new_state == "INSUFFICIENT_DATA"
    assert len(lab.invocations()) == 1
