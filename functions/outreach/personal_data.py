"""Personal data kept out of logs: an e-mail address is logged as a stable hash, never as itself.

The address stays on the task row, where access is governed (IAM on the table); a log line may be read
by anyone with the log group. The hash is stable, so a person with the address can find its lines
(``outreach`` prints the same hash), and short enough not to be an identifier across systems.
"""

from __future__ import annotations

import hashlib
import re

# Loose on purpose: anything that looks like an address in free text (SES error messages, reasons).
_ADDRESS = re.compile(r"[A-Za-z0-9._%+'!#$&*/=?^`{|}~-]+@[A-Za-z0-9.-]+\.[A-Za-z0-9-]{2,}")
_HASH_CHARS = 12


def address_hash(address: str) -> str:
    """``addr:<12 hex>`` of the lower-cased, trimmed address: the same for every spelling of its case."""
    digest = hashlib.sha256(address.strip().lower().encode()).hexdigest()[:_HASH_CHARS]
    return f"addr:{digest}"


def redact_addresses(text: str) -> str:
    """``text`` with every e-mail address in it replaced by its ``address_hash``."""
    return _ADDRESS.sub(lambda found: address_hash(found.group()), text)
