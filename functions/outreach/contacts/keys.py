"""The contact ledger's keys: one normalised form of an address, and the record keys derived from it.

A record is keyed ``address#<normalised address>`` or ``domain#<domain>`` (``contact_key``); a sending
identity's count of emails on one UTC day is ``identity#<domain>#<YYYY-MM-DD>`` (``identity_day_key``). The
normalised address is the trimmed, lower-cased form of one address ``email_task.is_one_address``
accepts, its domain in IDNA ASCII form (the planner writes ASCII already; a Unicode domain is encoded
the way ``canonical_url.canonical_host`` encodes a host). Every writer and reader of the ledger, and the
tasks table's ``recipient_key``, use these, so one address is one record however it was spelt.
"""

from __future__ import annotations

from datetime import date

from outreach.canonical_url import canonical_host
from outreach.email_task import is_one_address
from outreach.errors import MalformedFieldError, UnusableUrlError

ADDRESS_PREFIX = "address#"
DOMAIN_PREFIX = "domain#"
IDENTITY_PREFIX = "identity#"
# RFC 5321's limit on a path (is_one_address holds an address to it too).
_MAX_INPUT_CHARS = 320


def _ascii_domain(domain: str, field: str) -> str:
    """``domain`` lower-cased, without a final dot, a Unicode name in its IDNA ASCII form."""
    text = domain.strip().rstrip(".")
    if not text:
        raise MalformedFieldError(field, "empty domain")
    if text.isascii():
        return text.lower()
    try:
        return canonical_host(text)
    except UnusableUrlError as exc:
        raise MalformedFieldError(field, f"domain has no IDNA form: {exc}") from exc


def normalise(address: str, *, field: str = "address") -> str:
    """``address`` trimmed and lower-cased, its domain in ASCII; ``MalformedFieldError`` naming ``field``
    for anything that is not exactly one e-mail address."""
    if not isinstance(address, str):
        raise MalformedFieldError(field, f"not text: {type(address).__name__}")
    text = address.strip()
    if len(text) > _MAX_INPUT_CHARS or "@" not in text:
        raise MalformedFieldError(field, "not an e-mail address")
    local, _, domain = text.rpartition("@")
    candidate = f"{local}@{_ascii_domain(domain, field)}".lower()
    if not is_one_address(candidate):
        raise MalformedFieldError(field, "not exactly one e-mail address")
    return candidate


def normalise_domain(address_or_domain: str, *, field: str = "domain") -> str:
    """The domain of an address, or a domain itself: lower case, ASCII (IDNA), checked as a mail domain."""
    if not isinstance(address_or_domain, str):
        raise MalformedFieldError(field, f"not text: {type(address_or_domain).__name__}")
    text = address_or_domain.strip()
    if len(text) > _MAX_INPUT_CHARS:
        raise MalformedFieldError(field, "longer than an address may be")
    if "@" in text:
        return normalise(text, field=field).rpartition("@")[2]
    domain = _ascii_domain(text, field)
    if not is_one_address(f"x@{domain}"):
        raise MalformedFieldError(field, "not a mail domain (labels of letters, digits and hyphens)")
    return domain


def address_key(address: str, *, field: str = "address") -> str:
    """``address#<normalised address>``: the ledger record of one address."""
    return ADDRESS_PREFIX + normalise(address, field=field)


def domain_key(address_or_domain: str, *, field: str = "domain") -> str:
    """``domain#<domain>``: the ledger record of a whole domain (of an address, or a domain itself)."""
    return DOMAIN_PREFIX + normalise_domain(address_or_domain, field=field)


def identity_day_key(sending_domain: str, day: date) -> str:
    """``identity#<domain>#<YYYY-MM-DD>``: the count of emails a sending identity sent on one UTC day."""
    return f"{IDENTITY_PREFIX}{normalise_domain(sending_domain, field='sending_domain')}#{day.isoformat()}"


def kind_of_key(key: str) -> str:
    """``address`` or ``domain`` for a well-formed key; ``MalformedFieldError`` (``contact_key``) else."""
    field = "contact_key"
    if key.startswith(ADDRESS_PREFIX) and key == address_key(key.removeprefix(ADDRESS_PREFIX), field=field):
        return "address"
    if key.startswith(DOMAIN_PREFIX) and key == domain_key(key.removeprefix(DOMAIN_PREFIX), field=field):
        return "domain"
    raise MalformedFieldError("contact_key", "not address#<normalised address> or domain#<domain>")
