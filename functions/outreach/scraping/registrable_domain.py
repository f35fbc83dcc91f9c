"""A host's registrable domain (``shop.example.co.uk`` → ``example.co.uk``) from the bundled suffix list.

``tldextract`` is used with its bundled snapshot of the public suffix list only: no suffix list URLs
(so no network access at run time) and no cache directory (so nothing is written; a Lambda's file
system is read-only outside ``/tmp``). The snapshot is as fresh as the installed ``tldextract``.

Hosts under a suffix the list does not know (the special-use ``.test``, ``.example``, ``.invalid``,
``.localhost``) fall back to their last two labels; an IP literal is its own registrable domain.
"""

from __future__ import annotations

from functools import cache, lru_cache

import tldextract

from outreach.canonical_url import site_host


@cache
def offline_extractor() -> tldextract.TLDExtract:
    """The one extractor: bundled snapshot, no suffix list URLs, no cache directory."""
    return tldextract.TLDExtract(cache_dir=None, suffix_list_urls=(), fallback_to_snapshot=True)


@lru_cache(maxsize=4096)
def registrable_domain(host: str) -> str:
    """``host``'s registrable domain, lower case; the host itself for IP literals and single labels."""
    name = host.strip("[]").rstrip(".").lower()
    if ":" in name or name.replace(".", "").isdigit():
        return name
    parts = offline_extractor()(name)
    if parts.suffix and parts.domain:
        return f"{parts.domain}.{parts.suffix}"
    labels = site_host(name).split(".")
    return ".".join(labels[-2:])


@lru_cache(maxsize=4096)
def public_suffix(host: str) -> str:
    """The public suffix of ``host`` (``co.uk`` for ``shop.example.co.uk``); empty when unknown."""
    return str(offline_extractor()(host.lower()).suffix)


def is_parent_domain(host: str, page_host: str) -> bool:
    """True when ``host`` is a parent domain of ``page_host`` within one registrable domain.

    ``example.de`` is a parent of ``shop.example.de`` (the imprint of the company behind the shop);
    ``blog.example.de`` is not, and neither is ``de``. A leading ``www.`` is ignored on both.
    """
    target, page = site_host(host), site_host(page_host)
    return page.endswith("." + target) and registrable_domain(page) == registrable_domain(target)
