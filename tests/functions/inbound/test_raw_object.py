"""Rules of reading a stored message: within the bound it is read whole, over it it is not read at all,
and the bucket is read in its own region."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import boto3
import pytest
from moto import mock_aws

from outreach import clients
from outreach.inbound import raw_object

REGION: Final = "eu-west-1"
BUCKET = "outreach-test-inbound"


@pytest.fixture
def bucket(aws_env: None) -> Iterator[Any]:
    with mock_aws():
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": REGION})
        yield s3


@pytest.mark.parametrize("size", [0, 1, 1023, 1024])
def test_a_message_within_the_bound_is_read_whole(bucket: Any, size: int) -> None:
    data = bytes(i % 251 for i in range(size))
    bucket.put_object(Bucket=BUCKET, Key="inbound/m1", Body=data)
    found = raw_object.read(raw_object.client_for(REGION), BUCKET, "inbound/m1", max_bytes=1024)
    assert (found.data, found.size, found.oversize) == (data, size, False)


def test_a_message_over_the_bound_is_not_read(bucket: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    bucket.put_object(Bucket=BUCKET, Key="inbound/big", Body=b"x" * 5000)
    client = raw_object.client_for(REGION)
    reads: list[int | None] = []
    real_get = client.get_object

    def get_object(**request: Any) -> Any:
        response = real_get(**request)
        body = response["Body"]
        real_read = body.read

        def read(amount: int | None = None) -> bytes:
            reads.append(amount)
            return bytes(real_read(amount))

        monkeypatch.setattr(body, "read", read)
        return response

    monkeypatch.setattr(client, "get_object", get_object)
    found = raw_object.read(client, BUCKET, "inbound/big", max_bytes=4096)
    assert (found.data, found.size, found.oversize) == (None, 5000, True)
    assert reads == []


def test_the_client_is_made_for_the_buckets_region(bucket: Any) -> None:
    assert raw_object.client_for(REGION).meta.region_name == REGION


def test_the_client_comes_from_the_cores_factory_so_its_calls_are_seen(
    bucket: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The IAM tests' recorder wraps clients._client: a client made elsewhere would hide s3:GetObject.
    made: list[str] = []
    real = clients._client

    def recording(service: str) -> Any:
        made.append(service)
        return real(service)

    monkeypatch.setattr(clients, "_client", recording)
    clients.reset()
    client = raw_object.client_for(REGION)
    assert made == [f"s3@{REGION}"]
    assert client is clients.s3(REGION)
    assert clients.s3().meta.region_name != REGION  # the function's own Region's client is another
