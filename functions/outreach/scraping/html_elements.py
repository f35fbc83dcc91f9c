"""The HTML tree builder's kinds of element that decide how deep its stack of open elements grows.

The sets follow the HTML standard's tree construction
(https://html.spec.whatwg.org/multipage/parsing.html#tree-construction): void elements, the
"special" category, the element scopes, the elements whose end tags are implied, the formatting
elements and their markers, and the HTML start tags that break out of foreign (svg, math) content.
``markup_bounds`` models the stack with them.
"""

from __future__ import annotations

# Start tags that never add a level: void elements, and html/head/body (merged into the first ones).
NO_LEVEL = frozenset(
    [
        "area",
        "base",
        "basefont",
        "bgsound",
        "br",
        "col",
        "embed",
        "frame",
        "hr",
        "image",
        "img",
        "input",
        "keygen",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
        "html",
        "head",
        "body",
    ]
)
RAW_TEXT = frozenset(["script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes"])
# The tree builder's "special" elements: an end tag of another element never closes past one.
SPECIAL = frozenset(
    [
        "address",
        "applet",
        "area",
        "article",
        "aside",
        "base",
        "basefont",
        "bgsound",
        "blockquote",
        "body",
        "br",
        "button",
        "caption",
        "center",
        "col",
        "colgroup",
        "dd",
        "details",
        "dir",
        "div",
        "dl",
        "dt",
        "embed",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "frame",
        "frameset",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "head",
        "header",
        "hgroup",
        "hr",
        "html",
        "iframe",
        "img",
        "input",
        "keygen",
        "li",
        "link",
        "listing",
        "main",
        "marquee",
        "menu",
        "meta",
        "nav",
        "noembed",
        "noframes",
        "noscript",
        "object",
        "ol",
        "p",
        "param",
        "plaintext",
        "pre",
        "script",
        "search",
        "section",
        "select",
        "source",
        "style",
        "summary",
        "table",
        "tbody",
        "td",
        "template",
        "textarea",
        "tfoot",
        "th",
        "thead",
        "title",
        "tr",
        "track",
        "ul",
        "wbr",
        "xmp",
    ]
)
DEFAULT_SCOPE = frozenset(["applet", "caption", "html", "table", "td", "th", "marquee", "object", "template"])
TABLE_SCOPE = frozenset(["html", "table", "template"])
TABLE_PARTS = frozenset(["table", "tbody", "tfoot", "thead", "tr", "td", "th", "caption"])
SCOPE_FOR = {"p": DEFAULT_SCOPE | {"button"}, "li": DEFAULT_SCOPE | {"ol", "ul"}}
# Start tags that close an open sibling: list items across the nearest special element that is not
# address, div or p; table rows and cells within the table.
LIST_SIBLINGS = {"li": frozenset({"li"}), "dt": frozenset({"dd", "dt"}), "dd": frozenset({"dd", "dt"})}
TABLE_SIBLINGS = {
    "tr": frozenset({"tr"}),
    "td": frozenset({"td", "th"}),
    "th": frozenset({"td", "th"}),
    "tbody": frozenset({"tbody", "thead", "tfoot"}),
    "thead": frozenset({"tbody", "thead", "tfoot"}),
    "tfoot": frozenset({"tbody", "thead", "tfoot"}),
}
CLOSES_P = frozenset(
    [
        "address",
        "article",
        "aside",
        "blockquote",
        "center",
        "details",
        "dialog",
        "dir",
        "div",
        "dl",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hgroup",
        "hr",
        "main",
        "menu",
        "nav",
        "ol",
        "p",
        "pre",
        "search",
        "section",
        "summary",
        "table",
        "ul",
        "li",
        "dd",
        "dt",
    ]
)
NOT_LIST_BOUNDARY = frozenset({"address", "div", "p"})
# Inside these the tree builder follows other rules (select: most tags ignored; svg/math: foreign
# content): the model then closes only what the end tag names, across implied-end-tag elements.
RESTRICTING = frozenset({"select", "svg", "math"})
FOREIGN = frozenset({"svg", "math"})
IMPLIED_END = frozenset(["dd", "dt", "li", "optgroup", "option", "p", "rb", "rp", "rt", "rtc"])
# HTML start tags that leave foreign content (their "/>" does not make them empty).
BREAKOUT = frozenset(
    [
        "b",
        "big",
        "blockquote",
        "body",
        "br",
        "center",
        "code",
        "dd",
        "div",
        "dl",
        "dt",
        "em",
        "embed",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "head",
        "hr",
        "i",
        "img",
        "li",
        "listing",
        "menu",
        "meta",
        "nobr",
        "ol",
        "p",
        "pre",
        "ruby",
        "s",
        "small",
        "span",
        "strong",
        "strike",
        "sub",
        "sup",
        "table",
        "tt",
        "u",
        "ul",
        "var",
        "font",
    ]
)
ROW_GROUPS = ("tbody", "thead", "tfoot")
# Formatting elements closed by another element's end tag stay in the tree builder's list of active
# formatting elements and are opened again before the next content; markers end that list's reach.
FORMATTING = frozenset(
    ["a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt", "u"]
)
MARKERS = frozenset(["applet", "caption", "marquee", "object", "template", "td", "th"])
SCOPES = (DEFAULT_SCOPE, SCOPE_FOR["p"], SCOPE_FOR["li"], TABLE_SCOPE)
