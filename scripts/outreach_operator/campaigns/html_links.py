"""The links of a rendered HTML body: a URL attribute may name no scheme but http, https or mailto.

Autoescaping keeps a value from adding markup, not from being a link that runs code: a scraped
``website`` of ``javascript:alert(1)`` in ``<a href="{{ website }}">`` is still a script link. So the
rendered body is read with the standard library's HTML parser (which decodes character references:
``&#106;avascript:`` is read as ``javascript:``), and the value of every attribute that holds a URL
(``href``, ``src``, ``srcset``, ``action``, ``formaction``, ``background``, ``poster``, ``cite``,
``longdesc``, ``data``, ``codebase``, ``xlink:href``) that names a scheme must name ``http``,
``https`` or ``mailto`` (a mailto: link runs nothing, and the unsubscribe target may be one). The
scheme is read as browsers read it (the WHATWG URL standard): after leading and trailing spaces and
control characters are dropped and tabs and line breaks removed, so ``java\tscript:`` is
``javascript:``. Any other scheme (``javascript:``, ``data:``, ``vbscript:``, ``file:`` ...) refuses
the row, naming the html field and the tag. A value without a scheme (``#top``, ``acme.example``,
``//acme.example/``) is a relative reference, which a browser resolves against an http(s) page or
nothing, so it runs no code and is let through.

The rule is on the output, wherever the link came from: a value, a filter, or the template itself.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from outreach_operator.report_values import shorten

URL_ATTRIBUTES = frozenset(
    {
        "href",
        "src",
        "srcset",
        "action",
        "formaction",
        "background",
        "poster",
        "cite",
        "longdesc",
        "data",
        "codebase",
        "xlink:href",
    }
)
LINK_SCHEMES = frozenset({"http", "https", "mailto"})

_EDGES = "".join(chr(code) for code in range(0x21))  # C0 controls and space
_TABS_AND_BREAKS = re.compile(r"[\t\n\r]")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")


def _link_problem(url: str) -> str | None:
    cleaned = _TABS_AND_BREAKS.sub("", url.strip(_EDGES))
    scheme = _SCHEME.match(cleaned)
    if scheme is None:  # a relative reference: resolved against nothing in a mail
        return None
    if scheme.group(1).lower() not in LINK_SCHEMES:
        return f"has the scheme {scheme.group(1).lower()!r}; a link may be http, https or mailto only"
    return None


def _candidates(srcset: str) -> list[str]:
    """The URLs of a ``srcset`` (comma-separated, each maybe followed by a width or density)."""
    return [part.split()[0] for part in srcset.split(",") if part.strip()]


class _LinkReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problem: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.problem is not None:
            return
        for name, value in attrs:
            if name not in URL_ATTRIBUTES or value is None:
                continue
            for url in _candidates(value) if name == "srcset" else [value]:
                reason = _link_problem(url)
                if reason is not None:
                    line = self.getpos()[0]
                    self.problem = f"the {name} of <{tag}> on line {line}, {shorten(url)!r}, {reason}"
                    return


def link_problem(html: str) -> str | None:
    """The first URL attribute of ``html`` with a scheme other than http(s) or mailto:, and why; else None."""
    reader = _LinkReader()
    reader.feed(html)
    reader.close()
    return reader.problem
