"""The raw message SES stored in S3, read whole only when it is within the bound.

One GetObject (https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html): its response carries
``ContentLength`` before any byte of the body is read, so an object over ``max_bytes`` is closed unread
and answered as ``oversize`` (SES receiving stores up to 40 MB,
https://docs.aws.amazon.com/ses/latest/APIReference/API_S3Action.html; no reply is that big, and the
processor forwards a notice naming the object instead). The body is read at most ``max_bytes + 1``
bytes even so, in case the length and the body disagree. The processor never deletes the object: the
bucket's retention does (modules/email-inbound).

The bucket lives in the receiving Region, which may not be the pipeline's: the client is the core's S3
client for that Region (``client_for``, ``outreach.clients.s3``: the same retries and timeouts, and
the one client factory the tests' recorder sees, so the role is checked for this ``s3:GetObject``).
S3 answers a request that arrives at another Region with a redirect, or with 400 Bad Request for the
Regions launched after March 20, 2019, never with the object
(https://docs.aws.amazon.com/AmazonS3/latest/API/UsingRouting.html).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from outreach import clients

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client


@dataclass(frozen=True)
class RawObject:
    """A stored message: its bytes, or ``None`` when it is over the bound (``size`` says how big)."""

    data: bytes | None
    size: int

    @property
    def oversize(self) -> bool:
        return self.data is None


def client_for(region: str) -> S3Client:
    """The S3 client for the bucket's Region (the endpoint from ``AWS_ENDPOINT_URL``, as every client)."""
    return clients.s3(region)


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
