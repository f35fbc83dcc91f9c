"""Whether an SES identity covers a campaign's sender address.

An address identity covers that address only; a domain identity covers every address of the domain
and of its subdomains without verifying them one by one
(https://docs.aws.amazon.com/ses/latest/dg/creating-identities.html).
"""

from __future__ import annotations

from outreach_operator.campaigns.campaign_file import address_of


def identity_covers(identity: str, sender: str) -> bool:
    """``True`` if mail from ``sender`` (``Name <addr>`` or ``addr``) may be sent with ``identity``."""
    address = address_of(sender).lower()
    wanted = identity.strip().lower()
    if "@" in wanted:
        return address == wanted
    domain = address.rsplit("@", 1)[1]
    return domain == wanted or domain.endswith("." + wanted)
