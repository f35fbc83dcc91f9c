"""The List-Unsubscribe target: exactly one mailto: or https: URI, on the campaign's own host.

The campaign file writes the target as a template (``unsubscribe``); the email worker sends it as
``List-Unsubscribe: <target>`` (RFC 2369, with RFC 8058's one-click POST for an https target;
``email_worker.unsubscribe_headers``). A placeholder's value written into it as it is could close the
angle bracket and add a second target (``x>, <https://evil.example/``), or, in the host
(``https://{{ website }}``), send every unsubscribe where the data says. So:

- *Every value is percent-encoded* (``urllib.parse.quote(value, safe="")``: only letters, digits and
  ``_.-~`` are left as they are), so no value adds a delimiter, a space or a line break. ``urlencode``
  encodes the same way and is not encoded twice; anything else a template makes is encoded again.
- *Scheme and host are written out* in the campaign file: ``https://`` and the host (and port) up to
  the first ``/``, ``?`` or ``#`` before any ``{{``, ``{%`` or ``{#``; or ``mailto:`` and one address
  up to its ``?``. No user name in an https target. Otherwise the campaign file is refused.
- *Every rendered target is checked*: only RFC 3986 characters, a ``%`` always followed by two hex
  digits, the same scheme and host (for mailto: the same address), and no ``to``, ``cc`` or ``bcc`` in
  a mailto: query (RFC 6068 would add them as recipients of the unsubscribe mail). A target that fails
  refuses its row, naming ``unsubscribe``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from jinja2.filters import do_urlencode

from outreach.email_task import is_one_address

_TEMPLATE_START = re.compile(r"\{[{%#]")
_NOT_URI_CHARACTER = re.compile(r"[^A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]")
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_HOST = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*")
_ADDED_RECIPIENTS = frozenset({"to", "cc", "bcc"})


class Encoded(str):
    """Text already percent-encoded (what ``urlencode`` made): output as it is."""

    __slots__ = ()


def percent_encoded(value: Any) -> str:
    """A placeholder's value as it goes into the URI: percent-encoded unless ``urlencode`` did it."""
    return value if isinstance(value, Encoded) else quote(str(value), safe="")


def urlencode(value: Any) -> Encoded:
    """The ``urlencode`` filter of the unsubscribe template: text encoded with nothing left safe (not
    even ``/``); a mapping or pairs as ``k=v&…`` (Jinja2's own, every key and value encoded)."""
    return Encoded(quote(value, safe="") if isinstance(value, str) else do_urlencode(value))


@dataclass(frozen=True)
class Origin:
    """Where the campaign's unsubscribes go: ``https`` and ``host[:port]``, or ``mailto`` and the
    address (its domain lower-cased)."""

    scheme: str
    place: str


def _address_key(address: str) -> str:
    local, _, domain = address.rpartition("@")
    return f"{local}@{domain.lower()}"


def _https_place(authority: str) -> str:
    if "@" in authority:
        raise ValueError("an https:// target may not have a user name")
    try:
        parts = urlsplit(f"https://{authority}")
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"not a host and port: {authority!r}: {exc}") from exc
    host = parts.hostname or ""
    if not _HOST.fullmatch(host) or authority.rsplit(":", 1)[0].lower() != host:
        raise ValueError(f"not an ASCII host name: {authority!r} (write a Unicode host in Punycode)")
    return host if port is None else f"{host}:{port}"


@lru_cache(maxsize=64)
def origin_of(template: str) -> Origin:
    """The literal scheme and host (or address) of the ``unsubscribe`` template; raises ValueError if
    they are not written out before its first placeholder."""
    placeholder = _TEMPLATE_START.search(template)
    literal = template if placeholder is None else template[: placeholder.start()]
    if literal.startswith("https://"):
        ends = [at for at in (literal.find(c, len("https://")) for c in "/?#") if at >= 0]
        if not ends and placeholder is not None:
            raise ValueError(
                "write the host out: it must end with '/', '?' or '#' before the first placeholder "
                f"(the literal start is {literal!r})"
            )
        return Origin("https", _https_place(literal[len("https://") : min(ends, default=len(literal))]))
    if literal.startswith("mailto:"):
        end = literal.find("?")
        if end < 0 and placeholder is not None:
            raise ValueError(
                "write the address out: it must end with '?' before the first placeholder "
                f"(the literal start is {literal!r})"
            )
        address = unquote(literal[len("mailto:") : end if end >= 0 else len(literal)])
        if not is_one_address(address):
            raise ValueError(f"a mailto: target needs exactly one ASCII address, not {address!r}")
        return Origin("mailto", _address_key(address))
    raise ValueError("must be a mailto: or https:// URI")


def target_problem(target: str, template: str) -> str | None:
    """Why the rendered ``target`` may not be the List-Unsubscribe target of a campaign whose
    ``unsubscribe`` template is ``template``; ``None`` if it may."""
    origin = origin_of(template)
    bad = _NOT_URI_CHARACTER.search(target)
    if bad is not None:
        return f"character {bad.group()!r} at position {bad.start() + 1} is not allowed in a URI"
    if _BAD_PERCENT.search(target):
        return "a '%' not followed by two hex digits"
    try:
        parts = urlsplit(target)
        if origin.scheme == "https":
            place = _https_place(parts.netloc) if parts.scheme == "https" else ""
        else:
            place = _address_key(unquote(parts.path)) if parts.scheme == "mailto" else ""
    except ValueError as exc:
        return f"not one {origin.scheme}: URI: {exc}"
    if place != origin.place:
        return f"goes to {place or target!r}, not to the campaign's own {origin.place!r}"
    if origin.scheme == "mailto":
        added = {name.lower() for name, _ in parse_qsl(parts.query, keep_blank_values=True)}
        if added & _ADDED_RECIPIENTS:
            return f"a mailto: target may not add recipients ({', '.join(sorted(added & _ADDED_RECIPIENTS))})"
    return None
