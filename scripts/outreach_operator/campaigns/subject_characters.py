"""Characters a subject may not carry: bidirectional controls and zero-width characters.

A right-to-left override (U+202E) makes ``Invoice <U+202E>fdp.exe`` read as ``Invoice exe.pdf``; a
zero-width space hides inside a word so that two subjects that look the same differ (Unicode Technical
Report #36, https://www.unicode.org/reports/tr36/, and CVE-2021-42574, "Trojan Source"). Scraped
titles and CSV cells are strangers' text, so a subject carrying one of these is refused, naming the
field: the embeddings and overrides U+202A to U+202E, the isolates U+2066 to U+2069, the zero-width and
directional marks U+200B to U+200F and the zero-width no-break space (byte order mark) U+FEFF.
"""

from __future__ import annotations

import re
import unicodedata

_REFUSED = re.compile("[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def invisible_character(text: str) -> str | None:
    """Why ``text`` may not be a subject (the first such character and where), else ``None``."""
    found = _REFUSED.search(text)
    if found is None:
        return None
    character = found.group()
    name = unicodedata.name(character, "unnamed")
    return (
        f"character U+{ord(character):04X} ({name}) at position {found.start() + 1} is not allowed in a "
        "subject: bidirectional controls and zero-width characters change how it reads"
    )
