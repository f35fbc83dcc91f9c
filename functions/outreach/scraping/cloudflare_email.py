"""Cloudflare's e-mail address protection decoded: the first hex byte is a key XOR-ed into the rest.

Cloudflare replaces an address in a page with ``<a href="/cdn-cgi/l/email-protection#<hex>">`` or
``<span class="__cf_email__" data-cfemail="<hex>">`` and decodes it in the browser with a script;
https://developers.cloudflare.com/waf/tools/scrape-shield/email-address-obfuscation/
"""

from __future__ import annotations

import re

PROTECTION_PATH = "/cdn-cgi/l/email-protection"
_HEX = re.compile(r"(?:[0-9a-f]{2}){2,256}", re.IGNORECASE)


def decode_cfemail(encoded: str) -> str | None:
    """The text hidden in ``encoded`` (hex: key byte, then the XOR-ed bytes); None if it is not such hex."""
    text = encoded.strip()
    if not _HEX.fullmatch(text):
        return None
    data = bytes.fromhex(text)
    key = data[0]
    try:
        return bytes(byte ^ key for byte in data[1:]).decode("utf-8")
    except UnicodeDecodeError:  # outcome: not an encoded address, nothing decoded
        return None


def protected_href_payload(href: str) -> str | None:
    """The hex after ``#`` of a ``/cdn-cgi/l/email-protection#<hex>`` link (relative or absolute)."""
    path, hash_sign, fragment = href.partition("#")
    if not hash_sign or not path.rstrip("/").endswith(PROTECTION_PATH):
        return None
    return fragment
