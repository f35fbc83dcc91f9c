"""The per-email reply address: ``reply+<handle>.<mac>@<reply domain>``, naming one email task, proved by KMS.

Every email of a campaign with a reply domain has its own Reply-To, so a reply names the email it
answers even when its subject and quotes were changed:

- ``handle``: the task's reply handle (``email_task.email_reply_handle``: 16 lowercase base32
  characters of the first 10 bytes of SHA-256(``reply-handle\\n`` + task id)). It is written on the
  task (``reply_handle``), and the tasks table's sparse ``reply-handles`` index finds the task by it.
- ``mac``: 16 lowercase base32 characters of the first 10 bytes of KMS GenerateMac (``HMAC_SHA_256``)
  of ``reply-v1\\n`` + task id, with the environment's HMAC key (``UNSUBSCRIBE_KEY_ID``, the key of the
  unsubscribe tokens; the payload prefix keeps the two kinds of MAC apart). No secret lives in code.

Why the MAC is truncated, and checked here rather than by KMS VerifyMac: a local part is at most 64
octets (RFC 5321 §4.5.3.1.1), and a whole HMAC-SHA-256 is 32 bytes, 52 base32 characters, which with
``reply+`` and the handle does not fit. VerifyMac compares a whole MAC only
(https://docs.aws.amazon.com/kms/latest/APIReference/API_VerifyMac.html), so verifying asks GenerateMac
for the MAC again (HMAC is deterministic: the same key and message give the same MAC,
https://docs.aws.amazon.com/kms/latest/APIReference/API_GenerateMac.html) and compares its first 10
bytes in constant time (``hmac.compare_digest``). 80 bits are far past guessing: a forger who tries a
million addresses a second needs about 19 billion years for an even chance, and each guess is a mail
the reply domain receives. The local part is 39 octets (``reply+`` 6, handle 16, ``.`` 1, mac 16).

Mail systems may change the case of a local part: it is read in any case. Anything that is not of the
form, or is over 64 octets, is an ``InvalidTokenError`` naming what is wrong; KMS's own failures
(throttling, a disabled key) raise as they are, for the retry machinery.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import os
import re
from typing import Final, Literal

from outreach import clients
from outreach.email_task import REPLY_HANDLE_BYTES, REPLY_LOCAL_PREFIX, email_reply_handle
from outreach.errors import ConfigurationError, InvalidTokenError, MalformedFieldError
from outreach.task_model import Task
from outreach.task_store.reads import email_task_by_reply_handle

MAC_ALGORITHM: Final[Literal["HMAC_SHA_256"]] = "HMAC_SHA_256"
MAC_BYTES = 10
# RFC 5321 §4.5.3.1.1: "The maximum total length of a user name or other local-part is 64 octets."
MAX_LOCAL_PART_OCTETS = 64
# RFC 5321 §4.5.3.1.3: a path (an address in angle brackets) is at most 256 octets.
MAX_ADDRESS_OCTETS = 254
# GenerateMac's message is 1-4,096 bytes; a task id is far shorter.
_MAX_TASK_ID_BYTES = 1_024
_BASE32_CHARS = 16
_BASE32 = f"[a-z2-7]{{{_BASE32_CHARS}}}"
_LOCAL_PART = re.compile(re.escape(REPLY_LOCAL_PREFIX) + f"(?P<handle>{_BASE32})\\.(?P<mac>{_BASE32})")
_DOMAIN = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+")


def _b32(data: bytes) -> str:
    return base64.b32encode(data).decode("ascii").lower()


def _key(key_id: str | None) -> str:
    """``key_id``, else the functions' ``UNSUBSCRIBE_KEY_ID`` (``ConfigurationError`` if it is unset)."""
    if key_id:
        return key_id
    configured = os.environ.get("UNSUBSCRIBE_KEY_ID", "").strip()
    if not configured:
        raise ConfigurationError("environment variable UNSUBSCRIBE_KEY_ID is required")
    return configured


def _domain(reply_domain: str) -> str:
    """The reply domain lower-cased without a final dot; ``MalformedFieldError`` if it is no ASCII domain."""
    domain = reply_domain.strip().rstrip(".").lower() if isinstance(reply_domain, str) else ""
    if len(domain) > 253 or not _DOMAIN.fullmatch(domain):
        raise MalformedFieldError(
            "reply_domain", "not an ASCII domain name (write a Unicode one in Punycode)"
        )
    return domain


