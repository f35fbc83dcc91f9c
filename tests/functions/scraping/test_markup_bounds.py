"""The markup model cuts where the parser's stack of open elements would grow too deep, and only there."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from selectolax.lexbor import LexborHTMLParser

from outreach.scraping.charset import decode_html
from outreach.scraping.markup_bounds import MAX_NESTING, MAX_START_TAGS, bound_markup

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "html"
TWO_MIB = 2 * 1024 * 1024

# Repeated, each of these grows the parser's stack without end; found by comparing the parser's
# tree depth with the model's over random markup.
GROWING = [
    "<div>",
    "<span><div></span>",
    "<p><button></p>",
    "<ul><li>",
    "<b id=1><p></b>x",
    "<nobr></optgroup><i>x<code id=2>x</nobr></div>",
    "<table/><th>x<svg>x",
    "<tbody/><div>x<i>x<path id=3>x</tbody>",
    "<form/></dt><option><option id=4>x<div>x</form>",
    "<i id=5/><b id=6/><object id=7/><optgroup/><svg></path>",
    "<math /><div id=8/><path/><!-- x --!><marquee />",
]


@pytest.mark.parametrize("name", sorted(path.name for path in FIXTURES.glob("*.html")))
def test_real_pages_are_never_cut(name: str) -> None:
    html = decode_html((FIXTURES / name).read_bytes())
    assert bound_markup(html).cut is None


@pytest.mark.parametrize("snippet", GROWING)
def test_markup_that_keeps_nesting_is_cut_and_parses_at_once(snippet: str) -> None:
    html = snippet * (TWO_MIB // len(snippet))
    bounded = bound_markup(html)
    started = time.monotonic()
    LexborHTMLParser(bounded.html)
    assert bounded.cut == "nesting"
    assert time.monotonic() - started < 5


def test_unclosed_paragraphs_list_items_cells_and_options_do_not_add_depth() -> None:
    html = (
        "<table>"
        + "<tr><td><p>a<p>b<ul><li>1<li>2</ul><select><option>x<option>y</select>" * 2000
        + "</table>"
    )
    assert bound_markup(html).cut is None


def test_self_closed_svg_children_do_not_add_depth() -> None:
    html = "<div><svg>" + '<path d="M0 0"/>' * (MAX_NESTING * 4) + "</svg></div>" * 3
    assert bound_markup(html).cut is None


@pytest.mark.parametrize("opener", ["<!-->", "<!--->", "<!-- a --!>"])
def test_a_comment_that_ends_early_hides_no_tags_from_the_model(opener: str) -> None:
    html = opener + "<div>" * (MAX_NESTING + 10)
    assert bound_markup(html).cut == "nesting"


def test_markup_inside_script_and_style_is_not_counted() -> None:
    html = (
        "<script>" + "document.write('<div>');" * 2000 + "</script><style>" + "<div>" * 2000 + "</style><p>ok"
    )
    assert bound_markup(html).cut is None


def test_more_start_tags_than_the_backstop_are_cut() -> None:
    html = "<i></i>" * (MAX_START_TAGS + 5)
    bounded = bound_markup(html)
    assert bounded.cut == "tags"
    assert bounded.html.count("<i>") == MAX_START_TAGS


def test_few_tags_that_open_two_levels_each_are_still_cut_at_the_nesting_bound() -> None:
    # GIVEN 20 start tags that open 40 levels (each cell adds its implied tbody and tr)
    html = "<table><td>" * 10
    # THEN a page with fewer tags than the bound is still walked, and cut
    assert bound_markup(html, max_depth=39).cut == "nesting"
    assert bound_markup(html, max_depth=40).cut is None
