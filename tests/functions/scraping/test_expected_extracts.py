"""Every page of the extraction corpora gives the committed expected extract (tests/fixtures/).

The corpora are the web farm's pages, ``tests/fixtures/html`` and the real-size site builders' pages;
``python -m outreach_dev.expected_extracts --write`` writes the expected extracts anew.
"""

from __future__ import annotations

from outreach_dev.expected_extracts import current, differences, expected


def test_every_page_of_the_corpora_gives_its_committed_expected_extract() -> None:
    wanted = expected()
    found = current()
    assert {corpus: len(pages) for corpus, pages in found.items()} == {
        corpus: len(pages) for corpus, pages in wanted.items()
    }
    assert differences(found, wanted) == []
