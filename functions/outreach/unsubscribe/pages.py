"""The unsubscribe endpoint's pages: confirm, done, and the plain error pages, tiny static HTML.

Every text inserted into a page is escaped with ``html.escape`` (quotes too, so it is safe inside an
attribute); the pages load nothing (no script, image, font or external style) and the headers
(``HEADERS``) forbid the browser anything else: a Content-Security-Policy that allows only the inline
style and a form posting back to the endpoint, no framing, no caching, no MIME sniffing, no referrer.
The confirmation form posts ``List-Unsubscribe=One-Click`` to the same URL with the same token, the
body a mail provider's one-click POST sends (RFC 8058), so both take one path.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Final
from urllib.parse import quote

CONTENT_SECURITY_POLICY: Final = "; ".join(
    (
        "default-src 'none'",
        "form-action 'self'",
        "style-src 'unsafe-inline'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    )
)

HEADERS: Final = {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}

_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#222}"
    "button{font-size:1rem;padding:.6rem 1.2rem;cursor:pointer}"
)


@dataclass(frozen=True)
class Page:
    """An HTTP status and the HTML document answered with it."""

    status: int
    html: str


def _document(status: int, title: str, body: str) -> Page:
    """``body`` is markup built here from escaped parts; ``title`` is escaped."""
    return Page(
        status=status,
        html=(
            '<!doctype html><html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width,initial-scale=1">'
            '<meta name="robots" content="noindex,nofollow">'
            f"<title>{escape(title)}</title><style>{_STYLE}</style></head>"
            f"<body><main><h1>{escape(title)}</h1>{body}</main></body></html>"
        ),
    )


def confirmation_page(token: str, address: str) -> Page:
    """200: asks ``address`` to confirm; the button posts the one-click body back with ``token``."""
    action = "?t=" + quote(token, safe=".-_")
    return _document(
        200,
        "Unsubscribe",
        f"<p>Stop all email from us to <strong>{escape(address)}</strong>?</p>"
        f'<form method="post" action="{escape(action)}">'
        '<input type="hidden" name="List-Unsubscribe" value="One-Click">'
        '<button type="submit">Unsubscribe</button></form>',
    )


def done_page(address: str) -> Page:
    """200: the address is unsubscribed (also for a repeated request: the answer is the same)."""
    return _document(
        200,
        "You are unsubscribed",
        f"<p>We will send no more email to <strong>{escape(address)}</strong>.</p>",
    )


def error_page(status: int, message: str) -> Page:
    """A plain page for a refused or failed request: ``status`` with ``message``, nothing else."""
    titles = {
        400: "This link is not valid",
        405: "Not allowed",
        413: "Request too large",
        503: "Please try again later",
    }
    return _document(status, titles.get(status, "Error"), f"<p>{escape(message)}</p>")
