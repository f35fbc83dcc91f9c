"""The unsubscribe token: it proves one address, campaign and step, and nothing else verifies."""

from __future__ import annotations

import base64
import json

import boto3
import pytest
from botocore.exceptions import ClientError

from outreach.errors import InvalidTokenError, MalformedFieldError
from outreach.unsubscribe.token import MAX_TOKEN_CHARS, TokenSubject, link, make_token, verify_token
from tests.functions.feedback_support import create_hmac_key
from tests.support.aws import REGION


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_a_token_verifies_to_the_normalised_address_campaign_and_step(hmac_key: str) -> None:
    token = make_token(hmac_key, "spring.2027", 2, " Ada@Example.ORG ")
    assert len(token) <= MAX_TOKEN_CHARS
    assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")
    assert verify_token(hmac_key, token) == TokenSubject("spring.2027", 2, "ada@example.org")
    payload = json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))
    assert payload == {"a": "ada@example.org", "c": "spring.2027", "s": 2, "v": 1}


def test_a_token_made_with_another_key_is_forged(hmac_key: str) -> None:
    forged = make_token(create_hmac_key(), "spring", 1, "ada@example.org")
    with pytest.raises(InvalidTokenError, match="forged or altered"):
        verify_token(hmac_key, forged)


def test_every_altered_character_of_a_token_is_refused(hmac_key: str) -> None:
    token = make_token(hmac_key, "spring", 1, "ada@example.org")
    for index in range(0, len(token), 3):
        if token[index] == ".":
            continue
        altered = token[:index] + ("A" if token[index] != "A" else "B") + token[index + 1 :]
        with pytest.raises(InvalidTokenError):
            verify_token(hmac_key, altered)


def test_a_payload_for_another_address_under_a_valid_mac_is_refused(hmac_key: str) -> None:
    mallory = make_token(hmac_key, "spring", 1, "mallory@example.org")
    ada = make_token(hmac_key, "spring", 1, "ada@example.org")
    spliced = f"{ada.split('.')[0]}.{mallory.split('.')[1]}"
    with pytest.raises(InvalidTokenError, match="forged or altered"):
        verify_token(hmac_key, spliced)


def test_a_mac_of_a_payload_make_token_never_writes_is_refused(hmac_key: str) -> None:
    payload = json.dumps({"a": "ada@example.org", "c": "spring", "s": 1, "v": 1, "x": 1}).encode()
    mac = boto3.client("kms", region_name=REGION).generate_mac(
        KeyId=hmac_key, Message=payload, MacAlgorithm="HMAC_SHA_256"
    )["Mac"]
    with pytest.raises(InvalidTokenError, match="payload"):
        verify_token(hmac_key, f"{_b64(payload)}.{_b64(mac)}")


@pytest.mark.parametrize(
    "token",
    ["", "abc", "a.b.c", "a b.c", "abc=.def", "x" * (MAX_TOKEN_CHARS + 1), "YQ.YQ"],
    ids=["empty", "no dot", "three parts", "a space", "padding", "too long", "a short mac"],
)
def test_a_malformed_token_is_refused_before_kms_is_asked(
    hmac_key: str, token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from outreach import clients

    def no_kms() -> None:
        raise AssertionError("KMS asked about a malformed token")

    monkeypatch.setattr(clients, "kms", no_kms)
    with pytest.raises(InvalidTokenError):
        verify_token(hmac_key, token)


def test_a_base64_spelling_other_than_the_canonical_one_is_refused(hmac_key: str) -> None:
    token = make_token(hmac_key, "spring", 1, "ada@example.org")
    mac = token.split(".")[1]
    # 32 bytes are 43 characters: the last one carries 2 spare bits, so 4 spellings decode alike.
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    twin = alphabet[alphabet.index(mac[-1]) ^ 1]
    with pytest.raises(InvalidTokenError, match="canonical"):
        verify_token(hmac_key, f"{token.split('.')[0]}.{mac[:-1]}{twin}")


def test_kms_failing_raises_its_error_and_is_no_verdict_on_the_token(
    hmac_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from outreach import clients

    token = make_token(hmac_key, "spring", 1, "ada@example.org")

    class _Throttled:
        def verify_mac(self, **_: object) -> None:
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, "VerifyMac")

    monkeypatch.setattr(clients, "kms", _Throttled)
    with pytest.raises(ClientError, match="ThrottlingException"):
        verify_token(hmac_key, token)


@pytest.mark.parametrize(
    ("campaign", "step", "address", "field"),
    [
        ("../x", 1, "ada@example.org", "campaign_id"),
        ("spring", 0, "ada@example.org", "step"),
        ("spring", 1, "ada", "address"),
    ],
)
def test_no_token_is_made_for_what_no_email_task_can_be(
    hmac_key: str, campaign: str, step: int, address: str, field: str
) -> None:
    with pytest.raises(MalformedFieldError) as refused:
        make_token(hmac_key, campaign, step, address)
    assert refused.value.field == field


def test_the_link_is_the_endpoint_url_with_the_token_as_t() -> None:
    base = "https://abc.lambda-url.eu-central-1.on.aws/"
    assert link(base, "p.m") == "https://abc.lambda-url.eu-central-1.on.aws/?t=p.m"
    for wrong in ("ftp://x/", "https://x/?a=1", "https://x/#f", "/relative"):
        with pytest.raises(ValueError, match="unsubscribe base URL"):
            link(wrong, "p.m")
