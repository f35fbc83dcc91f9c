"""KMS GenerateMac and VerifyMac with an HMAC_256 key on the embedded AWS, as AWS KMS answers them.

AWS pages: https://docs.aws.amazon.com/kms/latest/APIReference/API_GenerateMac.html,
https://docs.aws.amazon.com/kms/latest/APIReference/API_VerifyMac.html ("If the HMAC is not verified,
the VerifyMac operation fails with a KMSInvalidMacException"), the HMAC key specs in
https://docs.aws.amazon.com/kms/latest/developerguide/symm-asymm-choose-key-spec.html#hmac-key-specs,
https://docs.aws.amazon.com/kms/latest/developerguide/hmac-create-key.html and
https://docs.aws.amazon.com/kms/latest/APIReference/API_EnableKeyRotation.html.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import pytest
from botocore.exceptions import ClientError

from embedded_aws.base import client
from embedded_aws.clock import VirtualClock

REGION = "eu-central-1"
MESSAGE = b'{"a":"jane@example.com","c":"spring","s":1,"v":1}'


@pytest.fixture
def kms(endpoint: str, clock: VirtualClock) -> Any:
    return client("kms", endpoint, REGION)


def _hmac_key(kms: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = kms.create_key(KeySpec="HMAC_256", KeyUsage="GENERATE_VERIFY_MAC")[
        "KeyMetadata"
    ]
    return metadata


def _refused(call: Any, **kwargs: Any) -> str:
    with pytest.raises(ClientError) as failure:
        call(**kwargs)
    return str(failure.value.response["Error"]["Code"])


def test_a_mac_made_by_generate_mac_verifies_and_names_the_key_by_its_arn(kms: Any) -> None:
    key = _hmac_key(kms)
    made = kms.generate_mac(KeyId=key["KeyId"], Message=MESSAGE, MacAlgorithm="HMAC_SHA_256")
    assert len(made["Mac"]) == hashlib.sha256().digest_size
    assert (made["KeyId"], made["MacAlgorithm"]) == (key["Arn"], "HMAC_SHA_256")
    # The same message and MAC verify, by key id, ARN or alias
    kms.create_alias(AliasName="alias/unsubscribe", TargetKeyId=key["KeyId"])
    for key_id in (key["KeyId"], key["Arn"], "alias/unsubscribe"):
        verified = kms.verify_mac(KeyId=key_id, Message=MESSAGE, Mac=made["Mac"], MacAlgorithm="HMAC_SHA_256")
        assert (verified["MacValid"], verified["KeyId"]) == (True, key["Arn"])
    # And a MAC is a function of the message: the same message gives the same MAC
    again = kms.generate_mac(KeyId=key["Arn"], Message=MESSAGE, MacAlgorithm="HMAC_SHA_256")["Mac"]
    assert hmac.compare_digest(again, made["Mac"])


def test_an_altered_message_or_mac_fails_with_kms_invalid_mac_exception_not_mac_valid_false(kms: Any) -> None:
    key = _hmac_key(kms)
    mac = kms.generate_mac(KeyId=key["KeyId"], Message=MESSAGE, MacAlgorithm="HMAC_SHA_256")["Mac"]
    altered_mac = bytes([mac[0] ^ 1]) + mac[1:]
    for message, given in (
        (MESSAGE.replace(b"jane", b"john"), mac),
        (MESSAGE, altered_mac),
        (MESSAGE, mac[:-1]),
    ):
        code = _refused(
            kms.verify_mac, KeyId=key["KeyId"], Message=message, Mac=given, MacAlgorithm="HMAC_SHA_256"
        )
        assert code == "KMSInvalidMacException"
    # A MAC made with another HMAC key does not verify either
    other = _hmac_key(kms)
    assert (
        _refused(kms.verify_mac, KeyId=other["KeyId"], Message=MESSAGE, Mac=mac, MacAlgorithm="HMAC_SHA_256")
        == "KMSInvalidMacException"
    )


def test_a_key_of_another_usage_or_an_algorithm_the_key_spec_lacks_is_refused(kms: Any) -> None:
    encryption = kms.create_key()["KeyMetadata"]
    key = _hmac_key(kms)
    mac = kms.generate_mac(KeyId=key["KeyId"], Message=MESSAGE, MacAlgorithm="HMAC_SHA_256")["Mac"]
    # An ENCRYPT_DECRYPT key makes and checks no MAC
    assert (
        _refused(kms.generate_mac, KeyId=encryption["KeyId"], Message=MESSAGE, MacAlgorithm="HMAC_SHA_256")
        == "InvalidKeyUsageException"
    )
    assert (
        _refused(
            kms.verify_mac, KeyId=encryption["KeyId"], Message=MESSAGE, Mac=mac, MacAlgorithm="HMAC_SHA_256"
        )
        == "InvalidKeyUsageException"
    )
    # An HMAC_256 key supports HMAC_SHA_256 only
    for algorithm in ("HMAC_SHA_224", "HMAC_SHA_384", "HMAC_SHA_512"):
        assert (
            _refused(kms.generate_mac, KeyId=key["KeyId"], Message=MESSAGE, MacAlgorithm=algorithm)
            == "InvalidKeyUsageException"
        )
    assert kms.describe_key(KeyId=key["KeyId"])["KeyMetadata"]["MacAlgorithms"] == ["HMAC_SHA_256"]


def test_a_message_past_4096_bytes_or_a_disabled_key_is_refused(kms: Any) -> None:
    key = _hmac_key(kms)
    assert (
        _refused(kms.generate_mac, KeyId=key["KeyId"], Message=b"x" * 4097, MacAlgorithm="HMAC_SHA_256")
        == "ValidationException"
    )
    kms.generate_mac(KeyId=key["KeyId"], Message=b"x" * 4096, MacAlgorithm="HMAC_SHA_256")
    kms.disable_key(KeyId=key["KeyId"])
    assert (
        _refused(kms.generate_mac, KeyId=key["KeyId"], Message=MESSAGE, MacAlgorithm="HMAC_SHA_256")
        == "DisabledException"
    )
    kms.enable_key(KeyId=key["KeyId"])
    kms.schedule_key_deletion(KeyId=key["KeyId"], PendingWindowInDays=7)
    assert (
        _refused(kms.generate_mac, KeyId=key["KeyId"], Message=MESSAGE, MacAlgorithm="HMAC_SHA_256")
        == "KMSInvalidStateException"
    )


def test_an_hmac_key_has_only_the_mac_usage_and_no_automatic_rotation(kms: Any) -> None:
    # CreateKey: an HMAC spec with the default (ENCRYPT_DECRYPT) usage is refused
    assert _refused(kms.create_key, KeySpec="HMAC_256") == "ValidationException"
    assert _refused(kms.create_key, KeySpec="HMAC_256", KeyUsage="ENCRYPT_DECRYPT") == "ValidationException"
    assert _refused(kms.create_key, KeyUsage="GENERATE_VERIFY_MAC") == "ValidationException"
    key = _hmac_key(kms)
    # EnableKeyRotation is for symmetric encryption keys only; the status reads false
    assert _refused(kms.enable_key_rotation, KeyId=key["KeyId"]) == "UnsupportedOperationException"
    assert kms.get_key_rotation_status(KeyId=key["KeyId"])["KeyRotationEnabled"] is False
    metadata = kms.describe_key(KeyId=key["KeyId"])["KeyMetadata"]
    assert (metadata["KeySpec"], metadata["KeyUsage"]) == ("HMAC_256", "GENERATE_VERIFY_MAC")
    assert "EncryptionAlgorithms" not in metadata
