"""Pieces shared by the pollers: emulator clients, counters and the delivery journal."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any

import boto3
from botocore.config import Config

_CLIENT_CONFIG = Config(retries={"max_attempts": 2, "mode": "standard"}, max_pool_connections=64)


def client(service: str, endpoint: str, region: str = "us-east-1") -> Any:
    """A boto3 client for the emulator with fake credentials."""
    return boto3.client(
        service,  # type: ignore[call-overload]
        endpoint_url=endpoint,
        region_name=region,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=_CLIENT_CONFIG,
    )


def send_to_queue(endpoint: str, queue_arn: str, body: str, attributes: dict[str, str | int]) -> None:
    """SendMessage to the queue with ARN ``queue_arn``; ``int`` attributes are sent as ``Number``."""
    _, region, account, name = arn_parts(queue_arn)
    sqs = client("sqs", endpoint, region)
    url = sqs.get_queue_url(QueueName=name, QueueOwnerAWSAccountId=account)["QueueUrl"]
    sqs.send_message(
        QueueUrl=url,
        MessageBody=body,
        MessageAttributes={
            k: {"DataType": "Number" if isinstance(v, int) else "String", "StringValue": str(v)}
            for k, v in attributes.items()
        },
    )


def arn_parts(arn: str) -> tuple[str, str, str, str]:
    """(service, region, account, resource) of an ARN."""
    parts = arn.split(":", 5)
    return parts[2], parts[3], parts[4], parts[5]


@dataclass
class SourceStats:
    """What one mapping, rule, schedule or pipe did; read by tests and the ``make local`` report."""

    invocations: int = 0
    function_errors: int = 0
    records_in: int = 0
    records_filtered_out: int = 0
    records_done: int = 0
    records_returned: int = 0
    reported_failures: int = 0
    ignored_reported_failures: int = 0
    retries: int = 0
    bisections: int = 0
    discarded_batches: int = 0
    discarded_records: int = 0
    delivery_failures: int = 0
    throttles: int = 0  # invocations Lambda refused for concurrency (429); the function did not run
    in_flight: int = 0
    max_in_flight: int = 0
    max_batch: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def enter(self, batch_size: int) -> None:
        with self._lock:
            self.invocations += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.max_batch = max(self.max_batch, batch_size)

    def leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def reset_peak(self) -> None:
        """Start a new measurement of ``max_in_flight`` from what is in flight now."""
        with self._lock:
            self.max_in_flight = self.in_flight

    def add(self, **counts: int) -> None:
        with self._lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)

    def as_dict(self) -> dict[str, int]:
        with self._lock:
            return {f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")}


class Journal:
    """An append-only list of notable delivery events (discards, ignored failures, DLQ moves)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[dict[str, Any]] = []
        self.listeners: list[Callable[[dict[str, Any]], None]] = []

    def record(self, kind: str, **details: Any) -> None:
        entry = {"kind": kind, **details}
        with self._lock:
            self._entries.append(entry)
        for listener in self.listeners:
            listener(entry)

    def entries(self, kind: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(e) for e in self._entries if kind is None or e["kind"] == kind]


def iso_timestamp(ts: float) -> str:
    """A moment as AWS writes it in failure and invocation records (UTC, milliseconds, ``Z``)."""
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
