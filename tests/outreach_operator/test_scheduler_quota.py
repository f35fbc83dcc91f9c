"""The Scheduler rate of the operator's commands: the account's applied quota when Service Quotas gives
it, the Region's documented default when the role may not read it or no value is there, 80% taken."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from outreach_operator.scheduler_quota import scheduler_rate


def _client(region: str) -> Any:
    return boto3.client(
        "service-quotas", region_name=region, aws_access_key_id="x", aws_secret_access_key="x"
    )


def test_the_applied_quota_read_from_service_quotas_sets_the_rate() -> None:
    client = _client("eu-north-1")
    with Stubber(client) as stub:
        stub.add_response(
            "list_service_quotas",
            {
                "Quotas": [
                    {"QuotaName": "DeleteSchedule request rate", "Value": 300.0},
                    {"QuotaName": "CreateSchedule request rate", "Value": 2000.0},
                ]
            },
            {"ServiceCode": "scheduler"},
        )
        rate = scheduler_rate("CreateSchedule", "eu-north-1", client)
    assert (rate.quota, rate.per_second, rate.source) == (2000.0, 1600.0, "service quotas")


@pytest.mark.parametrize(
    ("region", "quota"), [("eu-central-1", 1000.0), ("us-east-1", 1000.0), ("eu-north-1", 250.0)]
)
@pytest.mark.parametrize("code", ["AccessDeniedException", "NoSuchResourceException"])
def test_a_quota_that_cannot_be_read_gives_the_regions_documented_default(
    region: str, quota: float, code: str
) -> None:
    client = _client(region)
    with Stubber(client) as stub:
        stub.add_client_error("list_service_quotas", service_error_code=code)
        rate = scheduler_rate("DeleteSchedule", region, client)
    assert (rate.quota, rate.per_second) == (quota, quota * 0.8)
    assert code in rate.source


def test_a_list_without_the_quota_gives_the_documented_default() -> None:
    client = _client("eu-north-1")
    with Stubber(client) as stub:
        stub.add_response("list_service_quotas", {"Quotas": []}, {"ServiceCode": "scheduler"})
        rate = scheduler_rate("CreateSchedule", "eu-north-1", client)
    assert rate.quota == 250.0
    assert "not in Service Quotas" in rate.source


def test_any_other_error_of_service_quotas_is_raised() -> None:
    client = _client("eu-central-1")
    with Stubber(client) as stub:
        stub.add_client_error("list_service_quotas", service_error_code="ServiceException")
        with pytest.raises(Exception, match="ServiceException"):
            scheduler_rate("CreateSchedule", "eu-central-1", client)
