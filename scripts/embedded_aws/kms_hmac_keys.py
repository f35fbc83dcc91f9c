"""HMAC KMS keys on the embedded AWS as AWS KMS has them: GenerateMac, VerifyMac and the key itself.

moto 5.2.5 computes and compares the HMAC correctly (RFC 2104 over the message's bytes, and a
VerifyMac with a changed message or MAC fails with ``KMSInvalidMacException``, not ``MacValid:
false``), but lets through what AWS refuses and answers differently:

- GenerateMac/VerifyMac take any MacAlgorithm with any HMAC key (HMAC_SHA_512 with an HMAC_256
  key), none at all (a KeyError, HTTP 500), a message over 4,096 bytes, and a disabled key or one
  pending deletion. AWS: the algorithm must be the one the key spec supports, HMAC_256 only
  HMAC_SHA_256 (``InvalidKeyUsageException``, the "incompatible with the type of key material"
  case; https://docs.aws.amazon.com/kms/latest/developerguide/symm-asymm-choose-key-spec.html#hmac-key-specs);
  MacAlgorithm is required and Message is 1 to 4,096 bytes (``ValidationException``); a disabled key
  is ``DisabledException`` and one pending deletion ``KMSInvalidStateException``
  (https://docs.aws.amazon.com/kms/latest/APIReference/API_GenerateMac.html,
  https://docs.aws.amazon.com/kms/latest/APIReference/API_VerifyMac.html, Errors).
- Both answer the key's bare id as ``KeyId``; AWS answers the key ARN ("The HMAC KMS key used in the
  operation", given as its ARN in the pages' examples). VerifyMac on AWS answers ``MacValid: true`` or
  fails with ``KMSInvalidMacException``: "If the HMAC is not verified, the VerifyMac operation fails"
  (API_VerifyMac.html, MacValid). Here the MACs are compared in constant time as bytes.
- CreateKey stores an HMAC key spec with KeyUsage ENCRYPT_DECRYPT (or none); "Generate and verify MAC
  is the only valid key usage for HMAC KMS keys"
  (https://docs.aws.amazon.com/kms/latest/developerguide/hmac-create-key.html), and KeyUsage defaults
  to ENCRYPT_DECRYPT (https://docs.aws.amazon.com/kms/latest/APIReference/API_CreateKey.html), so such
  a request is refused (``ValidationException``; the error code is ours, the page names none). The
  key material is the spec's length (HMAC_224: 28 bytes ... HMAC_512: 64), not moto's 32 for all.
- DescribeKey of an HMAC key lists RSA encryption algorithms and no ``MacAlgorithms``; AWS lists the
  key's MacAlgorithms and no encryption or signing algorithms (API_DescribeKey.html, KeyMetadata).
- EnableKeyRotation succeeds on an HMAC key; AWS: "Automatic key rotation is supported only on
  symmetric encryption KMS keys. You cannot enable automatic rotation of asymmetric KMS keys, HMAC KMS
  keys, ..." (https://docs.aws.amazon.com/kms/latest/APIReference/API_EnableKeyRotation.html):
  ``UnsupportedOperationException``, so an ``enable_key_rotation = true`` that would fail to apply on
  AWS fails here too. GetKeyRotationStatus still answers false, which the AWS provider reads.

``support_hmac_keys`` installs the fixes on moto's KMS (in-process and server). Idempotent.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import os
from typing import Any

# Each HMAC key spec, its key length in bytes and the one MAC algorithm it supports
# (symm-asymm-choose-key-spec.html#hmac-key-specs).
HMAC_SPECS = {
    "HMAC_224": (28, "HMAC_SHA_224"),
    "HMAC_256": (32, "HMAC_SHA_256"),
    "HMAC_384": (48, "HMAC_SHA_384"),
    "HMAC_512": (64, "HMAC_SHA_512"),
}
_DIGESTS = {
    "HMAC_SHA_224": "sha224",
    "HMAC_SHA_256": "sha256",
    "HMAC_SHA_384": "sha384",
    "HMAC_SHA_512": "sha512",
}
MAX_MESSAGE_BYTES = 4096
MAC_USAGE = "GENERATE_VERIFY_MAC"
_PATCHED = "__outreach_hmac_keys__"


def _error(code: str, message: str = "") -> Exception:
    from moto.core.exceptions import JsonRESTError

    error = JsonRESTError(code, message)
    error.code = 400
    return error


def _usable_key(backend: Any, key_id: str, algorithm: str | None, message: Any) -> Any:
    """The HMAC key ``key_id`` names, checked as GenerateMac and VerifyMac check it."""
    from moto.kms.exceptions import InvalidKeyUsageException, ValidationException

    if algorithm not in _DIGESTS:
        raise ValidationException(
            f"1 validation error detected: Value '{algorithm}' at 'macAlgorithm' failed to satisfy "
            f"constraint: Member must satisfy enum value set: [{', '.join(_DIGESTS)}]"
        )
    if not isinstance(message, bytes) or not 1 <= len(message) <= MAX_MESSAGE_BYTES:
        raise ValidationException(
            "1 validation error detected: Value at 'message' failed to satisfy constraint: Member must "
            f"have length between 1 and {MAX_MESSAGE_BYTES}"
        )
    key = backend.keys[backend.any_id_to_key_id(key_id)]
    if key.key_state == "Disabled":
        raise _error("DisabledException", f"{key.arn} is disabled.")
    if key.key_state != "Enabled":
        raise _error("KMSInvalidStateException", f"{key.arn} is {key.key_state}.")
    spec = HMAC_SPECS.get(key.key_spec)
    if key.key_usage != MAC_USAGE or spec is None or spec[1] != algorithm:
        raise InvalidKeyUsageException()
    return key


def _mac(key: Any, message: bytes, algorithm: str) -> bytes:
    return hmac.new(key.key_material, message, _DIGESTS[algorithm]).digest()


def _generate_mac(self: Any) -> str:
    self._validate_key_id(self._get_param("KeyId"))
    algorithm = self._get_param("MacAlgorithm")
    message = self._get_param("Message")  # moto's KMS responses base64-decode Message
    key = _usable_key(self.kms_backend, self._get_param("KeyId"), algorithm, message)
    mac = base64.b64encode(_mac(key, message, algorithm)).decode()
    return json.dumps({"Mac": mac, "MacAlgorithm": algorithm, "KeyId": key.arn})


def _verify_mac(self: Any) -> str:
    from moto.kms.exceptions import KMSInvalidMacException

    self._validate_key_id(self._get_param("KeyId"))
    algorithm = self._get_param("MacAlgorithm")
    message = self._get_param("Message")
    key = _usable_key(self.kms_backend, self._get_param("KeyId"), algorithm, message)
    try:
        given = base64.b64decode(str(self._get_param("Mac") or ""), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise KMSInvalidMacException() from exc
    if not given or not hmac.compare_digest(given, _mac(key, message, algorithm)):
        raise KMSInvalidMacException()
    return json.dumps({"KeyId": key.arn, "MacValid": True, "MacAlgorithm": algorithm})


def support_hmac_keys() -> None:
    """Install the HMAC key fixes on moto's KMS. Idempotent."""
    from moto.kms.exceptions import ValidationException
    from moto.kms.models import Key, KmsBackend
    from moto.kms.responses import KmsResponse

    if getattr(KmsResponse, _PATCHED, False):
        return
    original_init = Key.__init__
    original_to_dict = Key.to_dict
    original_create = KmsBackend.create_key
    original_rotation = KmsBackend.enable_key_rotation

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        spec = HMAC_SPECS.get(self.key_spec)
        if spec is not None:
            self.key_material = os.urandom(spec[0])

    def to_dict(self: Any) -> dict[str, Any]:
        answer: dict[str, Any] = original_to_dict(self)
        spec = HMAC_SPECS.get(self.key_spec)
        if spec is not None:
            metadata = answer["KeyMetadata"]
            metadata.pop("EncryptionAlgorithms", None)
            metadata.pop("SigningAlgorithms", None)
            metadata["MacAlgorithms"] = [spec[1]]
        return answer

    def create_key(self: Any, policy: Any, key_usage: Any, key_spec: Any, *args: Any, **kwargs: Any) -> Any:
        usage = key_usage or "ENCRYPT_DECRYPT"
        if (key_spec in HMAC_SPECS) != (usage == MAC_USAGE):
            raise ValidationException(
                f"KeyUsage {usage} is not compatible with KeySpec {key_spec or 'SYMMETRIC_DEFAULT'}: "
                f"{MAC_USAGE} is the only key usage of HMAC keys, and only of them"
            )
        return original_create(self, policy, usage, key_spec, *args, **kwargs)

    def enable_key_rotation(self: Any, key_id: str, *args: Any, **kwargs: Any) -> Any:
        key = self.keys[self.get_key_id(key_id)]
        if key.key_spec != "SYMMETRIC_DEFAULT":
            raise _error(
                "UnsupportedOperationException",
                f"{key.arn} key type does not support automatic rotation: only symmetric encryption "
                "KMS keys do.",
            )
        return original_rotation(self, key_id, *args, **kwargs)

    Key.__init__ = init  # type: ignore[method-assign]
    Key.to_dict = to_dict  # type: ignore[method-assign]
    KmsBackend.create_key = create_key  # type: ignore[method-assign]
    KmsBackend.enable_key_rotation = enable_key_rotation  # type: ignore[method-assign]
    KmsResponse.generate_mac = _generate_mac  # type: ignore[method-assign]
    KmsResponse.verify_mac = _verify_mac  # type: ignore[method-assign]
    setattr(KmsResponse, _PATCHED, True)
