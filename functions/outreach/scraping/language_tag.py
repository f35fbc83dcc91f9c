"""The one shape of a page's language: a lower-case BCP 47 tag with ``-`` (``de``, ``de-at``, ``zh-hant-tw``).

Read from an ``<html lang>``, a Content-Language list (its first entry) or an ``og:locale`` (``de_AT``):
cut at the first comma, stripped, lower-cased, ``_`` read as ``-``; kept only if it is a primary
language of two or three letters followed by subtags of one to eight letters or digits.
"""

from __future__ import annotations

import re

_LANGUAGE = re.compile(r"^[a-z]{2,3}(?:-[a-z0-9]{1,8})*$")


def language_tag(raw: str) -> str | None:
    """``raw`` as one language tag of that shape, or None if it is none."""
    value = raw.split(",")[0].strip().lower().replace("_", "-")
    return value if _LANGUAGE.match(value) else None
