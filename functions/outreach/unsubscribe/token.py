"""The unsubscribe token: which address, campaign and step a link is for, proved by a KMS HMAC.

A token is ``b64url(payload) + "." + b64url(mac)`` (base64url without padding), where payload is
``{"a": <normalised address>, "c": <campaign id>, "s": <step>, "v": 1}`` as compact JSON with sorted
keys and mac is KMS GenerateMac (``HMAC_SHA_256``) of the payload with the unsubscribe key, an
``HMAC_256`` key whose secret never leaves KMS: no secret lives in code, variables or the zip.
Verifying is KMS VerifyMac, which compares in KMS and fails with ``KMSInvalidMacException`` for a MAC
that was not made from exactly this payload with this key.
https://docs.aws.amazon.com/kms/latest/APIReference/API_GenerateMac.html (a message of 1-4,096 bytes),
https://docs.aws.amazon.com/kms/latest/APIReference/API_VerifyMac.html (``KMSInvalidMacException``),
https://docs.aws.amazon.com/kms/latest/developerguide/hmac.html.

Anything that does not verify is an ``InvalidTokenError`` (malformed, longer than ``MAX_TOKEN_CHARS``,
non-canonical base64, forged or altered); KMS's own failures (throttling, a disabled key, no access)
raise as they are, for the caller to answer as a failure of the service, not of the token.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import quote, urlsplit

from botocore.exceptions import ClientError

from outreach import clients, contacts
from outreach.errors import InvalidJobInputError, InvalidTokenError, MalformedFieldError
from outreach.task_ids import validate_job_id

MAX_TOKEN_CHARS = 1_024
MAC_ALGORITHM: Final[Literal["HMAC_SHA_256"]] = "HMAC_SHA_256"
TOKEN_VERSION = 1
# An HMAC-SHA-256 is 32 bytes; GenerateMac's message is at most 4,096 bytes.
_MAC_BYTES = 32
_MAX_PAYLOAD_BYTES = 4_096
_MAX_STEP = 1_000
_BASE64URL = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class TokenSubject:
    """What a verified token is for: one campaign step to one (normalised) address."""

    campaign_id: str
    step: int
    address: str


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str, part: str) -> bytes:
    """The bytes of a canonical unpadded base64url text; any other spelling is refused."""
    if not _BASE64URL.fullmatch(text):
        raise InvalidTokenError(f"{part}: not base64url")
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise InvalidTokenError(f"{part}: not base64url") from exc
    # Base64 has spare bits in its last character: only the one spelling that encodes these bytes is
    # the token, so an altered character can never verify as the same token.
    if _b64encode(data) != text:
        raise InvalidTokenError(f"{part}: not canonical base64url")
    return data


def _subject(campaign_id: str, step: int, address: str) -> TokenSubject:
    try:
        campaign = validate_job_id(campaign_id)
    except InvalidJobInputError as exc:
        raise MalformedFieldError("campaign_id", str(exc)) from exc
    if isinstance(step, bool) or not isinstance(step, int) or not 1 <= step <= _MAX_STEP:
        raise MalformedFieldError("step", f"not a step number 1-{_MAX_STEP}: {step!r}")
    return TokenSubject(campaign, step, contacts.normalise(address))


def _payload(subject: TokenSubject) -> bytes:
    return json.dumps(
        {"v": TOKEN_VERSION, "c": subject.campaign_id, "s": subject.step, "a": subject.address},
        sort_keys=True,
        separators=(",", ":"),
    ).encode()


def make_token(key_id: str, campaign_id: str, step: int, address: str) -> str:
    """The token for ``address`` (normalised) in ``campaign_id``'s ``step``: one GenerateMac call.

    ``MalformedFieldError`` for a campaign id, step or address no email task can have.
    """
    payload = _payload(_subject(campaign_id, step, address))
    response = clients.kms().generate_mac(KeyId=key_id, Message=payload, MacAlgorithm=MAC_ALGORITHM)
    token = f"{_b64encode(payload)}.{_b64encode(response['Mac'])}"
    if len(token) > MAX_TOKEN_CHARS:
        raise MalformedFieldError("address", f"makes a token over {MAX_TOKEN_CHARS} characters")
    return token


def _read_payload(payload: bytes) -> TokenSubject:
    """The subject of a payload whose MAC verified; one that is not what ``make_token`` writes is refused."""
    try:
        fields: Any = json.loads(payload)
    except ValueError as exc:
        raise InvalidTokenError("payload: not JSON") from exc
    if not isinstance(fields, dict) or set(fields) != {"v", "c", "s", "a"} or fields["v"] != TOKEN_VERSION:
        raise InvalidTokenError("payload: not a version 1 unsubscribe token")
    if not all(isinstance(fields[name], str) for name in ("c", "a")):
        raise InvalidTokenError("payload: campaign or address not text")
    try:
        subject = _subject(fields["c"], fields["s"], fields["a"])
    except MalformedFieldError as exc:
        raise InvalidTokenError(f"payload: {exc}") from exc
    if _payload(subject) != payload:
        raise InvalidTokenError("payload: not in the form make_token writes")
    return subject


def verify_token(key_id: str, token: str) -> TokenSubject:
    """What ``token`` is for, once KMS VerifyMac accepts its MAC; ``InvalidTokenError`` otherwise."""
    if not isinstance(token, str) or not token:
        raise InvalidTokenError("no token")
    if len(token) > MAX_TOKEN_CHARS:
        raise InvalidTokenError(f"token of {len(token):,} characters, more than {MAX_TOKEN_CHARS:,}")
    parts = token.split(".")
    if len(parts) != 2:
        raise InvalidTokenError("token: not <payload>.<mac>")
    payload = _b64decode(parts[0], "payload")
    mac = _b64decode(parts[1], "mac")
    if not 1 <= len(payload) <= _MAX_PAYLOAD_BYTES:
        raise InvalidTokenError("payload: empty or over 4,096 bytes")
    if len(mac) != _MAC_BYTES:
        raise InvalidTokenError(f"mac: {len(mac)} bytes, not the {_MAC_BYTES} of an HMAC-SHA-256")
    try:
        response = clients.kms().verify_mac(
            KeyId=key_id, Message=payload, Mac=mac, MacAlgorithm=MAC_ALGORITHM
        )
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "KMSInvalidMacException":
            raise InvalidTokenError("mac: does not verify (forged or altered)") from exc
        raise
    if response.get("MacValid") is not True:
        raise InvalidTokenError("mac: does not verify (forged or altered)")
    return _read_payload(payload)


def link(base: str, token: str) -> str:
    """``<base>?t=<token>``: the unsubscribe link of a token on the endpoint's URL ``base``."""
    parts = urlsplit(base)
    if parts.scheme not in {"https", "http"} or not parts.netloc or parts.query or parts.fragment:
        raise ValueError(f"unsubscribe base URL must be http(s) with a host and no query: {base[:200]!r}")
    return f"{base}?t={quote(token, safe='.-_')}"
