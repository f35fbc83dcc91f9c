"""Reading the ledger: the stop of one address (the worker, before each send) and of many (planning).

Both read with strongly consistent reads (``task_store.items.batch_get``, ``ConsistentRead``), so a stop
recorded before the read began is seen: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html
An address is stopped by its own record or by its domain's; of two stops the higher rank wins (the
address's on a tie).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from outreach import config
from outreach.contacts.keys import address_key, domain_key
from outreach.contacts.states import Stop
from outreach.task_store.items import batch_get

KEY = "contact_key"


def records(keys: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The stored record of each of ``keys`` that exists, by key (BatchGetItem, 100 keys a call, every
    ``UnprocessedKeys`` asked for again)."""
    return {str(row[KEY]): row for row in batch_get(list(keys), table=config.contacts_table(), key_name=KEY)}


def _stops(keys: Iterable[str]) -> dict[str, Stop]:
    """The stop of each of ``keys`` whose record stops sending."""
    found: dict[str, Stop] = {}
    for row in records(keys).values():
        stop = Stop.from_item(row)
        if stop is not None:
            found[stop.key] = stop
    return found


def _higher(address_stop: Stop | None, domain_stop: Stop | None) -> Stop | None:
    if address_stop is None or (domain_stop is not None and domain_stop.state.rank > address_stop.state.rank):
        return domain_stop
    return address_stop


def stop_in(found: Mapping[str, Mapping[str, Any]], address: str) -> Stop | None:
    """What stops sending to ``address`` among the ``found`` records (by key): its record's stop or its
    domain's, the higher rank; ``None`` when neither stops it."""
    own, domain = (found.get(key) for key in (address_key(address), domain_key(address)))
    return _higher(
        Stop.from_item(own) if own is not None else None,
        Stop.from_item(domain) if domain is not None else None,
    )


def stop_of(address: str) -> Stop | None:
    """What stops sending to ``address`` (its record or its domain's, the higher rank), or ``None``.

    ``MalformedFieldError`` for a non-address (naming ``address``) or a stored record no reader can
    trust (naming its field): either way nothing may be sent on it.
    """
    return stop_in(records([address_key(address), domain_key(address)]), address)


def stops_of(addresses: Iterable[str]) -> dict[str, Stop]:
    """The stop of each address (as given) that may not be sent to; the others are left out."""
    wanted = {address: (address_key(address), domain_key(address)) for address in addresses}
    keys = dict.fromkeys(key for pair in wanted.values() for key in pair)
    found = _stops(keys)
    stopped: dict[str, Stop] = {}
    for address, (own, domain) in wanted.items():
        stop = _higher(found.get(own), found.get(domain))
        if stop is not None:
            stopped[address] = stop
    return stopped
