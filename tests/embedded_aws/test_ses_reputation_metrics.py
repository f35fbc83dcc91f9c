"""The embedded SES publishes its reputation metrics to CloudWatch from what happened to the emails it
accepted, and an alarm on them pages and puts its event on the bus when the bounce rate crosses it.

Pages: https://docs.aws.amazon.com/ses/latest/dg/reputationdashboard-cloudwatch-alarm.html
(Reputation.BounceRate and Reputation.ComplaintRate in AWS/SES, fractions),
https://docs.aws.amazon.com/ses/latest/dg/monitor-sender-reputation.html (hard bounces and complaints
over the emails sent), https://aws.amazon.com/blogs/ses/announcing-the-reputation-dashboard/ (a
representative volume), https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_ReputationOptions.html
(per configuration set when enabled).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from embedded_aws.alarm_runner import evaluate_alarms
from embedded_aws.base import client
from embedded_aws.clock import VirtualClock
from embedded_aws.ses_event_publishing import pending_events
from embedded_aws.ses_outcomes import ses_outcomes, set_ses_outcomes
from embedded_aws.ses_reputation_metrics import (
    BOUNCE_RATE,
    COMPLAINT_RATE,
    NAMESPACE,
    ReputationPublisher,
    ReputationSettings,
    publish_reputation_metrics,
    reputation_rates,
)
from tests.embedded_aws.conftest import Lab, wait_for
from tests.embedded_aws.test_eventbridge_rules import drain, rule_to_queue
from tests.embedded_aws.test_ses_events import CONFIG_SET, REGION, configuration_set, send


@pytest.fixture(autouse=True)
def everyone_delivered() -> Iterator[None]:
    set_ses_outcomes(None)
    yield
    set_ses_outcomes(None)


def published(lab: Lab, metric: str, dimensions: list[dict[str, str]] | None = None) -> list[float]:
    """Every value of the metric CloudWatch holds, oldest first."""
    answer = client("cloudwatch", lab.endpoint, REGION).get_metric_statistics(
        Namespace=NAMESPACE,
        MetricName=metric,
        Dimensions=dimensions or [],
        StartTime=datetime(2000, 1, 1, tzinfo=UTC),
        EndTime=datetime(2100, 1, 1, tzinfo=UTC),
        Period=60,
        Statistics=["Maximum"],
    )
    return [point["Maximum"] for point in sorted(answer["Datapoints"], key=lambda p: p["Timestamp"])]


def test_the_rates_are_hard_bounces_and_complaints_over_the_emails_sent(
    lab: Lab, clock: VirtualClock
) -> None:
    # GIVEN a configuration set that reports its reputation, and four emails: one hard bounce, one
    # soft bounce, one complaint, one delivered
    configuration_set(lab.endpoint, reputation_metrics=True)
    with ses_outcomes(
        hard_bounce={"gone@example.org"}, soft_bounce={"full@example.org"}, complain={"angry@example.org"}
    ):
        for address in ("gone@example.org", "full@example.org", "angry@example.org", "fine@example.org"):
            send(lab.endpoint, address)
    wait_for(lambda: pending_events(REGION) == 0)
    # WHEN the reputation metrics are published
    publish_reputation_metrics(REGION)
    # THEN the account's and the configuration set's rates are 1 in 4 each (the soft bounce not counted)
    assert published(lab, BOUNCE_RATE) == [0.25]
    assert published(lab, COMPLAINT_RATE) == [0.25]
    by_set = [{"Name": "ses:configuration-set", "Value": CONFIG_SET}]
    assert published(lab, BOUNCE_RATE, by_set) == [0.25]
    assert published(lab, COMPLAINT_RATE, by_set) == [0.25]


def test_a_bounce_counts_from_the_moment_it_happened(lab: Lab, clock: VirtualClock) -> None:
    # GIVEN an email whose hard bounce comes a virtual hour after the send
    configuration_set(lab.endpoint)
    with ses_outcomes(hard_bounce={"gone@example.org"}, delivery_seconds=3600):
        send(lab.endpoint, "gone@example.org")
    # WHEN the rates are read before and after that moment
    [before] = reputation_rates(REGION)
    # THEN the bounce is only in the later one
    assert (before.emails, before.bounce_rate) == (1, 0.0)
    clock.advance(3600)
    wait_for(lambda: pending_events(REGION) == 0)
    [after] = reputation_rates(REGION)
    assert (after.emails, after.bounce_rate) == (1, 1.0)


def test_the_rates_are_over_the_representative_volume_of_the_latest_emails(
    lab: Lab, clock: VirtualClock
) -> None:
    # GIVEN two bounced emails followed by two delivered ones
    configuration_set(lab.endpoint)
    with ses_outcomes(hard_bounce={"a@example.org", "b@example.org"}):
        for address in ("a@example.org", "b@example.org", "c@example.org", "d@example.org"):
            send(lab.endpoint, address)
    wait_for(lambda: pending_events(REGION) == 0)
    # WHEN the rates are over the last two emails, then over all four
    [latest] = reputation_rates(REGION, volume=2)
    [everything] = reputation_rates(REGION, volume=4)
    # THEN the bounces fell out of the smaller window
    assert (latest.emails, latest.bounce_rate) == (2, 0.0)
    assert (everything.emails, everything.bounce_rate) == (4, 0.5)


def test_the_publisher_starts_at_the_first_bounce_or_complaint_then_publishes_once_per_period(
    lab: Lab, clock: VirtualClock
) -> None:
    # GIVEN a publisher every 60 virtual seconds and a delivered email: no bounce or complaint yet
    configuration_set(lab.endpoint)
    publisher = ReputationPublisher(REGION, settings=ReputationSettings(publish_seconds=60))
    send(lab.endpoint, "fine@example.org")
    wait_for(lambda: pending_events(REGION) == 0)
    first = clock.now()
    assert publisher.tick(first) == []
    # WHEN an email hard-bounced and, a period on, the publisher ticks three times within a minute,
    # then a minute later
    with ses_outcomes(hard_bounce={"gone@example.org"}):
        send(lab.endpoint, "gone@example.org")
    wait_for(lambda: pending_events(REGION) == 0)
    later = max(clock.now(), first + 60)
    ticks = [publisher.tick(later), publisher.tick(later + 30), publisher.tick(later + 59)]
    ticks.append(publisher.tick(later + 60))
    # THEN it published at the first tick and the last only
    assert [len(t) for t in ticks] == [1, 0, 0, 1]
    assert published(lab, BOUNCE_RATE) == [0.5, 0.5]


def test_a_bounce_rate_over_the_alarm_level_pages_and_puts_the_alarm_event_within_one_period(
    lab: Lab, clock: VirtualClock
) -> None:
    # GIVEN the email module's kind of alarm on the account's bounce rate (Maximum over 900 s, one
    # period, missing data not breaching) paging a topic, and a rule taking alarm events to a queue
    sqs_url, queue_arn, _ = lab.queue("pager")
    sns = client("sns", lab.endpoint, REGION)
    topic = str(sns.create_topic(Name="alarms")["TopicArn"])
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn)
    events_url, _ = rule_to_queue(
        lab, "guard", {"source": ["aws.cloudwatch"], "detail": {"state": {"value": ["ALARM"]}}}
    )
    client("cloudwatch", lab.endpoint, REGION).put_metric_alarm(
        AlarmName="bounce-rate",
        Namespace=NAMESPACE,
        MetricName=BOUNCE_RATE,
        Statistic="Maximum",
        Period=900,
        EvaluationPeriods=1,
        Threshold=0.025,
        ComparisonOperator="GreaterThanOrEqualToThreshold",
        TreatMissingData="notBreaching",
        AlarmActions=[topic],
    )
    configuration_set(lab.endpoint)
    # WHEN one email in four hard-bounces and the rate is published
    with ses_outcomes(hard_bounce={"gone@example.org"}):
        for address in ("gone@example.org", "b@example.org", "c@example.org", "d@example.org"):
            send(lab.endpoint, address)
    wait_for(lambda: pending_events(REGION) == 0)
    at = clock.now()
    publish_reputation_metrics(REGION, now=at)
    period_end = (math.floor(at / 900) + 1) * 900
    # THEN the alarm is not in ALARM before its period ends, and is at the end of it
    evaluate_alarms(REGION, now=period_end - 1)
    assert drain(lab, events_url) == []
    [change] = evaluate_alarms(REGION, now=period_end)
    assert change.new_state == "ALARM"
    # ... a person is paged through the topic, and the guard's rule got the event, once each
    [page] = drain(lab, sqs_url)
    assert json.loads(json.loads(page["Body"])["Message"])["AlarmName"] == "bounce-rate"
    [event] = drain(lab, events_url)
    assert json.loads(event["Body"])["detail"]["alarmName"] == "bounce-rate"
