"""E-mail addresses on a page: mailto links, Cloudflare-protected, plain and written out; no placeholders.

Written-out forms are read when the ``at`` is bracketed (``[at]``, ``(at)``, ``{at}``, ``[@]``, ``(@)``)
or plain; dots may be bracketed (``[dot]``, ``(dot)``, ``(punkt)``, ``[.]``), written with spaces
(`` dot ``, `` punkt ``) or be dots. A bare `` at `` between words is prose more often than an address,
so it counts only when the domain is written with a spelt-out dot too (``info at example dot de``, not
"find us at shop.com") and either the domain is the page's own registrable domain or the local part
has a character prose words do not (a digit, ``.``, ``_``, ``-``, ``+``, ``%``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from email.utils import getaddresses
from urllib.parse import parse_qsl, unquote

from outreach.scraping.cloudflare_email import decode_cfemail, protected_href_payload
from outreach.scraping.contacts import Decoded, FoundEmail
from outreach.scraping.registrable_domain import public_suffix, registrable_domain

MAX_EMAIL_CHARS = 254

# Possessive: what may follow a local part (an "at", a bracketed dot) never starts with a character
# of it, so giving characters back never finds a match, and not trying halves the search's time.
_LOCAL_PART = r"[a-z0-9][a-z0-9._%+-]{0,63}+"
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_AT_BRACKETED = r"[ \t]*+[\[({][ \t]*+(?:at|@)[ \t]*+[\])}][ \t]*+"
_AT_BARE = r"[ \t]++at[ \t]++"
_DOT_BRACKETED = r"[ \t]*+[\[({][ \t]*+(?:dot|punkt|\.)[ \t]*+[\])}][ \t]*+"
_DOT_BARE = r"[ \t]++(?:dot|punkt)[ \t]++"
_DOT = rf"(?:{_DOT_BRACKETED}|{_DOT_BARE}|\.)"
_ADDRESS = re.compile(
    rf"(?<![\w.%+@-])(?P<local>{_LOCAL_PART}(?:{_DOT_BRACKETED}{_LOCAL_PART})*)"
    rf"(?P<at>{_AT_BRACKETED}|{_AT_BARE}|@)"
    rf"(?P<domain>{_LABEL}(?:{_DOT}{_LABEL})+)(?![\w-])",
    re.IGNORECASE,
)
# Every character an address match can hold (its parts in any case: under IGNORECASE [a-z] also
# matches the dotless and dotted i, the long s and the Kelvin sign), and what every match holds: its
# "at", as "@", bracketed or between blanks. The search runs only over runs of the former that hold
# the latter; no match crosses a character outside them, so it finds what a search of all finds.
_ADDRESS_CHARS = r"A-Za-z0-9._%+\- \t\[\](){}@\u0130\u0131\u017f\u212a"
_OUTSIDE_ADDRESS = re.compile(rf"[^{_ADDRESS_CHARS}]")
_AT_ANCHOR = re.compile(r"[@\[({ \t](?:(?<=@)|(?<=[\[({])[ \t]*+(?:at|@)|(?<=[ \t])at[ \t])", re.IGNORECASE)
_SPELT_DOT = re.compile(rf"{_DOT_BRACKETED}|{_DOT_BARE}", re.IGNORECASE)
_PLAIN = re.compile(rf"{_LOCAL_PART}@{_LABEL}(?:\.{_LABEL})+", re.IGNORECASE)
_NOT_A_PROSE_WORD = re.compile(r"[0-9._%+-]")

# Suffixes reserved for examples and tests (RFC 2606, RFC 6761): not in the public suffix list, but
# addresses under them are kept (they are what the project's own test sites use).
_SPECIAL_USE_SUFFIXES = frozenset({"example", "test", "invalid", "localhost"})
# Names (the registrable domain without its suffix) of placeholder and throwaway-mail domains.
_PLACEHOLDER_NAMES = frozenset(
    {
        "example", "beispiel", "domain", "yourdomain", "your-domain", "mydomain", "ihredomain",
        "ihre-domain", "deinedomain", "meinedomain", "musterdomain", "mailinator", "guerrillamail",
        "sharklasers", "yopmail", "10minutemail", "trashmail", "tempmail", "temp-mail", "throwawaymail",
        "maildrop", "dispostable", "getnada", "mailnesia", "wegwerfmail", "spambog", "discard",
    }
)  # fmt: skip
_PLACEHOLDER_SUFFIXES = frozenset({"tld"})
_PLACEHOLDER_LOCAL_PARTS = frozenset(
    {
        "empfaenger", "empfänger", "recipient", "vorname.nachname", "firstname.lastname", "max.mustermann",
        "maxmustermann", "erika.mustermann", "john.doe", "jane.doe", "your.name", "yourname", "ihr.name",
        "youremail", "your.email", "ihre.email",
    }
)  # fmt: skip
_ASSET_SUFFIXES = (
    ".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".avif", ".ico", ".bmp", ".tif", ".tiff",
    ".css", ".js", ".woff", ".woff2", ".ttf", ".eot", ".mp4", ".webm",
)  # fmt: skip
_TRACKER_DOMAINS = ("sentry.io", "sentry.wixpress.com", "sentry-next.wixpress.com")
_HASH_LOCAL_PART = re.compile(r"[0-9a-f]{24,}")


def find_emails(
    hrefs: Iterable[str], cloudflare_values: Iterable[str], text: str, *, page_url: str, page_host: str
) -> Iterator[FoundEmail]:
    """Every plausible address: mailto links, Cloudflare-protected ones, then the visible ``text``."""
    for href in hrefs:
        payload = protected_href_payload(href)
        if payload is not None:
            decoded = decode_cfemail(payload)
            for address in mailto_addresses(decoded or ""):
                yield FoundEmail(address, page_url, Decoded.CLOUDFLARE)
        elif href[:7].lower() == "mailto:":
            for address in mailto_addresses(href[7:]):
                yield FoundEmail(address, page_url, Decoded.MAILTO)
    for value in cloudflare_values:
        for address in mailto_addresses(decode_cfemail(value) or ""):
            yield FoundEmail(address, page_url, Decoded.CLOUDFLARE)
    for address, how in emails_in_text(text, page_host=page_host):
        yield FoundEmail(address, page_url, how)


def mailto_addresses(target: str) -> list[str]:
    """The plausible addresses of a ``mailto:`` target (without the scheme), in order.

    Understands display names (``Name <a@b.de>``), several recipients separated by ``,`` or ``;`` and
    the ``to``, ``cc`` and ``bcc`` fields of a query string (RFC 6068).
    """
    recipients, _, query = target.partition("?")
    fields = [unquote(recipients)]
    fields += [value for key, value in parse_qsl(query) if key.lower() in ("to", "cc", "bcc")]
    found = []
    for _, address in getaddresses([field.replace(";", ",") for field in fields]):
        candidate = address.strip().lower()
        if _PLAIN.fullmatch(candidate) and plausible_email(candidate):
            found.append(candidate)
    return found


def emails_in_text(text: str, *, page_host: str) -> list[tuple[str, Decoded]]:
    """Plain and written-out addresses in ``text`` with how each was read; prose is never made one."""
    found = []
    for match in _address_matches(text):
        at = match.group("at")
        raw_local, raw_domain = match.group("local"), match.group("domain")
        local = _SPELT_DOT.sub(".", raw_local).lower()
        domain = _SPELT_DOT.sub(".", raw_domain).lower()
        if at.strip().lower() == "at":
            if "." in raw_domain.replace(" ", "") and not _SPELT_DOT.search(raw_domain):
                continue
            own_domain = registrable_domain(domain) == registrable_domain(page_host)
            if not own_domain and not _NOT_A_PROSE_WORD.search(local):
                continue
        address = f"{local}@{domain}"
        if not plausible_email(address):
            continue
        written_out = at != "@" or raw_local.lower() != local or raw_domain.lower() != domain
        found.append((address, Decoded.WRITTEN_OUT if written_out else Decoded.PLAIN))
    return found


def _address_matches(text: str) -> Iterator[re.Match[str]]:
    """``_ADDRESS.finditer(text)``, searched only in the runs of address characters that hold an "at"."""
    searched_to = 0
    backwards: str | None = None
    for anchor in _AT_ANCHOR.finditer(text):
        if anchor.start() < searched_to:
            continue
        if backwards is None:
            backwards = text[::-1]
        before = _OUTSIDE_ADDRESS.search(backwards, len(text) - anchor.start())
        start = len(text) - before.start() if before is not None else 0
        after = _OUTSIDE_ADDRESS.search(text, anchor.end())
        # The character after the run stays in reach of the match's closing lookahead.
        searched_to = after.start() + 1 if after is not None else len(text)
        yield from _ADDRESS.finditer(text, start, searched_to)


def plausible_email(address: str) -> bool:
    """False for placeholders, throwaway mail, asset names (``logo@2x.png``), trackers, unknown suffixes."""
    local, _, domain = address.rpartition("@")
    if len(address) > MAX_EMAIL_CHARS or not local or domain.endswith(_ASSET_SUFFIXES):
        return False
    if domain.endswith(_TRACKER_DOMAINS) or _HASH_LOCAL_PART.fullmatch(local):
        return False
    if local in _PLACEHOLDER_LOCAL_PARTS:
        return False
    last_label = domain.rsplit(".", 1)[-1]
    if last_label in _PLACEHOLDER_SUFFIXES or not last_label.isalpha():
        return False
    if not public_suffix(domain) and last_label not in _SPECIAL_USE_SUFFIXES:
        return False
    name = registrable_domain(domain).split(".", 1)[0]
    return name not in _PLACEHOLDER_NAMES
