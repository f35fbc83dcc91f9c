"""The contact ledger: one record per address and per blocked domain, which every send obeys.

- ``keys``: the normalised address and the record keys (``address#...``, ``domain#...``).
- ``states``: the ranked states, who set them, and a ``Stop`` (what stops sending, and why).
- ``reads``: ``stop_of`` an address (the email worker, after its claim) and ``stops_of`` many (planning).
- ``writes``: ``record_stop``, ``record_soft_bounce``, ``record_contacted``: idempotent, order-free, the
  highest state wins; ``unblock``, the operator's only way down.
- ``stop_fanout``: ``cancel_open_emails``, a stop reaching every open email to the address.
- ``engagement``: ``record_reply``, ``record_away`` and ``engagement_of``: the campaigns an address
  replied in and until when it is away (inbound mail), which never change its state.
- ``first_contact_rule`` and ``first_contacts``: the gap and 30-day cap on first contacts to one
  address across campaigns, and ``take_first_contact``, the slot a worker takes before it sends.
- ``identity_days``: ``take_identity_send``, one more email of the sending identity on a UTC day,
  counted against its warm-up cap with one conditional write before the send.
- ``standing``: ``standing_of`` an address, its stop, engagement and first contacts in one read (the
  email worker).

The table is ``CONTACTS_TABLE`` (modules/contact-ledger), hash key ``contact_key``.
"""

from outreach.contacts.engagement import Engagement, engagement_of, record_away, record_reply
from outreach.contacts.first_contact_rule import FirstContactRule
from outreach.contacts.first_contacts import FirstContacts, take_first_contact
from outreach.contacts.identity_days import take_identity_send
from outreach.contacts.keys import (
    ADDRESS_PREFIX,
    DOMAIN_PREFIX,
    IDENTITY_PREFIX,
    address_key,
    domain_key,
    identity_day_key,
    kind_of_key,
    normalise,
    normalise_domain,
)
from outreach.contacts.reads import KEY, stop_of, stops_of
from outreach.contacts.standing import Standing, standing_of
from outreach.contacts.states import WHY_CHARS, Source, State, Stop
from outreach.contacts.stop_fanout import FanOut, cancel_open_emails
from outreach.contacts.writes import clean_why, record_contacted, record_soft_bounce, record_stop, unblock

__all__ = [
    "ADDRESS_PREFIX",
    "DOMAIN_PREFIX",
    "IDENTITY_PREFIX",
    "KEY",
    "WHY_CHARS",
    "Engagement",
    "FanOut",
    "FirstContactRule",
    "FirstContacts",
    "Source",
    "Standing",
    "State",
    "Stop",
    "address_key",
    "cancel_open_emails",
    "clean_why",
    "domain_key",
    "engagement_of",
    "identity_day_key",
    "kind_of_key",
    "normalise",
    "normalise_domain",
    "record_away",
    "record_contacted",
    "record_reply",
    "record_soft_bounce",
    "record_stop",
    "standing_of",
    "stop_of",
    "stops_of",
    "take_first_contact",
    "take_identity_send",
    "unblock",
]
