"""Phone and fax numbers on a page, parsed and validated with ``phonenumbers`` and stored in E.164 form.

Candidates are ``tel:`` links, numbers written with an international ``+`` and numbers right after a
label (Tel., Telefon, Telefonnummer, Phone, Hotline, Teléfono, Mobil, ...; Fax and Telefax make a
``fax``). Each is parsed for the site's country, taken from the host's country-code suffix, else the
page language's region (``de-AT``) or language (``de``), else the first number on the page written
with ``+``; only numbers the library deems valid are kept, once each (national and international
forms of one number are one E.164 number).

Cleaned up before parsing: zero-width characters and soft hyphens are dropped, dashes of any width
read as ``-``, an extension glued on with a slash (``...-9147/48``) is cut off, ``00`` reads as ``+``.
Template numbers (``+44 1234 567890``: a run of seven or more consecutive digits, or six or more
equal ones) are dropped.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from urllib.parse import unquote

import phonenumbers

from outreach.scraping.contacts import FoundPhone, PhoneKind
from outreach.scraping.registrable_domain import public_suffix

_INVISIBLE_CHARS = "\u200b\u200c\u200d\u2060\ufeff\u00ad"
# str.translate looks up every character of the text: done only when one of these is in it.
_INVISIBLE = dict.fromkeys(map(ord, _INVISIBLE_CHARS))
_DASHES = re.compile(r"[\u2010-\u2015\u2212]")
_SEPARATOR = r"[ \t\u00a0]*+[./\u2010-\u2015\u2212-]?[ \t\u00a0]*+"
# The "+" or "00" first, then what may not stand before it: a pattern that begins with a character
# lets the search skip to the next "+" or "0" (a lookbehind first is tried at every position).
_INTERNATIONAL = re.compile(
    r"(?:\+(?<![\w+]\+)|00(?<![\w+]00))[1-9]\d{0,2}"
    + rf"(?:{_SEPARATOR}\(0\))?(?:{_SEPARATOR}\(?\d++\)?){{1,8}}(?!\d)"
)
_PHONE_WORDS = (
    "tel", "telefon", "telefonnummer", "telephone", "phone", "fon", "hotline", "mobil", "mobile", "handy",
    "tfno", "tlf", "tel[eé]fono", "m[oó]vil", "celular",
)  # fmt: skip
_PHONE_SIGNS = ("電話(?:番号)?", "☎")
_FAX_WORDS = ("fax", "telefax", "faks")
_PHONE_LABEL = rf"\b(?:{'|'.join(_PHONE_WORDS)})\b|{'|'.join(_PHONE_SIGNS)}"
_FAX_LABEL = rf"\b(?:{'|'.join(_FAX_WORDS)})\b"
# The first characters labels can start with, looked ahead for first: without it the search tries
# every label at every position of the text (several times slower, same matches).
_LABEL_FIRST = "".join(sorted({label[0] for label in (*_PHONE_WORDS, *_PHONE_SIGNS, *_FAX_WORDS)}))
_LABELLED = re.compile(
    rf"(?=[{_LABEL_FIRST}])(?:(?P<fax>{_FAX_LABEL})|{_PHONE_LABEL})"
    r"[ \t\u00a0]*+[.:\uff1a]{0,2}[ \t\u00a0]*+"
    r"(?P<number>\+?\(?\d[\d \t\u00a0()./\u2010-\u2015\u2212-]{4,28}\d)",
    re.IGNORECASE,
)
_FAX_BEFORE = re.compile(rf"{_FAX_LABEL}\W*$", re.IGNORECASE)
_GLUED_EXTENSION = re.compile(r"^(?P<number>.*\d[ -]\d+)/\d{1,3}$")
_LANGUAGE_REGIONS = {
    "de": "DE", "es": "ES", "fr": "FR", "it": "IT", "nl": "NL", "pl": "PL", "pt": "PT", "ja": "JP",
    "da": "DK", "sv": "SE", "nb": "NO", "fi": "FI", "cs": "CZ", "hu": "HU", "el": "GR", "tr": "TR",
}  # fmt: skip
_SUFFIX_REGIONS = {"uk": "GB"}


def site_region(host: str, language: str | None) -> str | None:
    """The country (ISO 3166 alpha-2) numbers without ``+`` belong to: the host's ccTLD, else the language."""
    top = public_suffix(host).rsplit(".", 1)[-1]
    region = _SUFFIX_REGIONS.get(top, top.upper())
    if len(top) == 2 and region in phonenumbers.SUPPORTED_REGIONS:
        return region
    if language:
        primary, _, rest = language.partition("-")
        subtag = rest.split("-", 1)[0].upper()
        if len(subtag) == 2 and subtag in phonenumbers.SUPPORTED_REGIONS:
            return subtag
        return _LANGUAGE_REGIONS.get(primary)
    return None


