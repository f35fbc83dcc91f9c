"""Whether a send plan fits the account's SES sending quota: its rate per second and its 24-hour total.

SES v2 GetAccount gives the account's quota in a region
(https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_GetAccount.html): ``SendQuota.MaxSendRate``,
the emails per second SES accepts, ``Max24HourSend``, the emails it accepts in any 24 hours (-1 for no
limit, https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_SendQuota.html), and
``SentLast24Hours``. A plan is refused when its ``max_per_minute / 60`` is above the rate,
or when the emails it has due in some 24 hours, counted at every send time over the 24 hours up to it,
are above the 24-hour quota; while a send time is within 24 hours of now, the emails already sent in
the last 24 hours count too (all of them: GetAccount does not say when they went out).

The plan is all this sees: emails another campaign has due in the same hours are not counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config

if TYPE_CHECKING:
    from mypy_boto3_sesv2 import SESV2Client

DAY = timedelta(hours=24)


@dataclass(frozen=True)
class SendQuota:
    """An account's SES sending quota in one region (GetAccount's ``SendQuota``)."""

    region: str
    max_send_rate: float
    max_24_hour_send: float
    sent_last_24_hours: float

    @classmethod
    def from_get_account(cls, region: str, answer: Mapping[str, Any]) -> SendQuota:
        quota = answer.get("SendQuota") or {}
        return cls(
            region=region,
            max_send_rate=float(quota.get("MaxSendRate", 0.0)),
            max_24_hour_send=float(quota.get("Max24HourSend", 0.0)),
            sent_last_24_hours=float(quota.get("SentLast24Hours", 0.0)),
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "region": self.region,
            "max_send_rate": self.max_send_rate,
            "max_24_hour_send": self.max_24_hour_send,
            "sent_last_24_hours": self.sent_last_24_hours,
        }


def read_send_quota(ses: SESV2Client) -> SendQuota:
    """GetAccount through the sesv2 client ``ses``; the SDK's error when it is refused or unreachable."""
    return SendQuota.from_get_account(str(ses.meta.region_name), ses.get_account())


@dataclass(frozen=True)
class Busiest24Hours:
    """The most emails the plan has due in 24 hours: ``planned`` of them in the 24 hours up to ``end``,
    and ``sent_before`` (the account's SentLast24Hours) counted in too."""

    planned: int
    sent_before: int
    end: datetime

    @property
    def total(self) -> int:
        return self.planned + self.sent_before


def busiest_24_hours(
    send_times: Sequence[datetime], now: datetime, sent_last_24_hours: int
) -> Busiest24Hours:
    """The 24 hours ending at a send time with the most emails SES will have sent by then."""
    times = sorted(send_times)
    busiest = Busiest24Hours(0, 0, now)
    first = 0
    for last, end in enumerate(times):
        while times[first] <= end - DAY:
            first += 1
        sent_before = sent_last_24_hours if end < now + DAY else 0
        candidate = Busiest24Hours(last - first + 1, sent_before, end)
        if candidate.total > busiest.total:
            busiest = candidate
    return busiest


def quota_problems(
    send_times: Sequence[datetime], max_per_minute: int, quota: SendQuota, now: datetime
) -> list[str]:
    """What in the plan is above the quota, with the numbers; empty when it fits."""
    problems = []
    rate = max_per_minute / 60
    if rate > quota.max_send_rate:
        problems.append(
            f"max_per_minute {max_per_minute} is {rate:.1f} emails/s; the account's SES sending rate in "
            f"{quota.region} is {quota.max_send_rate:.1f}/s (GetAccount MaxSendRate): lower max_per_minute "
            f"to at most {int(quota.max_send_rate * 60)}"
        )
    if quota.max_24_hour_send >= 0:
        busiest = busiest_24_hours(send_times, now, round(quota.sent_last_24_hours))
        if busiest.total > quota.max_24_hour_send:
            already = f" plus {busiest.sent_before:,} sent in the last 24 h" if busiest.sent_before else ""
            problems.append(
                f"{busiest.planned:,} emails are due in the 24 h up to {busiest.end.isoformat()}{already}: "
                f"{busiest.total:,}; the account's SES 24-hour quota in {quota.region} is "
                f"{quota.max_24_hour_send:,.0f} (GetAccount Max24HourSend): lower max_per_minute, narrow "
                "the window or split the recipients"
            )
    return problems


def account_client() -> SESV2Client:
    """An sesv2 client where the session points (the region and endpoint ``Targets.activate`` set),
    retrying a throttled or failed GetAccount a few times."""
    retrying = Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=5, read_timeout=10)
    return boto3.client("sesv2", config=retrying)
