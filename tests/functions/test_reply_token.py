"""The reply address: it names one email task, fits a local part, and nothing forged or altered verifies."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from dataclasses import replace

import boto3
import pytest

from outreach import clients, task_store
from outreach.email_task import PlannedEmail, email_reply_handle
from outreach.errors import ConfigurationError, InvalidTokenError, MalformedFieldError
from outreach.reply_token import MAX_LOCAL_PART_OCTETS, reply_address, task_of_reply_address
from tests.functions.feedback_support import create_hmac_key
from tests.support.aws import REGION, Resources
from tests.support.email import planned

DOMAIN = "reply.acme.example"


@pytest.fixture
def key(resources: Resources, monkeypatch: pytest.MonkeyPatch) -> str:
    """The environment's HMAC key, as the functions have it (``UNSUBSCRIBE_KEY_ID``)."""
    key_id = create_hmac_key()
    monkeypatch.setenv("UNSUBSCRIBE_KEY_ID", key_id)
    return key_id


def _with_reply_address(email: PlannedEmail, key_id: str | None = None) -> PlannedEmail:
    address = reply_address(email.task_id, DOMAIN, key_id=key_id)
    return replace(email, message=replace(email.message, reply_to=address))


def _stored(recipient: str = "ada@example.org", step: int = 2) -> tuple[PlannedEmail, str]:
    """A task written with its reply address as Reply-To, and that address."""
    email = _with_reply_address(planned(recipient, step))
    task_store.create_email_tasks([email])
    return email, email.message.reply_to


def test_a_reply_address_names_its_task_and_verifies(key: str) -> None:
    email, address = _stored()
    task = task_of_reply_address(address, DOMAIN)
    assert task is not None and task.task_id == email.task_id
    assert task.email is not None and task.email.reply_handle == email_reply_handle(email.task_id)


def test_a_reply_address_is_reply_plus_handle_dot_mac_in_lower_case_base32_within_64_octets(key: str) -> None:
    email, address = _stored()
    local, _, domain = address.partition("@")
    assert domain == DOMAIN
    assert len(local.encode()) <= MAX_LOCAL_PART_OCTETS
    prefix, handle, mac = local[:6], local[6:22], local[23:]
    assert (prefix, local[22], len(mac)) == ("reply+", ".", 16)
    assert set(handle + mac) <= set("abcdefghijklmnopqrstuvwxyz234567")
    digest = hashlib.sha256(b"reply-handle\n" + email.task_id.encode()).digest()[:10]
    assert handle == base64.b32encode(digest).decode().lower()


def test_the_mac_is_the_truncated_hmac_of_its_own_payload_not_the_bare_task_id(key: str) -> None:
    email, address = _stored()
    kms = boto3.client("kms", region_name=REGION)

    def mac_of(message: bytes) -> str:
        made = kms.generate_mac(KeyId=key, Message=message, MacAlgorithm="HMAC_SHA_256")["Mac"]
        return base64.b32encode(made[:10]).decode().lower()

    mac = address.partition("@")[0].rpartition(".")[2]
    assert mac == mac_of(b"reply-v1\n" + email.task_id.encode()) != mac_of(email.task_id.encode())


def test_the_same_task_always_gets_the_same_address(key: str) -> None:
    task_id = planned("ada@example.org", 1).task_id
    assert reply_address(task_id, DOMAIN) == reply_address(task_id, DOMAIN.upper() + ".")


@pytest.mark.parametrize(
    "spell",
    [str.upper, str.title, lambda address: address.replace(DOMAIN, DOMAIN.upper() + ".")],
    ids=["upper case", "title case", "domain in capitals with a final dot"],
)
def test_a_reply_address_is_read_in_any_case(key: str, spell: Callable[[str], str]) -> None:
    email, address = _stored()
    task = task_of_reply_address(spell(address), DOMAIN)
    assert task is not None and task.task_id == email.task_id


@pytest.mark.parametrize(
    "address",
    [
        "replies@acme.example",
        f"unsubscribe@{DOMAIN}",
        f"owner@{DOMAIN}",
        f"reply+aaaaaaaaaaaaaaaa.aaaaaaaaaaaaaaaa@other.{DOMAIN}",
        f"reply+aaaaaaaaaaaaaaaa.aaaaaaaaaaaaaaaa@evil.example?{DOMAIN}",
        "no-at-sign",
        "",
    ],
)
def test_an_address_that_is_no_reply_address_of_the_domain_names_no_task(key: str, address: str) -> None:
    assert task_of_reply_address(address, DOMAIN) is None


