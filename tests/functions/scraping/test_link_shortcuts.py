"""A link's shortcuts give what the general route gives: resolution as urljoin then the canonical form,
and a candidate's page key as the fetcher's URL (httpx) has it, refusals included.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from outreach.canonical_url import CanonicalUrl, canonical_url
from outreach.errors import FatalScrapeError, UnusableUrlError
from outreach.scraping.link_base import LinkBase
from outreach.scraping.site_urls import (
    canonical_http_url,
    fetchable_page_key,
    http_target,
    join_url,
    page_key,
)

EXAMPLES = settings(
    max_examples=400,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
BASES = [
    "https://muster.example/",
    "http://www.muster.example:8080/dir/page;p?q=1",
    "https://[::1]/a/b/",
    "http://127.0.0.1/site-0/home",
    "https://shop.muster.example/a?x#frag",
]
# Pieces of paths and queries where joining, canonical form and httpx's encoding differ.
PIECES = st.sampled_from(
    ["/", "a", "b", ".", "..", "./", "../", "?", "#", ";", "%", "%2e", "%zz", " ", "\t", "\n", "ü", "~", "'",
     "\"", "<", "`", "{", "|", "\\", "//", ":", "@", "=", "&", "x" * 700, "\x7f", "\u00a0"]
)  # fmt: skip
HREFS = st.tuples(
    st.sampled_from(["/", "#", "?", "", "//", "http://muster.example/"]), st.lists(PIECES, max_size=8)
).map(lambda parts: parts[0] + "".join(parts[1]))


def _general(base: str, href: str) -> CanonicalUrl | str:
    try:
        return canonical_http_url(join_url(base, href))
    except FatalScrapeError as exc:
        return exc.reason


@EXAMPLES
@given(base=st.sampled_from(BASES), href=HREFS)
def test_a_link_resolves_to_what_urljoin_and_the_canonical_form_give(base: str, href: str) -> None:
    link_base = LinkBase.of(base, canonical_url(base))
    try:
        resolved: CanonicalUrl | str | None = link_base.resolve(href)
    except FatalScrapeError as exc:
        resolved = exc.reason
    assert resolved == _general(base, href)


def _httpx_key(url: CanonicalUrl) -> str:
    try:
        return page_key(http_target(url))
    except FatalScrapeError as exc:
        return f"refused: {exc.reason}"


def _shortcut_key(url: CanonicalUrl) -> str:
    try:
        return fetchable_page_key(url)
    except FatalScrapeError as exc:
        return f"refused: {exc.reason}"


HOSTS = st.sampled_from(
    [
        "muster.example",
        "www.muster.example",
        "1.2.3.4",
        "1.2.3.999",
        "01.2.3.4",
        "::1",
        "a_b.example",
        "xn--fa-hia.de",
    ]
)


@EXAMPLES
@given(
    host=HOSTS,
    path=st.lists(PIECES, max_size=8).map(lambda p: "/" + "".join(p)),
    query=st.lists(PIECES, max_size=4),
)
def test_a_candidate_has_the_page_key_and_refusal_of_the_fetchers_url(
    host: str, path: str, query: list[str]
) -> None:
    url = CanonicalUrl("https", host, 443, path.split("?")[0].split("#")[0], "".join(query).replace("#", ""))
    assert _shortcut_key(url) == _httpx_key(url)


@pytest.mark.parametrize(
    "raw",
    [
        "https://muster.example/a/./kontakt",
        "https://muster.example/ü?x=ä",
        "http://1.2.3.999/kontakt",
        "https://muster.example/k?x=%zz",
    ],
)
def test_a_candidate_the_fetcher_would_change_or_refuse_keeps_the_fetchers_key(raw: str) -> None:
    try:
        url = canonical_url(raw)
    except UnusableUrlError:
        pytest.skip("no canonical form")
    assert _shortcut_key(url) == _httpx_key(url)
