"""The Scheduler rate ``campaign schedule`` and ``campaign cancel`` take, and where it came from."""

from __future__ import annotations

from typing import Any

from outreach_operator import scheduler_quota
from outreach_operator.cli.output import BadInput, Session


def scheduler_rate_of(s: Session, operation: str, rate: float | None) -> dict[str, Any]:
    """``--scheduler-rate`` when given, else the rate ``scheduler_quota`` takes from the quota of
    ``operation`` (``CreateSchedule`` or ``DeleteSchedule``) in the session's Region."""
    if rate is not None:
        return {"operation": operation, "rate_per_second": rate, "quota_source": "--scheduler-rate"}
    region = s.region()
    if region is None:
        raise BadInput("no AWS Region to read the Scheduler quota in: give --region or --scheduler-rate")
    return scheduler_quota.scheduler_rate(operation, region).report()
