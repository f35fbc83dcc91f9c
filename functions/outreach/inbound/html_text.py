"""An HTML body as crude plain text, for a reply whose only text part is ``text/html``.

``html.parser.HTMLParser`` reads the markup (broken markup yields what it can; a marked section it
refuses ends the text there); the text of ``script``, ``style``, ``head`` and ``title`` is dropped (a
``body`` tag ends an unclosed ``head``), block elements (HTML Living Standard
section 4.4, "grouping content", and ``br``) end a line, and every line inside ``blockquote`` starts
with one ``> `` per level, the way a plain-text client quotes (RFC 3676 section 4.5), so
``reply_split.new_text`` finds the quoted original of a Gmail or Apple Mail HTML reply the same way.
Character references are decoded; the output stops at ``limit`` characters.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_MAX_HTML_CHARS = 1024 * 1024
_BLOCKS = frozenset(
    name
    for names in (
        "address article aside blockquote br dd div dl dt figcaption figure footer form",
        "h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section table td th tr ul",
    )
    for name in names.split()
)
_HIDDEN = frozenset({"head", "noscript", "script", "style", "template", "title"})
_WHITESPACE = re.compile(r"\s+")


class _TextCollector(HTMLParser):
    def __init__(self, limit: int) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self._limit = limit
        self._size = 0
        self._words: list[str] = []
        self._quote_depth = 0
        self._line_depth = 0
        self._hidden = 0

    @property
    def full(self) -> bool:
        return self._size >= self._limit

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body":
            self._hidden = 0
        elif tag in _HIDDEN:
            self._hidden += 1
        elif tag in _BLOCKS:
            self.end_line()
            if tag == "blockquote":
                self._quote_depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            self._hidden = max(0, self._hidden - 1)
        elif tag in _BLOCKS:
            self.end_line()
            if tag == "blockquote":
                self._quote_depth = max(0, self._quote_depth - 1)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCKS:
            self.end_line()

    def handle_data(self, data: str) -> None:
        if self._hidden or self.full:
            return
        text = _WHITESPACE.sub(" ", data)
        if not text.strip() and not self._words:
            return
        if not self._words:
            self._line_depth = self._quote_depth
        self._words.append(text)

    def end_line(self) -> None:
        line = "".join(self._words).strip()
        self._words = []
        if line and not self.full:
            quoted = "> " * self._line_depth + line
            self.lines.append(quoted)
            self._size += len(quoted) + 1


def html_to_text(html: str, *, limit: int) -> str:
    """The text of ``html`` (its first ``_MAX_HTML_CHARS`` characters), one line per block, quoted
    blocks prefixed with ``> ``, at most ``limit`` characters."""
    collector = _TextCollector(limit)
    try:
        collector.feed(html[:_MAX_HTML_CHARS])
        collector.close()
    except AssertionError:  # outcome: a marked section _markupbase refuses ends the text read so far
        collector.end_line()
    collector.end_line()
    return "\n".join(collector.lines)[:limit].rstrip()
