"""The real-size corpus: 200 pages of 30-500 KB, 500-3,000 tags and 100-400 links, the same each run."""

from __future__ import annotations

from selectolax.lexbor import LexborHTMLParser

from embedded_aws.site_builder_pages import BUILDERS, site_builder_pages


def test_the_corpus_has_two_hundred_pages_of_real_size_from_every_builder() -> None:
    pages = site_builder_pages()
    assert len(pages) == 200
    assert {name.split("-", 1)[0] for name, _, _ in pages} == set(BUILDERS)
    for name, _, html in pages:
        tree = LexborHTMLParser(html)
        tags = len(tree.css("*"))
        links = len(tree.css("a[href]"))
        assert 30 * 1024 <= len(html.encode()) <= 500 * 1024, name
        assert 500 <= tags <= 3_000, (name, tags)
        assert 100 <= links <= 400, (name, links)
        assert tree.css_first("footer address") is not None, name
        assert tree.css_first("svg") is not None and tree.css_first("script") is not None, name


def test_the_same_seed_gives_the_same_pages_and_another_seed_others() -> None:
    assert site_builder_pages(12) == site_builder_pages(12)
    assert site_builder_pages(12, seed=1) != site_builder_pages(12)
