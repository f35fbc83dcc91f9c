"""A leaf pair (``<span>text</span>``) is taken in one step of the markup walk: it cuts where the walk
tag by tag cuts. An empty comment before each end tag breaks every pair apart (comments open nothing),
so the walk then goes tag by tag; both walks must agree, comments aside.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from outreach.scraping.markup_bounds import LEAF_NAMES, bound_markup

NAMES = st.sampled_from(
    [*LEAF_NAMES, "div", "p", "li", "ul", "table", "td", "tr", "svg", "select", "option", "template", "form",
     "nobr", "path", "b", "A", "Span", "script", "title"]
)  # fmt: skip
PIECES = st.sampled_from(["x", " ", "", "id=a", " class='c'", "/", " /"])
BROKEN = "<!---->"


@st.composite
def markup(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 80))):
        name = draw(NAMES)
        attrs, text = draw(PIECES), draw(PIECES)
        parts.append(
            draw(
                st.sampled_from(
                    [
                        f"<{name}{attrs}>{text}</{name}>",
                        f"<{name}{attrs}>",
                        f"</{name}>",
                        f"<{name}{attrs}>{text}",
                    ]
                )
            )
        )
    return "".join(parts)


@settings(max_examples=400, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(html=markup(), max_depth=st.integers(1, 24))
def test_a_leaf_pair_in_one_step_cuts_where_the_walk_tag_by_tag_cuts(html: str, max_depth: int) -> None:
    whole = bound_markup(html, max_depth=max_depth)
    apart = bound_markup(html.replace("</", BROKEN + "</"), max_depth=max_depth)
    assert whole.cut == apart.cut
    assert whole.html == apart.html.replace(BROKEN, "")


def test_leaf_pairs_are_found_in_real_markup() -> None:
    html = '<div><a href="/k">Kontakt</a><span class=x>1</span><strong>b</strong></div>' * 200
    assert bound_markup(html, max_depth=4).cut is None
    assert bound_markup("<div>" * 3 + "<span>x</span>", max_depth=3).cut == "nesting"
