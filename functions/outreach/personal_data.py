"""Personal data kept out of logs: an e-mail address is logged as a stable hash, never as itself.

The address stays on the task row, where access is governed (IAM on the table); a log line may be read
by anyone with the log group. The hash is stable, so a person with the address can find its lines
(``outreach`` prints the same hash), and short enough not to be an identifier across systems. A phone
number written in international form (``+49 30 1234567``) is hashed the same way; a number in national
form cannot be told from the other numbers of a log line (sequence numbers, ids) and is left as it is.
"""

from __future__ import annotations

import hashlib
import re

# Loose on purpose: anything that looks like an address in free text (SES error messages, reasons).
_ADDRESS = re.compile(r"[A-Za-z0-9._%+'!#$&*/=?^`{|}~-]+@[A-Za-z0-9.-]+\.[A-Za-z0-9-]{2,}")
_HASH_CHARS = 12
# ``+`` and 7 to 15 digits (E.164 has at most 15), with the separators pages write between them. Not
# after a letter, digit or ``+``, and not followed by a digit: a longer run is not this number.
_INTERNATIONAL_PHONE = re.compile(r"(?<![\w+])\+\d(?:[ ./()-]{0,2}\d){6,14}(?!\d)")


def address_hash(address: str) -> str:
    """``addr:<12 hex>`` of the lower-cased, trimmed address: the same for every spelling of its case."""
    digest = hashlib.sha256(address.strip().lower().encode()).hexdigest()[:_HASH_CHARS]
    return f"addr:{digest}"


def redact_addresses(text: str) -> str:
    """``text`` with every e-mail address in it replaced by its ``address_hash``."""
    return _ADDRESS.sub(lambda found: address_hash(found.group()), text)


def phone_hash(number: str) -> str:
    """``tel:<12 hex>`` of the number's ``+`` and digits: the same however its digits are grouped."""
    digits = "+" + "".join(char for char in number if char.isdigit())
    return f"tel:{hashlib.sha256(digits.encode()).hexdigest()[:_HASH_CHARS]}"


def redact_personal_data(text: str) -> str:
    """``text`` with every e-mail address and every international phone number replaced by its hash."""
    return _INTERNATIONAL_PHONE.sub(lambda found: phone_hash(found.group()), redact_addresses(text))
