"""The expected extract of every page of the extraction bench's corpora, kept in ``tests/fixtures/``.

For each page of the web farm (60 sites), of ``tests/fixtures/html`` and of the 200 real-size pages
(:mod:`outreach_dev.bench.extraction`), what ``extract_page`` finds: title, description, language,
e-mail addresses with how each was read, phone numbers with kind and text as found, social links,
candidate links, skipped links, the markup cut, and the visible text by its length and SHA-256 (the
text itself is the bulk of a page and adds nothing a digest does not check). One line per page.

``python -m outreach_dev.expected_extracts`` says whether the extracts still match the file (exit 1
if not, naming the pages that differ); ``--write`` writes the file anew, for a commit of its own
that says what it changes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

from outreach.scraping.extract import PageExtract, extract_page
from outreach_dev.bench.extraction import MAX_TEXT_CHARS, corpora

EXPECTED = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "expected_extracts.json"
FARM_SITES = 60


def summary(page: PageExtract) -> dict[str, Any]:
    """The page's extract as JSON values; the text as its length and digest."""
    return {
        "title": page.title,
        "description": page.description,
        "language": page.language,
        "emails": [[email.address, email.decoded.value] for email in page.emails],
        "phones": [[phone.e164, phone.kind.value, phone.as_found] for phone in page.phones],
        "social": [list(link) for link in page.social_links],
        "candidates": [[link.kind, link.url] for link in page.candidate_links],
        "skipped": page.skipped_links,
        "cut": page.markup_cut,
        "text": [len(page.text), hashlib.sha256(page.text.encode()).hexdigest()[:16]],
    }


def current() -> dict[str, dict[str, dict[str, Any]]]:
    """Per corpus and page name, the summary of what ``extract_page`` finds now."""
    return {
        corpus: {
            name: summary(extract_page(html, url, max_text_chars=MAX_TEXT_CHARS)) for name, url, html in pages
        }
        for corpus, pages in corpora(FARM_SITES).items()
    }


def render(extracts: dict[str, dict[str, dict[str, Any]]]) -> str:
    lines = ["{"]
    for index, (corpus, pages) in enumerate(extracts.items()):
        lines.append(f"{json.dumps(corpus)}: {{")
        entries = [
            f"  {json.dumps(name)}: {json.dumps(found, ensure_ascii=False, separators=(',', ':'))}"
            for name, found in pages.items()
        ]
        lines.append(",\n".join(entries))
        lines.append("}" + ("," if index < len(extracts) - 1 else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def expected() -> dict[str, dict[str, dict[str, Any]]]:
    loaded: dict[str, dict[str, dict[str, Any]]] = json.loads(EXPECTED.read_text(encoding="utf-8"))
    return loaded


def differences(
    found: dict[str, dict[str, dict[str, Any]]], wanted: dict[str, dict[str, dict[str, Any]]]
) -> list[str]:
    """``corpus/page`` of every page whose extract differs, is missing or is new."""
    names = {(corpus, name) for corpus, pages in (*found.items(), *wanted.items()) for name in pages}
    return sorted(
        f"{corpus}/{name}"
        for corpus, name in names
        if found.get(corpus, {}).get(name) != wanted.get(corpus, {}).get(name)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--write", action="store_true", help=f"write {EXPECTED.name} anew")
    args = parser.parse_args(argv)
    found = current()
    if args.write:
        EXPECTED.write_text(render(found), encoding="utf-8")
        print(f"{EXPECTED}: {sum(len(pages) for pages in found.values())} pages")
        return 0
    changed = differences(found, expected())
    for name in changed:
        print(f"differs: {name}")
    return 1 if changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
