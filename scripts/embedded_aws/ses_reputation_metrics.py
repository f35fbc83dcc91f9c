"""SES reputation metrics on the embedded AWS: the account's (and configuration sets') bounce and complaint
rates, computed from what the embedded SES accepted and what happened to it, published to CloudWatch.

moto's SES publishes no metrics. SES publishes ``Reputation.BounceRate`` and
``Reputation.ComplaintRate`` in the ``AWS/SES`` namespace for the account, so that a CloudWatch alarm
can watch them: "decimal numbers between 0 and 1", which "might not appear in CloudWatch if your
account hasn't had any bounces or complaints"
(https://docs.aws.amazon.com/ses/latest/dg/reputationdashboard-cloudwatch-alarm.html; an alarm on
them treats missing data as not breaching). It publishes them for a configuration set too when its
``ReputationOptions.ReputationMetricsEnabled`` is true
(https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_ReputationOptions.html,
https://docs.aws.amazon.com/ses/latest/APIReference/API_UpdateConfigurationSetReputationMetricsEnabled.html).
The rates (https://docs.aws.amazon.com/ses/latest/dg/monitor-sender-reputation.html,
https://docs.aws.amazon.com/ses/latest/dg/reputationdashboard-dg.html):

- bounce rate: the share of the emails sent that hard-bounced (``Permanent`` bounces; soft bounces
  do not count);
- complaint rate: the share of the emails sent that recipients reported as spam;
- both over a "representative volume" of the account's email rather than a fixed time
  (https://aws.amazon.com/blogs/ses/announcing-the-reputation-dashboard/), so a
  week with a handful of sends does not swing them.

Here an email is one recipient of an accepted SendEmail (``ses_v2.sent_emails``), and what happened
to it is the embedded SES's record of its events (``ses_event_publishing.happened_events``, set with
``ses_outcomes``); a bounce or complaint counts from the moment it happened on the emulator's clock.
Not stated by the pages, so settings here (``ReputationSettings``), unconfirmed:

- ``representative_volume``: the rates are over the last that many emails sent (default 1,000); an
  account that sent fewer is measured over all it sent;
- ``publish_seconds``: how often the datapoints are published (default every 60 virtual seconds),
  each stamped with the emulator's time; nothing is published for the account (or a configuration
  set) before its first counted bounce or complaint;
- a configuration set's datapoints carry the dimension ``ses:configuration-set`` (its name);
- a bounce because the address is on the account's suppression list (``OnAccountSuppressionList``)
  does not count towards the bounce rate (SES never tried to deliver it);
- an email sent without a configuration set has no events here (``ses_event_publishing``), so it
  counts as delivered.

``reputation_rates`` reads the rates, ``publish_reputation_metrics`` publishes them once (tests);
``ReputationPublisher`` publishes at its cadence from the cloud's alarm loop (``alarm_runner``, and
``LocalPipeline.evaluate_alarms``, a round of it).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

NAMESPACE = "AWS/SES"
BOUNCE_RATE = "Reputation.BounceRate"
COMPLAINT_RATE = "Reputation.ComplaintRate"
CONFIGURATION_SET_DIMENSION = "ses:configuration-set"
REPRESENTATIVE_VOLUME = 1000
PUBLISH_SECONDS = 60.0
_NOT_COUNTED_BOUNCE = "OnAccountSuppressionList"


@dataclass(frozen=True)
class ReputationSettings:
    """How the rates are measured and how often they are published (both unconfirmed, see above)."""

    representative_volume: int = REPRESENTATIVE_VOLUME
    publish_seconds: float = PUBLISH_SECONDS

    def __post_init__(self) -> None:
        if self.representative_volume < 1:
            raise ValueError("representative_volume is a number of emails, at least 1")
        if self.publish_seconds <= 0:
            raise ValueError("publish_seconds is a positive number of virtual seconds")


@dataclass(frozen=True)
class ReputationRates:
    """The rates of the account (``configuration_set`` None) or of one configuration set at a moment."""

    configuration_set: str | None
    emails: int
    hard_bounces: int
    complaints: int
    reported: bool = False  # a counted bounce or complaint ever happened: SES publishes from then on

    @property
    def bounce_rate(self) -> float:
        return self.hard_bounces / self.emails if self.emails else 0.0

    @property
    def complaint_rate(self) -> float:
        return self.complaints / self.emails if self.emails else 0.0

    def dimensions(self) -> list[dict[str, str]]:
        if self.configuration_set is None:
            return []
        return [{"Name": CONFIGURATION_SET_DIMENSION, "Value": self.configuration_set}]


def _now() -> float:
    from embedded_aws.ses_account import emulator_now

    return emulator_now()


def _reporting_sets(region: str, account_id: str) -> list[str]:
    """The configuration sets whose reputation metrics are enabled, by name."""
    from moto.sesv2.models import sesv2_backends

    config_sets = sesv2_backends[account_id][region].core_backend.config_sets
    return sorted(
        name
        for name, config_set in list(config_sets.items())
        if (getattr(config_set, "reputation_options", None) or {}).get("ReputationMetricsEnabled") is True
    )


def _rates(
    configuration_set: str | None,
    sent: list[Any],
    happened: list[Any],
    volume: int,
) -> ReputationRates:
    emails = [
        (email.message_id, address.lower())
        for email in sent
        if configuration_set is None or email.configuration_set == configuration_set
        for address in email.to
    ][-volume:]
    window = set(emails)
    bounced: set[tuple[str, str]] = set()
    complained: set[tuple[str, str]] = set()
    reported = False
    for event in happened:
        if configuration_set is not None and event.configuration_set != configuration_set:
            continue
        keys = {(event.message_id, address.lower()) for address in event.recipients} & window
        if event.event_type == "BOUNCE" and event.bounce_type == "Permanent":
            if event.bounce_sub_type != _NOT_COUNTED_BOUNCE:
                bounced |= keys
                reported = True
        elif event.event_type == "COMPLAINT":
            complained |= keys
            reported = True
    return ReputationRates(configuration_set, len(emails), len(bounced), len(complained), reported)


def reputation_rates(
    region: str,
    account_id: str | None = None,
    *,
    now: float | None = None,
    volume: int = REPRESENTATIVE_VOLUME,
) -> list[ReputationRates]:
    """The account's rates, then each reporting configuration set's, as they stand at ``now`` (the
    emulator's clock unless given): emails sent and events happened by then."""
    from moto.core.models import DEFAULT_ACCOUNT_ID

    from embedded_aws.ses_event_publishing import happened_events
    from embedded_aws.ses_v2 import sent_emails

    account = account_id or DEFAULT_ACCOUNT_ID
    moment = _now() if now is None else now
    sent = [email for email in sent_emails(region, account) if email.sent_at <= moment]
    happened = [event for event in happened_events(region, account) if event.at <= moment]
    scopes: list[str | None] = [None, *_reporting_sets(region, account)]
    return [_rates(scope, sent, happened, volume) for scope in scopes]


def publish_reputation_metrics(
    region: str,
    account_id: str | None = None,
    *,
    now: float | None = None,
    volume: int = REPRESENTATIVE_VOLUME,
) -> list[ReputationRates]:
    """Put one datapoint of each rate, stamped ``now``, into the emulator's CloudWatch for the account
    and each reporting configuration set that has had a bounce or complaint; returns what was
    published."""
    from moto.cloudwatch.models import cloudwatch_backends
    from moto.core.models import DEFAULT_ACCOUNT_ID

    account = account_id or DEFAULT_ACCOUNT_ID
    moment = _now() if now is None else now
    published = [r for r in reputation_rates(region, account, now=moment, volume=volume) if r.reported]
    if not published:
        return []
    stamp = datetime.fromtimestamp(moment, tz=UTC).replace(tzinfo=None)  # moto keeps naive UTC times
    data = [
        {"MetricName": name, "Value": value, "Dimensions": rates.dimensions(), "Timestamp": stamp}
        for rates in published
        for name, value in ((BOUNCE_RATE, rates.bounce_rate), (COMPLAINT_RATE, rates.complaint_rate))
    ]
    cloudwatch_backends[account][region].put_metric_data(NAMESPACE, data)
    return published


class ReputationPublisher:
    """Publishes the reputation metrics of one account and Region every ``publish_seconds`` virtual
    seconds, whenever ``tick`` is called at or after the next due moment."""

    def __init__(
        self, region: str, account_id: str | None = None, settings: ReputationSettings | None = None
    ) -> None:
        self.region = region
        self.account_id = account_id
        self.settings = settings or ReputationSettings()
        self._last: float | None = None
        self._lock = threading.Lock()

    def tick(self, now: float) -> list[ReputationRates]:
        """Publish if due at ``now`` (virtual seconds); returns what was published. The rates are
        computed at most once per ``publish_seconds``, whether or not there was anything to publish."""
        with self._lock:
            if self._last is not None and now - self._last < self.settings.publish_seconds:
                return []
            self._last = now
            return publish_reputation_metrics(
                self.region, self.account_id, now=now, volume=self.settings.representative_volume
            )