def _mac(task_id: str, key_id: str | None) -> bytes:
    """The first ``MAC_BYTES`` of GenerateMac(HMAC_SHA_256, ``reply-v1\\n`` + task id): one KMS call."""
    message = b"reply-v1\n" + task_id.encode()
    response = clients.kms().generate_mac(KeyId=_key(key_id), Message=message, MacAlgorithm=MAC_ALGORITHM)
    return bytes(response["Mac"][:MAC_BYTES])


def reply_local_part(task_id: str, *, key_id: str | None = None) -> str:
    """``reply+<handle>.<mac>`` of ``task_id``: one GenerateMac call; ``MalformedFieldError`` for a task
    id no email task has."""
    if not isinstance(task_id, str) or not task_id.startswith("email#"):
        raise MalformedFieldError("task_id", "not the id of an email task")
    if len(task_id.encode()) > _MAX_TASK_ID_BYTES:
        raise MalformedFieldError("task_id", f"over {_MAX_TASK_ID_BYTES:,} bytes")
    return f"{REPLY_LOCAL_PREFIX}{email_reply_handle(task_id)}.{_b32(_mac(task_id, key_id))}"


def reply_address(task_id: str, reply_domain: str, *, key_id: str | None = None) -> str:
    """The reply address of the email task ``task_id`` at ``reply_domain`` (lower case): one GenerateMac
    call with ``key_id`` (else ``UNSUBSCRIBE_KEY_ID``). ``MalformedFieldError`` names a task id or
    domain no reply address can be made of."""
    domain = _domain(reply_domain)
    address = f"{reply_local_part(task_id, key_id=key_id)}@{domain}"
    if len(address) > MAX_ADDRESS_OCTETS:
        raise MalformedFieldError("reply_domain", f"makes an address over {MAX_ADDRESS_OCTETS} octets")
    return address


def _decoded(text: str, part: str) -> bytes:
    try:
        return base64.b32decode(text.upper())
    except (binascii.Error, ValueError) as exc:
        raise InvalidTokenError(f"{part}: not base32") from exc


def task_of_reply_address(address: str, reply_domain: str, *, key_id: str | None = None) -> Task | None:
    """The email task a reply address names, once its MAC verifies.

    ``None``: ``address`` is not a reply address of ``reply_domain`` (another domain, or a local part
    that does not start with ``reply+``, in any case). ``InvalidTokenError`` naming what is wrong for a
    reply address that proves nothing: over 64 octets, not ``reply+<handle>.<mac>``, a handle no task
    has, or a MAC that does not verify (forged or altered). Costs one Query and one GetItem of the
    tasks table (``task_store.reads.email_task_by_reply_handle``) and one GenerateMac.
    """
    domain = _domain(reply_domain)
    if not isinstance(address, str):
        return None
    local, at, address_domain = address.strip().rpartition("@")
    if not at or address_domain.rstrip(".").lower() != domain:
        return None
    if local[: len(REPLY_LOCAL_PREFIX)].lower() != REPLY_LOCAL_PREFIX:
        return None
    octets = len(local.encode("utf-8", errors="replace"))
    if octets > MAX_LOCAL_PART_OCTETS:
        raise InvalidTokenError(
            f"local part of {octets} octets, more than {MAX_LOCAL_PART_OCTETS} (RFC 5321)"
        )
    found = _LOCAL_PART.fullmatch(local.lower())
    if found is None:
        raise InvalidTokenError("local part: not reply+<handle>.<mac> (16 base32 characters each)")
    handle, mac = found.group("handle"), _decoded(found.group("mac"), "mac")
    if len(_decoded(handle, "handle")) != REPLY_HANDLE_BYTES or len(mac) != MAC_BYTES:
        raise InvalidTokenError("local part: handle or mac of the wrong length")
    task = email_task_by_reply_handle(handle)
    if task is None:
        raise InvalidTokenError("handle: no email task has it")
    if not hmac.compare_digest(_mac(task.task_id, key_id), mac):
        raise InvalidTokenError("mac: does not verify (forged or altered)")
    return task
