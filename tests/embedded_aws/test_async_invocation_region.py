"""Lambda's asynchronous invocation honours a function's event invoke config in any Region.

The retry count and on-failure destination are the function's own (PutFunctionEventInvokeConfig),
read in the Region the function lives in:
https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-configuring.html (Retry attempts,
destinations).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from embedded_aws.async_invoke import AsyncInvoker
from embedded_aws.base import client
from embedded_aws.clock import VirtualClock
from embedded_aws.runtime import FunctionRuntime
from tests.embedded_aws.conftest import build_zip, wait_for

pytestmark = pytest.mark.e2e

REGION = "eu-central-1"
FAILING = """
def handler(event, context):
    raise RuntimeError("always")
"""


@pytest.fixture
def regional_runtime(endpoint: str, clock: VirtualClock, tmp_path: Path) -> Iterator[FunctionRuntime]:
    runtime = FunctionRuntime(endpoint, clock, cache_dir=tmp_path / "functions", region=REGION)
    yield runtime
    runtime.close()


def test_an_exhausted_event_of_a_function_outside_us_east_1_goes_to_its_own_destination(
    endpoint: str, clock: VirtualClock, regional_runtime: FunctionRuntime
) -> None:
    lam, sqs = client("lambda", endpoint, REGION), client("sqs", endpoint, REGION)
    role = client("iam", endpoint).create_role(RoleName="regional", AssumeRolePolicyDocument="{}")
    # GIVEN a failing function in eu-central-1 with no retries and an on-failure queue
    lam.create_function(
        FunctionName="regional-fn",
        Runtime="python3.12",
        Role=role["Role"]["Arn"],
        Handler="app.handler",
        Code={"ZipFile": build_zip(FAILING)},
        Timeout=30,
    )
    url = sqs.create_queue(QueueName="regional-fn-failures")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    lam.put_function_event_invoke_config(
        FunctionName="regional-fn",
        MaximumRetryAttempts=0,
        DestinationConfig={"OnFailure": {"Destination": arn}},
    )
    invoker = AsyncInvoker(regional_runtime, clock, endpoint, workers=1)
    invoker.start()
    try:
        # WHEN one event is invoked asynchronously
        invoker.submit("regional-fn", {"n": 1})

        # THEN it ran once (no retries) and its record is in the function's destination
        wait_for(lambda: invoker.stats.discarded_records == 1)
        messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
        record = json.loads(messages[0]["Body"])
        assert record["requestContext"]["condition"] == "RetriesExhausted"
        assert record["requestContext"]["approximateInvokeCount"] == 1
        assert regional_runtime.stats_of("regional-fn").invocations == 1
    finally:
        invoker.stop()
