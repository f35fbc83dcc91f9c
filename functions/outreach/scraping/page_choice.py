"""Which links lead to an imprint, contact or about page: by the last path segment or the whole link text.

A page counts when its last path segment (file extension and a trailing ``index`` dropped) is one of
the known names, or when the link's whole text is one of the known phrases: ``/kontakt/`` and a link
reading "Kontakt" are contact pages, an article ``/blog/about-our-new-kontakt-form`` or a link "About
our products" is not. Kinds are listed in the order they are worth fetching: the imprint (legally
required to name the company, its address, e-mail and phone in Germany), then contact, then about.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

PAGE_KINDS: tuple[tuple[str, frozenset[str], frozenset[str]], ...] = (
    (
        "imprint",
        frozenset(
            {
                "impressum", "imprint", "legal-notice", "legalnotice", "site-notice", "aviso-legal",
                "avisolegal", "mentions-legales", "impressum-datenschutz",
            }
        ),
        frozenset({"impressum", "imprint", "legal notice", "site notice", "aviso legal"}),
    ),
    (
        "contact",
        frozenset(
            {
                "kontakt", "contact", "contact-us", "contactus", "contacts", "kontaktformular", "contacto",
                "contactar", "contactanos", "contáctanos", "get-in-touch", "お問い合わせ", "問い合わせ",
            }
        ),
        frozenset(
            {
                "kontakt", "contact", "contact us", "kontaktieren sie uns", "kontaktformular", "get in touch",
                "contacto", "contáctanos", "contactanos", "お問い合わせ", "問い合わせ",
            }
        ),
    ),
    (
        "about",
        frozenset(
            {
                "about", "about-us", "aboutus", "ueber-uns", "uber-uns", "über-uns", "ueberuns",
                "wir-ueber-uns", "unternehmen", "company", "who-we-are", "quienes-somos", "sobre-nosotros",
                "nosotros", "empresa", "会社概要",
            }
        ),
        frozenset(
            {
                "über uns", "ueber uns", "wir über uns", "about", "about us", "who we are", "unternehmen",
                "das unternehmen", "company", "quiénes somos", "quienes somos", "sobre nosotros", "nosotros",
                "empresa", "会社概要",
            }
        ),
    ),
)  # fmt: skip
KIND_PRIORITY = {kind: rank for rank, (kind, _, _) in enumerate(PAGE_KINDS)}

_EXTENSION = re.compile(r"\.(?:html?|php\d?|aspx?|jsp|cfm)$")
_INDEX = re.compile(r"^(?:index|default)(?:\.[a-z0-9]+)?$")
_NOT_WORD = re.compile(r"[^\w&]+")


def page_kind(path: str, link_text: str) -> str | None:
    """``imprint``, ``contact`` or ``about`` for a link to ``path`` reading ``link_text``; else None."""
    segment = last_segment(path)
    phrase = _NOT_WORD.sub(" ", link_text.lower()).strip()
    for kind, segments, phrases in PAGE_KINDS:
        if segment in segments or phrase in phrases:
            return kind
    return None


def last_segment(path: str) -> str:
    """The last non-empty path segment, lower case, decoded, without extension; ``_`` and spaces as ``-``."""
    segments = [s for s in unquote(path).lower().split("/") if s and not _INDEX.match(s)]
    if not segments:
        return ""
    return "-".join(_EXTENSION.sub("", segments[-1]).replace("_", " ").split()).replace(" ", "-")
