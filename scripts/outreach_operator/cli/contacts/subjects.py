"""What an operator names in ``outreach contacts``: one address, or a whole domain, as its ledger key.

An address is read as the planner reads a recipient (``recipients.ses_address``: syntax checked, a
Unicode domain in Punycode, a non-ASCII local part refused) and keyed by the core
(``contacts.address_key``); a domain is keyed by ``contacts.domain_key`` (lower-case, Punycode). A
``--domain`` value with an ``@`` is refused rather than read as its domain: blocking ``b.example``
when the operator meant ``a@b.example`` would stop every address there.
"""

from __future__ import annotations

from dataclasses import dataclass

from outreach import contacts
from outreach.errors import MalformedFieldError
from outreach_operator.campaigns.recipients import UndeliverableAddressError, ses_address
from outreach_operator.cli.output import BadInput
from outreach_operator.report_values import shorten


class SubjectError(ValueError):
    """Text that is not the address or domain it was given as; ``field`` names where it came from."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


@dataclass(frozen=True)
class Subject:
    """One ledger record's subject: its ``key`` (``address#…`` / ``domain#…``), ``kind`` and ``value``
    (the normalised address or domain)."""

    key: str
    kind: str
    value: str

    def as_dict(self) -> dict[str, str]:
        return {"key": self.key, "kind": self.kind, "value": self.value}


def _value_of(key: str) -> str:
    return key.split("#", 1)[1]


def address_subject(raw: str, field: str = "address") -> Subject:
    """The ledger subject of the address ``raw``; raises SubjectError naming ``field``."""
    try:
        key = contacts.address_key(ses_address(raw), field=field)
    except UndeliverableAddressError as exc:
        raise SubjectError(field, f"{shorten(raw)!r}: {exc}") from exc
    except MalformedFieldError as exc:
        raise SubjectError(field, f"{shorten(raw)!r}: {exc.reason}") from exc
    return Subject(key, "address", _value_of(key))


def domain_subject(raw: str, field: str = "domain") -> Subject:
    """The ledger subject of the domain ``raw`` (``example.org``, ``bücher.example``); raises
    SubjectError naming ``field``."""
    text = raw.strip().rstrip(".")
    if not text:
        raise SubjectError(field, "no domain")
    if "@" in text:
        raise SubjectError(field, f"{shorten(raw)!r} is an address: give the domain alone, or the address")
    try:
        key = contacts.domain_key(text, field=field)
    except MalformedFieldError as exc:
        raise SubjectError(field, f"{shorten(raw)!r} is not a domain name: {exc.reason}") from exc
    return Subject(key, "domain", _value_of(key))


def subject_of(address: str | None, domain: str | None) -> Subject:
    """The subject of a command given ``ADDRESS`` or ``--domain``: exactly one of them; BadInput (exit
    2) naming the argument otherwise."""
    if (address is None) == (domain is None):
        raise BadInput("ADDRESS: give exactly one of ADDRESS or --domain DOMAIN")
    try:
        if address is not None:
            return address_subject(address, "ADDRESS")
        return domain_subject(str(domain), "--domain")
    except SubjectError as exc:
        raise BadInput(str(exc)) from exc
