"""One canonical URL form for task ids, the fetcher and page selection."""

from __future__ import annotations

import pytest

from outreach.canonical_url import MAX_URL_LENGTH, canonical_url
from outreach.errors import UnusableUrlError
from outreach.scraping.site_urls import parse_http_url
from outreach.task_ids import normalise_url


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("https://faß.de/", "https://xn--fa-hia.de/"),
        ("https://FAß.DE", "https://xn--fa-hia.de/"),
        ("https://\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com/a?b=1#frag", "https://example.com/a?b=1"),
        ("HTTP://Example.COM:80/", "http://example.com/"),
        ("https://example.com:443", "https://example.com/"),
        ("http://example.com:8080/x", "http://example.com:8080/x"),
        ("http://[::1]:8080/", "http://[::1]:8080/"),
        ("http://example.com./", "http://example.com/"),
        ("https://bücher.example/", "https://xn--bcher-kva.example/"),
    ],
)
def test_task_ids_and_the_fetcher_share_one_canonical_form(raw: str, canonical: str) -> None:
    assert str(canonical_url(raw)) == canonical
    assert normalise_url(raw) == canonical
    assert str(parse_http_url(raw).canonical) == canonical


def test_a_port_is_part_of_the_site_and_the_default_port_is_not() -> None:
    assert canonical_url("http://example.com:8080/").site == "example.com:8080"
    assert canonical_url("http://www.example.com:80/").site == "example.com"
    assert canonical_url("https://example.com:443/").site == canonical_url("http://example.com/").site


@pytest.mark.parametrize(
    "raw",
    [
        "ftp://example.com/",
        "https://user:pw@example.com/",
        "http://[ccpa-preferences]/",
        "https://[domain]/impressum",
        "http://exa mple.com/",
        "https://example.com:99999/",
        "https:///path",
        "http://[fe80::1%25eth0]/",
        "https://xn--ab-.de/",
        "https://" + "a" * MAX_URL_LENGTH + ".de/",
    ],
)
def test_a_url_without_a_canonical_form_is_unusable_everywhere(raw: str) -> None:
    with pytest.raises(UnusableUrlError):
        canonical_url(raw)


def test_one_length_limit_applies_also_after_idna_encoding() -> None:
    # 600 "ü" labels fit the limit as written but not once each becomes "xn--tda"
    raw = "https://" + ".".join(["ü"] * 600) + ".de/"
    assert len(raw) <= MAX_URL_LENGTH
    with pytest.raises(UnusableUrlError):
        canonical_url(raw)
