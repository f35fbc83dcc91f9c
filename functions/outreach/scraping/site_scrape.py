"""The result of scraping one site: the full document for S3 and the small summary for the task row."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from outreach.scraping.contacts import FoundEmail, FoundPhone

SUMMARY_TITLE_CHARS = 200
SUMMARY_EMAILS = 10
SUMMARY_PHONES = 5


@dataclass(frozen=True)
class PageRecord:
    """One page the crawl tried. ``skipped`` names why an extra page contributed nothing."""

    url: str
    status: int
    bytes: int
    truncated: bool
    skipped: str | None = None
    links_skipped: int = 0
    markup_cut: str | None = None

    def to_document(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "status": self.status,
            "bytes": self.bytes,
            "truncated": self.truncated,
            "skipped": self.skipped,
            "links_skipped": self.links_skipped,
            "markup_cut": self.markup_cut,
        }


@dataclass(frozen=True)
class SiteScrape:
    final_url: str
    title: str | None
    description: str | None
    language: str | None
    emails: tuple[FoundEmail, ...]
    phones: tuple[FoundPhone, ...]
    social_links: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    text: str = ""
    pages: tuple[PageRecord, ...] = ()
    robots: Mapping[str, Any] = field(default_factory=dict)

    @property
    def pages_used(self) -> int:
        """Pages whose content went into the result (the home page and the extras not skipped)."""
        return sum(1 for page in self.pages if page.skipped is None)

    def to_document(self) -> dict[str, Any]:
        """The full result as JSON-serialisable data (stored in S3)."""
        return {
            "final_url": self.final_url,
            "title": self.title,
            "description": self.description,
            "language": self.language,
            "emails": [email.to_document() for email in self.emails],
            "phones": [phone.to_document() for phone in self.phones],
            "social_links": {network: list(urls) for network, urls in self.social_links.items()},
            "text": self.text,
            "pages": [page.to_document() for page in self.pages],
            "robots": dict(self.robots),
        }

    def summary(self) -> dict[str, Any]:
        """At most a few kilobytes for the task row: strings, lists of string maps and one int, no floats.

        E-mails and phones have the shape of :mod:`outreach.scraping.contacts`, as in the document.
        """
        return {
            "title": (self.title or "")[:SUMMARY_TITLE_CHARS],
            "language": self.language or "",
            "emails": [email.to_document() for email in self.emails[:SUMMARY_EMAILS]],
            "phones": [phone.to_document() for phone in self.phones[:SUMMARY_PHONES]],
            "pages": self.pages_used,
        }
