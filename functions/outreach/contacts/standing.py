"""What the email worker reads of its recipient after the claim: stop, engagement, first contacts.

All live on the address's ledger record (the stop also on its domain's), so one strongly consistent
BatchGetItem of the two keys answers every question a send asks: is the address (or its domain)
stopped, did the person reply or say they are away, and which first contacts it had lately
(``first_contacts``). A stop or a reply recorded before the read
began is seen:
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html
"""

from __future__ import annotations

from dataclasses import dataclass

from outreach.contacts.engagement import Engagement
from outreach.contacts.first_contacts import FirstContacts
from outreach.contacts.keys import address_key, domain_key
from outreach.contacts.reads import records, stop_in
from outreach.contacts.states import Stop


@dataclass(frozen=True)
class Standing:
    """An address's stop (``None``: nothing stops it), its replies and absence, its first-contact slots."""

    stop: Stop | None
    engagement: Engagement
    first_contacts: FirstContacts


def standing_of(address: str) -> Standing:
    """The stop, engagement and first contacts of ``address``, from one read of its and its domain's record.

    ``MalformedFieldError`` for a non-address (naming ``address``) or a stored field no reader can
    trust (naming it): either way nothing may be sent on it.
    """
    own = address_key(address)
    found = records([own, domain_key(address)])
    record = found.get(own, {})
    return Standing(stop_in(found, address), Engagement.from_item(record), FirstContacts.from_item(record))
