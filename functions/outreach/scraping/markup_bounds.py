"""Bounding the markup given to the HTML parser, in size and in element nesting, before it parses.

The parser's cost grows with the depth of the tree: each new block element looks through the stack of
open elements, so 50,000 unclosed ``<div>`` s (250 KB) take seconds and 2 MiB of them minutes, beyond
any deadline. :func:`bound_markup` walks the tags once (linear time, no backtracking) with a cheap
model of the HTML tree builder's stack of open elements, and cuts the markup where the model's depth
would exceed :data:`MAX_NESTING`, or after :data:`MAX_PARSE_CHARS` characters. Real pages nest a few
dozen levels deep; a page that is cut is kept up to the cut and marked as such.

The model follows the tree builder where it matters for depth, and where it cannot tell, it keeps
elements open (erring towards an early cut): void elements never open, an end tag closes
the nearest open element of its name unless a scope boundary (table, cell, template, ...) stands in
between, ``li`` / ``dt`` / ``dd`` / ``option`` and, inside a table, rows and cells close their open
sibling (adding the implied ``tbody`` / ``tr``), a block start tag closes an open ``p``, ``/>`` empties
only foreign (svg, math) elements, and a formatting element closed by another element's end tag still
counts (the tree builder opens it again). Inside ``select``, ``svg`` or ``math`` an end tag closes
only its own element. Comments (also ``<!-->`` and ``--!>``) and the text of ``script``, ``style``
and the other raw-text elements are skipped. Each step is constant time: the stack keeps, per element
name and per kind of boundary, the positions they are open at. Comparing the parser's tree depth with
the model's over random markup guided these rules; as a backstop for what the model still gets
wrong, at most :data:`MAX_START_TAGS` start tags are parsed (fully nested, that many parse in a few
seconds).

Most pages are spared the walk: each start tag adds at most three elements to the model (the implied
``tbody`` and ``tr`` of a table cell, then its own) and each begins with ``<``, so markup with at most
``max_depth / 3`` of them (and no more than :data:`MAX_START_TAGS`) can reach neither bound, and one
count of ``<`` (a C loop over the string) settles it. The walk takes a leaf pair (``<span>text</span>``
of an element whose start tag closes nothing and whose end tag then closes just it) in one step of
the tag search: of the pair, only the depth check of its push can change the outcome.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass

from outreach.scraping.html_elements import (
    BREAKOUT,
    CLOSES_P,
    DEFAULT_SCOPE,
    FOREIGN,
    FORMATTING,
    IMPLIED_END,
    LIST_SIBLINGS,
    MARKERS,
    NO_LEVEL,
    NOT_LIST_BOUNDARY,
    RAW_TEXT,
    RESTRICTING,
    ROW_GROUPS,
    SCOPE_FOR,
    SCOPES,
    SPECIAL,
    TABLE_PARTS,
    TABLE_SCOPE,
    TABLE_SIBLINGS,
)

MAX_PARSE_CHARS = 2 * 1024 * 1024
MAX_NESTING = 512
# A backstop for what the model gets wrong: even fully nested, this many elements parse in seconds.
MAX_START_TAGS = 50_000

# A start tag opens at most the implied tbody and tr (a cell outside a row) and itself.
_MAX_PUSHES_PER_START_TAG = 3

# Start tags with an effect beside their own push, or whose end tag closes by other rules.
_EFFECTS = frozenset(
    NO_LEVEL
    | RAW_TEXT
    | CLOSES_P
    | MARKERS
    | RESTRICTING
    | FOREIGN
    | TABLE_PARTS
    | set(LIST_SIBLINGS)
    | set(TABLE_SIBLINGS)
    | {"option", "optgroup", "form", "plaintext"}
)


def _opens_and_closes_without_effect(name: str) -> bool:
    """True when ``<name>`` right away followed by ``</name>`` leaves the model as it found it.

    Such a start tag closes nothing implicitly (no sibling, no ``p``), opens no level of its own kind
    (marker, restricting, foreign, void, raw text) and its end tag then closes just it, explicitly:
    of the pair, only the depth check of its push can change the outcome.
    """
    return name not in _EFFECTS


# Elements often written as a pair around text alone: <a href="...">text</a>, <span>text</span>.
_LEAF_CANDIDATES = (
    "a", "span", "strong", "em", "b", "i", "u", "s", "small", "label", "button", "abbr", "time", "sup",
    "sub", "cite", "code", "mark", "q", "font", "bdi", "kbd", "var", "tspan", "text", "desc",
)  # fmt: skip
LEAF_NAMES = tuple(name for name in _LEAF_CANDIDATES if _opens_and_closes_without_effect(name))
_ATTRIBUTES = r"(?:[\t\n\f\r /][^>]*)?"
_LEAF_PAIR = (
    rf"<({'|'.join(sorted(LEAF_NAMES, key=len, reverse=True))}){_ATTRIBUTES}(?<!/)>[^<]*</\1{_ATTRIBUTES}>"
)
# A leaf pair (group 1: its name, in lower case as written; a start tag not ending in "/"; text alone
# before its end tag), else a tag (group 2: "/" of an end tag, group 3: the name), else a comment.
# Where the text of a raw-text element ends: its end tag's "</" and name in any ASCII case (a search
# that skips from "</" to "</", not a lower-case copy of the whole markup).
_RAW_TEXT_END = {name: re.compile(f"</{name}", re.IGNORECASE | re.ASCII) for name in RAW_TEXT}
# Start tags that may do more than their push (see OpenElements.open).
_NOT_PLAIN = NO_LEVEL | FOREIGN | set(LIST_SIBLINGS) | set(TABLE_SIBLINGS) | {"option"}
_TOKEN = re.compile(rf"{_LEAF_PAIR}|<(/?)([A-Za-z][^\t\n\f\r />]*)|<!--")


@dataclass(frozen=True)
class BoundedMarkup:
    """The markup to parse; ``cut`` names the bound that shortened it (``nesting`` or ``size``)."""

    html: str
    cut: str | None = None


def bound_markup(
    html: str, *, max_chars: int = MAX_PARSE_CHARS, max_depth: int = MAX_NESTING
) -> BoundedMarkup:
    """``html`` cut before the tag that would nest deeper than ``max_depth``, and to ``max_chars``."""
    size_cut = len(html) > max_chars
    text = html[:max_chars] if size_cut else html
    if _cannot_reach_a_bound(text.count("<"), max_depth):
        return BoundedMarkup(text, "size" if size_cut else None)
    stack = _OpenElements()
    position = 0
    start_tags = 0
    search = _TOKEN.search
    while True:
        match = search(text, position)
        if match is None:
            break
        if match[1] is not None:
            # A leaf pair: the element opens and closes again at once, so of the pair only the
            # depth check can change anything.
            start_tags += 1
            if start_tags > MAX_START_TAGS:
                return BoundedMarkup(text[: match.start()], "tags")
            if stack.depth >= max_depth:
                return BoundedMarkup(text[: match.start()], "nesting")
            position = match.end()
            continue
        if match[3] is None:
            # A comment ends at "-->" or "--!>"; "<!-->" and "<!--->" are complete (empty) comments.
            ends = [
                found
                for found in (text.find("-->", match.start() + 2), text.find("--!>", match.end()))
                if found >= 0
            ]
            if not ends:
                break
            end = min(ends)
            position = end + (4 if text.startswith("--!>", end) else 3)
            continue
        name = match[3].lower()
        tag_end = text.find(">", match.end())
        if tag_end < 0:
            break
        position = tag_end + 1
        if match[2]:
            if stack.top == name and name not in TABLE_PARTS:
                stack.pop_top()  # what close() does with its element on top, its checks skipped
            else:
                stack.close(name)
            continue
        start_tags += 1
        if start_tags > MAX_START_TAGS:
            return BoundedMarkup(text[: match.start()], "tags")
        # "/>" makes a tag self-closing unless the slash ends an unquoted attribute value (id=a/>).
        self_closing = text[tag_end - 1] == "/" and (
            tag_end - 1 == match.end() or text[tag_end - 2] in " \t\n\r\f\"'"
        )
        if stack.opens_plainly(name):
            opened = stack.push(name, max_depth)  # what open() does for it, its checks skipped
        else:
            opened = stack.open(name, max_depth, self_closing=self_closing)
        if not opened:
            return BoundedMarkup(text[: match.start()], "nesting")
        if name in RAW_TEXT and not stack.in_foreign_content:
            found = _RAW_TEXT_END[name].search(text, position)
            if found is None:
                break
            end = found.start()
            stack.close(name)
            position = end + len(name) + 2
        elif name == "plaintext":
            break
    return BoundedMarkup(text, "size" if size_cut else None)


def _cannot_reach_a_bound(opening_brackets: int, max_depth: int) -> bool:
    """True when markup with this many ``<`` can neither nest ``max_depth`` deep nor hold too many tags."""
    return opening_brackets * _MAX_PUSHES_PER_START_TAG <= max_depth and opening_brackets <= MAX_START_TAGS


class _OpenElements:
    """A model of the stack of open elements with constant-time lookups by name and scope.

    It may close less than the tree builder does (the cut then comes early), never more.
    """

    def __init__(self) -> None:
        self._names: list[str] = []
        self._at: defaultdict[str, list[int]] = defaultdict(list)
        self._special: list[int] = []
        self._list_boundaries: list[int] = []
        # Per scope kind, the positions of its boundary elements, innermost last.
        self._boundaries: dict[frozenset[str], list[int]] = {scope: [] for scope in SCOPES}
        self._restricting: list[int] = []
        self._foreign: list[int] = []
        # Positions of elements no end tag closes implicitly (not in IMPLIED_END).
        self._solid: list[int] = []
        # Formatting elements closed implicitly, per marker level: they count as open.
        self._reopened: list[Counter[str]] = [Counter()]
        self._reopened_total = 0
        # Per element name, the position lists above that hold its elements' positions too.
        self._lists_of: dict[str, tuple[list[int], ...]] = {}

    def _lists(self, name: str) -> tuple[list[int], ...]:
        """The position lists an element ``name`` is entered in when pushed (and left when popped)."""
        lists = self._lists_of.get(name)
        if lists is None:
            chosen = []
            if name in SPECIAL:
                chosen.append(self._special)
                if name not in NOT_LIST_BOUNDARY:
                    chosen.append(self._list_boundaries)
            chosen += [positions for scope, positions in self._boundaries.items() if name in scope]
            if name in RESTRICTING:
                chosen.append(self._restricting)
                if name in FOREIGN:
                    chosen.append(self._foreign)
            if name not in IMPLIED_END:
                chosen.append(self._solid)
            lists = self._lists_of[name] = tuple(chosen)
        return lists

    @property
    def depth(self) -> int:
        """The levels open: elements on the stack and formatting elements counted as open again."""
        return len(self._names) + self._reopened_total

    @property
    def top(self) -> str | None:
        return self._names[-1] if self._names else None

    def opens_plainly(self, name: str) -> bool:
        """True when the start tag of ``name`` closes nothing and is pushed as it is: outside select,
        svg and math, no void, foreign, list or table sibling or option, and no block start tag
        while a p is open."""
        return (
            not self._restricting and name not in _NOT_PLAIN and not (name in CLOSES_P and self._at.get("p"))
        )

    def pop_top(self) -> None:
        """Close the element on top by its own end tag (``_pop_to`` of the top, explicitly)."""
        name = self._names.pop()
        self._at[name].pop()
        if name in MARKERS and len(self._reopened) > 1:
            self._reopened_total -= sum(self._reopened.pop().values())
        for positions in self._lists(name):
            positions.pop()

    @property
    def in_foreign_content(self) -> bool:
        """Inside svg or math, where script and style hold markup, not raw text."""
        return bool(self._foreign)

    def open(self, name: str, max_depth: int, *, self_closing: bool = False) -> bool:
        """Push ``name`` after the implicit closes its start tag causes; False if too deep."""
        # "/>" empties a foreign element (and svg or math themselves), never an HTML one.
        foreign = bool(self._foreign) or name in FOREIGN
        if name in NO_LEVEL or (self_closing and foreign and name not in BREAKOUT):
            return True
        if self._restricting:
            if name == "option" and self._names and self._names[-1] == "option":
                self._pop_to(len(self._names) - 1)
        elif name in LIST_SIBLINGS:
            boundary = self._list_boundaries[-1] if self._list_boundaries else -1
            if boundary >= 0 and self._names[boundary] in LIST_SIBLINGS[name]:
                self._pop_to(boundary)
        elif name in TABLE_SIBLINGS:
            # Outside a table the tree builder ignores these tags; the model keeps them (over-counts).
            if self._at.get("table"):
                self._pop_to(max(self._in_scope(other, TABLE_SCOPE) for other in TABLE_SIBLINGS[name]))
                # A cell without a row, or a row without a row group, gets the implied ones first.
                implied = []
                if name in ("td", "th", "tr") and max(self._in_scope(g, TABLE_SCOPE) for g in ROW_GROUPS) < 0:
                    implied.append("tbody")
                if name in ("td", "th") and self._in_scope("tr", TABLE_SCOPE) < 0:
                    implied.append("tr")
                for element in implied:
                    if not self.push(element, max_depth):
                        return False
        elif name == "option" and self._names and self._names[-1] == "option":
            self._pop_to(len(self._names) - 1)
        if name in CLOSES_P and not self._restricting and self._at.get("p"):
            self._pop_to(self._in_scope("p", SCOPE_FOR["p"]))
        return self.push(name, max_depth)

    def push(self, name: str, max_depth: int) -> bool:
        names = self._names
        position = len(names)
        if position + self._reopened_total >= max_depth:
            return False
        if name in MARKERS:
            self._reopened.append(Counter())
        self._at[name].append(position)
        for positions in self._lists(name):
            positions.append(position)
        names.append(name)
        return True

    def close(self, name: str) -> None:
        """An end tag: close the nearest open ``name`` the tree builder would close, else nothing."""
        if name in FORMATTING and self._reopened[-1][name] > 0 and self._last(name) < 0:
            self._reopened[-1][name] -= 1
            self._reopened_total -= 1
            return
        if self._restricting or name == "form":
            # </form> takes the form element alone off the stack: modelled only when it is on top.
            index = self._last(name)
            if index >= 0 and (self._solid[-1] if self._solid else -1) <= index:
                self._pop_to(index, explicit=True)
        elif name in TABLE_PARTS:
            # Outside a table the tree builder ignores these end tags.
            if self._at.get("table"):
                self._pop_to(self._in_scope(name, TABLE_SCOPE))
        elif name in SPECIAL:
            self._pop_to(self._in_scope(name, SCOPE_FOR.get(name, DEFAULT_SCOPE)))
        else:
            index = self._last(name)
            if index >= 0 and index >= (self._special[-1] if self._special else -1):
                self._pop_to(index, explicit=True)

    def _last(self, name: str) -> int:
        positions = self._at.get(name)
        return positions[-1] if positions else -1

    def _in_scope(self, name: str, scope: frozenset[str]) -> int:
        """The position of the nearest open ``name`` with no scope boundary above it, or -1."""
        index = self._last(name)
        if index < 0:
            return -1
        boundaries = self._boundaries[scope]
        return index if not boundaries or index >= boundaries[-1] else -1

    def _pop_to(self, index: int, *, explicit: bool = False) -> None:
        """Close every element from the top down to position ``index`` (its own end tag if ``explicit``)."""
        if index < 0:
            return
        names = self._names
        while len(names) > index:
            name = names.pop()
            self._at[name].pop()
            if name in FORMATTING and not (explicit and len(names) == index):
                self._reopened[-1][name] += 1
                self._reopened_total += 1
            if name in MARKERS and len(self._reopened) > 1:
                self._reopened_total -= sum(self._reopened.pop().values())
            for positions in self._lists(name):
                positions.pop()
