"""Which sender addresses an SES identity covers."""

from __future__ import annotations

from outreach_operator.campaigns.ses_identity import identity_covers


def test_domain_identity_covers_its_addresses_and_subdomains() -> None:
    assert identity_covers("acme.example", "Acme <sales@acme.example>")
    assert identity_covers("acme.example", "partners@mail.acme.example")
    assert not identity_covers("acme.example", "sales@notacme.example")
    assert not identity_covers("acme.example", "sales@acme.example.org")


def test_address_identity_covers_that_address_only() -> None:
    assert identity_covers("sales@acme.example", "Acme Sales <Sales@acme.example>")
    assert not identity_covers("sales@acme.example", "info@acme.example")
