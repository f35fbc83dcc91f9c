"""boto3 clients, created on first use so tests and the embedded AWS can point them elsewhere.

boto3 reads ``AWS_ENDPOINT_URL`` (and per-service variants) itself, so the same code talks to AWS in
Lambda and to the embedded AWS locally.

A client is made for the function's own Region (``AWS_REGION``), except where a resource lives in
another: ``s3(region)`` for a bucket of another Region (the inbound bucket is in SES's receiving
Region). Such a client is cached as ``<service>@<region>``, so every client still comes from
``_client`` (the tests' operation recorder wraps it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import boto3
from botocore.config import Config

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_kms import KMSClient
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_scheduler import EventBridgeSchedulerClient
    from mypy_boto3_sesv2 import SESV2Client
    from mypy_boto3_sqs import SQSClient

# Standard retry mode retries throttling and transient errors with backoff before surfacing them.
_CONFIG = Config(retries={"mode": "standard", "max_attempts": 5}, connect_timeout=5, read_timeout=30)


# SES gets no automatic retry: a SendEmail retried after a timeout may send the email twice, and a
# throttled send is retried by Lambda's asynchronous retries after the worker released its claim.
_NO_RETRY_CONFIG = _CONFIG.merge(Config(retries={"mode": "standard", "total_max_attempts": 1}))
_CONFIG_BY_SERVICE = {"sesv2": _NO_RETRY_CONFIG}

_clients: dict[str, Any] = {}


def _client(service: str) -> Any:
    """The client of ``service``, in the function's Region, or of ``<service>@<region>`` in that one."""
    if service not in _clients:
        name, _, region = service.partition("@")
        config = _CONFIG_BY_SERVICE.get(name, _CONFIG)
        _clients[service] = boto3.client(name, region_name=region or None, config=config)  # type: ignore[call-overload]
    return _clients[service]


def dynamodb() -> DynamoDBClient:
    return cast("DynamoDBClient", _client("dynamodb"))


def sqs() -> SQSClient:
    return cast("SQSClient", _client("sqs"))


def s3(region: str | None = None) -> S3Client:
    """S3 in the function's Region, or in ``region``, the bucket's, when it is another's."""
    return cast("S3Client", _client("s3" if region is None else f"s3@{region}"))


def scheduler() -> EventBridgeSchedulerClient:
    return cast("EventBridgeSchedulerClient", _client("scheduler"))


def sesv2() -> SESV2Client:
    return cast("SESV2Client", _client("sesv2"))


def kms() -> KMSClient:
    return cast("KMSClient", _client("kms"))


def reset() -> None:
    """Forget cached clients (tests switch endpoints and credentials between cases)."""
    _clients.clear()
