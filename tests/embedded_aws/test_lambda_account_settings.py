"""The embedded AWS reports Lambda's account concurrency and keeps 100 executions unreserved."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from botocore.exceptions import ClientError

from embedded_aws.clock import VirtualClock
from embedded_aws.lambda_account_settings import set_concurrency_limit
from tests.embedded_aws.conftest import Lab

REGION = "us-east-1"


@pytest.fixture
def limit_of_300(clock: VirtualClock) -> Iterator[None]:
    set_concurrency_limit(REGION, 300)
    yield
    set_concurrency_limit(REGION, None)


def test_account_settings_report_the_default_limit_less_every_reservation(lab: Lab) -> None:
    lab.function("reserved-a", reserved=140)
    lab.function("reserved-b", reserved=20)
    lab.function("unreserved")

    limit = lab.lam.get_account_settings()["AccountLimit"]

    assert limit["ConcurrentExecutions"] == 1000
    assert limit["UnreservedConcurrentExecutions"] == 1000 - 140 - 20


def test_a_reservation_that_leaves_fewer_than_100_unreserved_is_refused(lab: Lab, limit_of_300: None) -> None:
    lab.function("big", reserved=150)
    lab.function("second")

    with pytest.raises(ClientError) as refused:
        lab.lam.put_function_concurrency(FunctionName="second", ReservedConcurrentExecutions=51)

    assert refused.value.response["Error"]["Code"] == "InvalidParameterValueException"
    assert "minimum value of [100]" in refused.value.response["Error"]["Message"]
    lab.lam.put_function_concurrency(FunctionName="second", ReservedConcurrentExecutions=50)
    limit = lab.lam.get_account_settings()["AccountLimit"]
    assert (limit["ConcurrentExecutions"], limit["UnreservedConcurrentExecutions"]) == (300, 100)


def test_changing_a_functions_own_reservation_counts_it_once(lab: Lab, limit_of_300: None) -> None:
    lab.function("big", reserved=150)

    lab.lam.put_function_concurrency(FunctionName="big", ReservedConcurrentExecutions=200)

    assert lab.lam.get_account_settings()["AccountLimit"]["UnreservedConcurrentExecutions"] == 100
