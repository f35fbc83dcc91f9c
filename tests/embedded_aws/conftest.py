"""Fixtures for the embedded AWS semantics tests: one moto server per session, reset per test."""

from __future__ import annotations

import io
import json
import textwrap
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from embedded_aws.base import client
from embedded_aws.clock import VirtualClock, install_in_moto
from embedded_aws.runtime import FunctionRuntime
from embedded_aws.server import embedded_aws, reset_backends

# One virtual minute per real second: a 30 s visibility timeout lasts half a second.
SCALE = 60.0


@pytest.fixture(scope="session")
def endpoint() -> Iterator[str]:
    with embedded_aws() as url:
        yield url
    install_in_moto(None)


@pytest.fixture
def clock(endpoint: str) -> Iterator[VirtualClock]:
    reset_backends(endpoint)
    virtual = VirtualClock(SCALE)
    install_in_moto(virtual)
    yield virtual
    install_in_moto(None)
    virtual.close()


@pytest.fixture
def runtime(endpoint: str, clock: VirtualClock, tmp_path: Path) -> Iterator[FunctionRuntime]:
    rt = FunctionRuntime(endpoint, clock, cache_dir=tmp_path / "functions", max_workers_per_function=8)
    yield rt
    rt.close()


def build_zip(source: str, extra: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("app.py", textwrap.dedent(source))
        for name, text in (extra or {}).items():
            archive.writestr(name, text)
    return buffer.getvalue()


# A handler that appends one JSON line per invocation to $RECORD_PATH (counted at the source) and
# behaves as the event tells it: fail on marked records, sleep, report failures.
RECORDING_HANDLER = """
import fcntl, json, os, time

def _record(entry):
    with open(os.environ["RECORD_PATH"], "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write(json.dumps(entry) + "\\n")

def _body(record):
    if "body" in record:
        return json.loads(record["body"])
    image = record["dynamodb"].get("NewImage") or record["dynamodb"].get("OldImage") or {}
    return {k: list(v.values())[0] for k, v in image.items()}

def handler(event, context):
    records = event["Records"]
    bodies = [_body(r) for r in records]
    start = time.time()
    sleep = max([float(b.get("sleep", 0)) for b in bodies] + [float(os.environ.get("SLEEP", "0"))])
    if sleep:
        time.sleep(sleep)
    _record({"pid": os.getpid(), "start": start, "end": time.time(), "bodies": bodies,
             "ids": [r.get("messageId") or r["dynamodb"]["SequenceNumber"] for r in records],
             "remaining": context.get_remaining_time_in_millis()})
    if any(b.get("raise") for b in bodies):
        raise RuntimeError("asked to fail")
    failures = [r.get("messageId") or r["dynamodb"]["SequenceNumber"]
                for r, b in zip(records, bodies) if b.get("report")]
    if os.environ.get("ONLY_FIRST_FAILURE") and failures:
        failures = failures[:1]
    return {"batchItemFailures": [{"itemIdentifier": i} for i in failures]}
"""


class Lab:
    """Creates functions, queues and tables on the emulator for one test."""

    def __init__(self, endpoint: str, tmp_path: Path) -> None:
        self.endpoint = endpoint
        self.tmp_path = tmp_path
        self.lam = client("lambda", endpoint)
        self.sqs = client("sqs", endpoint)
        self.ddb = client("dynamodb", endpoint)
        self.s3 = client("s3", endpoint)
        iam = client("iam", endpoint)
        self.role = iam.create_role(RoleName="lab", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        self.record_path = tmp_path / "invocations.jsonl"
        self.record_path.touch()

    def function(
        self,
        name: str,
        source: str = RECORDING_HANDLER,
        *,
        timeout: int = 30,
        env: dict[str, str] | None = None,
        reserved: int | None = None,
        extra: dict[str, str] | None = None,
    ) -> str:
        variables = {"RECORD_PATH": str(self.record_path), **(env or {})}
        arn: str = self.lam.create_function(
            FunctionName=name,
            Runtime="python3.12",
            Role=self.role,
            Handler="app.handler",
            Code={"ZipFile": build_zip(source, extra)},
            Timeout=timeout,
            MemorySize=256,
            Environment={"Variables": variables},
        )["FunctionArn"]
        if reserved is not None:
            self.lam.put_function_concurrency(FunctionName=name, ReservedConcurrentExecutions=reserved)
        return arn

    def queue(
        self, name: str, *, visibility: int = 30, dlq_after: int | None = None
    ) -> tuple[str, str, str | None]:
        """(url, arn, dlq_url)."""
        dlq_url = None
        attributes = {"VisibilityTimeout": str(visibility)}
        if dlq_after is not None:
            dlq_url = self.sqs.create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
            dlq_arn = self.sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])[
                "Attributes"
            ]["QueueArn"]
            attributes["RedrivePolicy"] = json.dumps(
                {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": dlq_after}
            )
        url = self.sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
        arn = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        return url, arn, dlq_url

    def table(self, name: str) -> str:
        """A table with a NEW_AND_OLD_IMAGES stream; returns the stream ARN."""
        response = self.ddb.create_table(
            TableName=name,
            KeySchema=[{"AttributeName": "task_id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "task_id", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        )
        return str(response["TableDescription"]["LatestStreamArn"])

    def put(self, table: str, task_id: str, **attributes: str) -> None:
        item = {"task_id": {"S": task_id}, **{k: {"S": v} for k, v in attributes.items()}}
        self.ddb.put_item(TableName=table, Item=item)

    def mapping(self, **kwargs: Any) -> dict[str, Any]:
        response: dict[str, Any] = self.lam.create_event_source_mapping(**kwargs)
        listed = self.lam.list_event_source_mappings(FunctionName=kwargs["FunctionName"])
        return next(m for m in listed["EventSourceMappings"] if m["UUID"] == response["UUID"])

    def invocations(self) -> list[dict[str, Any]]:
        lines = self.record_path.read_text().splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def visible(self, url: str) -> int:
        attributes = self.sqs.get_queue_attributes(
            QueueUrl=url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return int(attributes["ApproximateNumberOfMessages"]) + int(
            attributes["ApproximateNumberOfMessagesNotVisible"]
        )


@pytest.fixture
def lab(endpoint: str, clock: VirtualClock, tmp_path: Path) -> Lab:
    return Lab(endpoint, tmp_path)


def wait_for(condition: Callable[[], bool], timeout: float = 60.0, interval: float = 0.05) -> None:
    """Poll ``condition`` on the wall clock; fail the test if it never holds.

    The deadline is generous (a loaded 2-core machine runs the pollers many times slower): a condition
    that holds returns at once, so only a test that is failing anyway waits it out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout}s")