def find_phones(
    tel_hrefs: Iterable[str], text: str, *, page_url: str, host: str, language: str | None
) -> Iterator[FoundPhone]:
    """Valid numbers from ``tel:`` links, then from the visible ``text`` in reading order."""
    clean = text.translate(_INVISIBLE) if any(char in text for char in _INVISIBLE_CHARS) else text
    candidates = [(unquote(href[4:]).strip(), PhoneKind.PHONE) for href in tel_hrefs]
    candidates += _text_candidates(clean)
    region = site_region(host, language) or _first_international_region(raw for raw, _ in candidates)
    for raw, kind in candidates:
        number = parse_phone(raw, region)
        if number is not None:
            yield FoundPhone(number, kind, raw, page_url)


def parse_phone(raw: str, region: str | None) -> str | None:
    """``raw`` in E.164 form if it is a valid number that is not a template, else None."""
    text = re.split(r"[;?,]", raw, maxsplit=1)[0].strip().translate(_INVISIBLE)
    text = _DASHES.sub("-", text)
    glued = _GLUED_EXTENSION.match(text)
    if glued is not None:
        text = glued.group("number")
    if text.startswith("00"):
        text = "+" + text[2:]
    try:
        number = phonenumbers.parse(text, region)
    except phonenumbers.NumberParseException:  # outcome: not a phone number, none kept
        return None
    # The template check first: it is a cheap loop over digits, the validity check a metadata lookup.
    if _is_template(str(number.national_number)) or not phonenumbers.is_valid_number(number):
        return None
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def _text_candidates(text: str) -> list[tuple[str, PhoneKind]]:
    found: list[tuple[int, str, PhoneKind]] = []
    for match in _LABELLED.finditer(text):
        kind = PhoneKind.FAX if match.group("fax") else PhoneKind.PHONE
        found.append((match.start("number"), match.group("number").strip(), kind))
    labelled = {start for start, _, _ in found}
    for match in _INTERNATIONAL.finditer(text):
        if match.start() in labelled:
            continue
        before = text[max(0, match.start() - 24) : match.start()]
        kind = PhoneKind.FAX if _FAX_BEFORE.search(before) else PhoneKind.PHONE
        found.append((match.start(), match.group(0), kind))
    return [(raw, kind) for _, raw, kind in sorted(found, key=lambda item: item[0])]


def _first_international_region(raws: Iterable[str]) -> str | None:
    for raw in raws:
        if raw.startswith(("+", "00")):
            e164 = parse_phone(raw, None)
            if e164 is not None:
                return region_of(e164)
    return None


def region_of(e164: str) -> str | None:
    """The country (ISO 3166 alpha-2) an E.164 number belongs to by its calling code and, where a code
    is shared (+1, +7, +44), its leading digits; None for a non-geographic number (+800, +882)."""
    region = phonenumbers.region_code_for_number(phonenumbers.parse(e164))
    if not region or region in {phonenumbers.UNKNOWN_REGION, phonenumbers.REGION_CODE_FOR_NON_GEO_ENTITY}:
        return None
    return str(region)


def _is_template(digits: str) -> bool:
    """True for a run of 7+ consecutive digits (``1234567``, ``567890``, ``7654321``) or 6+ equal ones."""
    up = down = same = 1
    for previous, current in itertools.pairwise(digits):
        step = (int(current) - int(previous)) % 10
        up = up + 1 if step == 1 else 1
        down = down + 1 if step == 9 else 1
        same = same + 1 if step == 0 else 1
        if up >= 7 or down >= 7 or same >= 6:
            return True
    return False
