"""The raw message SES stored in S3, read whole only when it is within the bound.

One GetObject (https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html): its response carries
``ContentLength`` before any byte of the body is read, so an object over ``max_bytes`` is closed unread
and answered as ``oversize`` (SES receiving stores up to 40 MB,
https://docs.aws.amazon.com/ses/latest/APIReference/API_S3Action.html; no reply is that big, and the
processor forwards a notice naming the object instead). The body is read at most ``max_bytes + 1``
bytes even so, in case the length and the body disagree. The processor never deletes the object: the
bucket's retention does (modules/email-inbound).

The bucket lives in the receiving region, which may not be the pipeline's: the client is made for that
region (``client_for``), once per invocation, with the same retries and timeouts as ``clients``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

_CONFIG = Config(retries={"mode": "standard", "max_attempts": 5}, connect_timeout=5, read_timeout=30)


@dataclass(frozen=True)
class RawObject:
    """A stored message: its bytes, or ``None`` when it is over the bound (``size`` says how big)."""

    data: bytes | None
    size: int

    @property
    def oversize(self) -> bool:
        return self.data is None


def client_for(region: str) -> S3Client:
    """An S3 client for the bucket's region (the endpoint from ``AWS_ENDPOINT_URL``, as ``clients``)."""
    client: S3Client = boto3.client("s3", region_name=region, config=_CONFIG)
    return client


def read(client: S3Client, bucket: str, key: str, *, max_bytes: int) -> RawObject:
    """The object ``key`` of ``bucket``, at most ``max_bytes``; an S3 error raises for the retry."""
    response = client.get_object(Bucket=bucket, Key=key)
    body: Any = response["Body"]
    size = int(response.get("ContentLength", 0))
    try:
        if size > max_bytes:
            return RawObject(None, size)
        data = body.read(max_bytes + 1)
    finally:
        body.close()
    if len(data) > max_bytes:
        return RawObject(None, len(data))
    return RawObject(bytes(data), len(data))