def test_every_altered_character_of_the_mac_is_refused(key: str) -> None:
    _, address = _stored()
    local, _, domain = address.partition("@")
    for index in range(23, len(local)):
        swapped = "a" if local[index] != "a" else "b"
        altered = f"{local[:index]}{swapped}{local[index + 1 :]}@{domain}"
        with pytest.raises(InvalidTokenError, match="forged or altered"):
            task_of_reply_address(altered, DOMAIN)


def test_a_reply_address_made_with_another_key_is_forged(key: str) -> None:
    email = planned("ada@example.org", 2)
    task_store.create_email_tasks([_with_reply_address(email)])
    forged = reply_address(email.task_id, DOMAIN, key_id=create_hmac_key())
    with pytest.raises(InvalidTokenError, match="forged or altered"):
        task_of_reply_address(forged, DOMAIN)


def test_a_handle_moved_onto_another_tasks_mac_is_refused(key: str) -> None:
    _, ada = _stored("ada@example.org")
    _, bob = _stored("bob@example.org")
    spliced = f"{ada.partition('.')[0]}.{bob.partition('.')[2]}"
    with pytest.raises(InvalidTokenError, match="forged or altered"):
        task_of_reply_address(spliced, DOMAIN)


def test_a_handle_no_task_has_is_refused(key: str) -> None:
    address = reply_address(planned("nobody@example.org", 1).task_id, DOMAIN)
    with pytest.raises(InvalidTokenError, match="no email task"):
        task_of_reply_address(address, DOMAIN)


def test_a_task_whose_reply_to_is_not_its_reply_address_carries_no_handle(key: str) -> None:
    email = planned("ada@example.org", 1)
    task_store.create_email_tasks([email])
    task = task_store.get_task(email.task_id)
    assert task is not None and task.email is not None and task.email.reply_handle is None
    with pytest.raises(InvalidTokenError, match="no email task"):
        task_of_reply_address(reply_address(email.task_id, DOMAIN), DOMAIN)


@pytest.mark.parametrize(
    "local",
    [
        "reply+",
        "reply+aaaaaaaaaaaaaaaa",
        "reply+aaaaaaaaaaaaaaaa.aaaaaaaaaaaaaaa",
        "reply+aaaaaaaaaaaaaaaa.aaaaaaaaaaaaaaaaa",
        "reply+aaaaaaaaaaaaaaa1.aaaaaaaaaaaaaaaa",
        "reply+aaaaaaaaaaaaaaaa.aaaaaaaaaaaaaaaa.x",
        "reply+aaaaaaaaaaaaaaaa+aaaaaaaaaaaaaaaa",
        "reply+" + "a" * 59,
        "reply+" + "é" * 30,
    ],
    ids=[
        "empty",
        "no mac",
        "short mac",
        "long mac",
        "not base32",
        "extra part",
        "no dot",
        "65 octets",
        "utf-8",
    ],
)
def test_a_malformed_reply_address_is_refused_before_the_table_or_kms_is_asked(
    key: str, local: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def not_asked(*_: object, **__: object) -> None:
        raise AssertionError("the table or KMS was asked about a malformed reply address")

    monkeypatch.setattr(clients, "kms", not_asked)
    monkeypatch.setattr(task_store.reads, "rows", not_asked)
    with pytest.raises(InvalidTokenError):
        task_of_reply_address(f"{local}@{DOMAIN}", DOMAIN)


@pytest.mark.parametrize(
    ("task_id", "domain", "field"),
    [
        ("scrape#job#abc", DOMAIN, "task_id"),
        ("email#c#" + "x" * 2000, DOMAIN, "task_id"),
        ("email#c#abc", "not a domain", "reply_domain"),
        ("email#c#abc", "bücher.example", "reply_domain"),
        ("email#c#abc", "localhost", "reply_domain"),
        ("email#c#abc", ("a" * 60 + ".") * 4 + "example", "reply_domain"),
    ],
)
def test_no_reply_address_is_made_of_a_task_id_or_domain_no_email_can_have(
    key: str, task_id: str, domain: str, field: str
) -> None:
    with pytest.raises(MalformedFieldError) as caught:
        reply_address(task_id, domain)
    assert caught.value.field == field


def test_without_a_key_the_reply_address_stops_at_the_missing_setting(
    key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UNSUBSCRIBE_KEY_ID")
    with pytest.raises(ConfigurationError, match="UNSUBSCRIBE_KEY_ID"):
        reply_address(planned("ada@example.org", 1).task_id, DOMAIN)
