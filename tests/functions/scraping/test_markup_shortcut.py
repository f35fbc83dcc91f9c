"""The markup walk is skipped only for markup too short to reach a bound: a start tag opens 3 levels at most.

Markup with at most ``max_depth / 3`` ``<`` is returned without the walk; these examples force the
walk (complete comments appended, which open nothing) and show it never cuts such markup.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from outreach.scraping.markup_bounds import bound_markup

TAGS = st.sampled_from(
    ["table", "td", "th", "tr", "tbody", "div", "p", "li", "ul", "b", "i", "a", "svg", "select", "option",
     "template", "caption", "form", "nobr", "math", "path"]
)  # fmt: skip


@st.composite
def tags(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 60))):
        tag = draw(TAGS)
        forms = [f"<{tag}>", f"</{tag}>", f"<{tag}/>", f"<{tag} id=x>t", "<table><td>", "<table><th>x"]
        parts.append(draw(st.sampled_from(forms)))
    return "".join(parts)


@settings(max_examples=300, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(html=tags())
def test_no_markup_opens_more_than_three_levels_per_start_tag(html: str) -> None:
    depth = 3 * html.count("<")
    walked = html + "<!---->" * (depth + 1)
    assert bound_markup(walked, max_depth=depth).cut is None
