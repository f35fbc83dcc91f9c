"""The Scheduler request rate the operator's commands take: the account's quota read from Service Quotas,
else the Region's documented default, a share of it left to the pipeline.

Scheduler limits CreateSchedule and DeleteSchedule per second, per account and Region, and refuses the
calls over the quota with ``ThrottlingException`` for the rest of the second. The quotas page
(https://docs.aws.amazon.com/scheduler/latest/UserGuide/scheduler-quotas.html) lists both at 1,000 a
second in eleven Regions (us-east-1, us-east-2, us-west-2, ap-northeast-1, ap-south-1, ap-southeast-1,
ap-southeast-2, eu-central-1, eu-west-1, eu-west-2, sa-east-1) and 250 in each other Region, adjustable;
its newest version lists CreateSchedule at 5,000 in those Regions. The smaller figure is the default
taken here, so a command never asks for more than a new account has.

The applied quota of the account is read with ListServiceQuotas of the service ``scheduler`` (the
quota named ``<Operation> request rate``,
https://docs.aws.amazon.com/servicequotas/2019-06-24/apireference/API_ListServiceQuotas.html). A role
without ``servicequotas:ListServiceQuotas`` (``AccessDeniedException``), a Region where Service Quotas
has no applied value for the service (``NoSuchResourceException``) or a list without the quota gives the
documented default, and the report says which it was. ``PIPELINE_SHARE`` of the rate is left to the
email reconciler and the workers, which create and delete schedules at the same time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import boto3
from botocore.exceptions import ClientError

from outreach.ses_send_errors import error_code

SERVICE_CODE = "scheduler"
PRIMARY_REGIONS = frozenset(
    {
        "us-east-1",
        "us-east-2",
        "us-west-2",
        "ap-northeast-1",
        "ap-south-1",
        "ap-southeast-1",
        "ap-southeast-2",
        "eu-central-1",
        "eu-west-1",
        "eu-west-2",
        "sa-east-1",
    }
)
PRIMARY_DEFAULT = 1_000.0
OTHER_DEFAULT = 250.0
# The share of the quota the command leaves to the reconciler and the workers' own schedule calls.
PIPELINE_SHARE = 0.2
# Answers that mean "no applied value to read here": the documented default is taken instead.
_NOT_READABLE = frozenset({"AccessDeniedException", "NoSuchResourceException"})


@dataclass(frozen=True)
class SchedulerRate:
    """The requests a second a command sends (``per_second``) and where its quota came from."""

    operation: str
    quota: float
    source: str

    @property
    def per_second(self) -> float:
        return self.quota * (1 - PIPELINE_SHARE)

    def report(self) -> dict[str, Any]:
        return {
            "operation": self.operation,
            "quota_per_second": self.quota,
            "quota_source": self.source,
            "rate_per_second": self.per_second,
        }


def documented_default(region: str) -> float:
    """The quotas page's default rate of CreateSchedule and DeleteSchedule in ``region``."""
    return PRIMARY_DEFAULT if region in PRIMARY_REGIONS else OTHER_DEFAULT


def scheduler_rate(operation: str, region: str, client: Any = None) -> SchedulerRate:
    """``operation``'s (``CreateSchedule`` or ``DeleteSchedule``) quota in ``region``: the account's
    applied value when Service Quotas gives it (``client``: a Service Quotas client of ``region``, made
    here when not given), else the documented default."""
    wanted = f"{operation} request rate"
    client = client or boto3.client("service-quotas", region_name=region)
    try:
        for page in client.get_paginator("list_service_quotas").paginate(ServiceCode=SERVICE_CODE):
            for quota in page.get("Quotas", []):
                if quota.get("QuotaName") == wanted and "Value" in quota:
                    return SchedulerRate(operation, float(quota["Value"]), "service quotas")
    except ClientError as exc:
        if error_code(exc) not in _NOT_READABLE:
            raise
        return SchedulerRate(
            operation,
            documented_default(region),
            f"documented default for {region} (Service Quotas: {error_code(exc)})",
        )
    return SchedulerRate(
        operation, documented_default(region), f"documented default for {region} (not in Service Quotas)"
    )
