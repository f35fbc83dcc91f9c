"""Property-based: arbitrary bytes, headers, markup and URLs end in a result or a named fatal error.

Bounded and deterministic for CI: a fixed number of examples per property, derandomized (the same
examples on every run) and no example database.
"""

from __future__ import annotations

import gzip
import zlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from outreach.canonical_url import MAX_URL_LENGTH, canonical_url
from outreach.errors import BadCompressedBodyError, FatalScrapeError, UnusableUrlError
from outreach.scraping.body_decoder import content_coding, read_capped
from outreach.scraping.charset import content_type_parts, decode_html
from outreach.scraping.extract import extract_page
from outreach.scraping.markup_bounds import bound_markup

BOUNDED = settings(
    max_examples=100,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

LABELS = st.one_of(
    st.none(),
    st.sampled_from(["utf-8", "hex", "base64", "rot13", "undefined", "utf-16", "x-user-defined", "latin1"]),
    st.text(max_size=20),
)
TAGS = st.sampled_from(
    ["div", "p", "li", "ul", "table", "td", "tr", "span", "b", "a", "script", "base", "meta"]
)
HREFS = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["http://[x]", "https://[domain]/impressum", "//[::1", "mailto:a@b.de", "/impressum"]),
)


@st.composite
def markup(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 40))):
        tag = draw(TAGS)
        kind = draw(st.sampled_from(["open", "close", "text", "link"]))
        if kind == "open":
            parts.append(f"<{tag}>")
        elif kind == "close":
            parts.append(f"</{tag}>")
        elif kind == "link":
            href = draw(HREFS).replace('"', "")
            parts.append(f'<{draw(st.sampled_from(["a", "base", "area"]))} href="{href}">x</a>')
        else:
            parts.append(draw(st.text(max_size=30)))
    return "".join(parts)


@BOUNDED
@given(body=st.binary(max_size=2000), label=LABELS)
def test_any_bytes_with_any_charset_label_decode_to_text(body: bytes, label: str | None) -> None:
    assert isinstance(decode_html(body, label), str)


@BOUNDED
@given(
    body=st.one_of(st.binary(max_size=1500), markup().map(lambda html: html.encode("utf-8", "replace"))),
    header=st.one_of(
        st.none(), st.text(max_size=40), LABELS.map(lambda label: f"text/html; charset={label}")
    ),
)
def test_any_bytes_and_content_type_go_through_decode_and_extract_to_a_result_or_a_named_error(
    body: bytes, header: str | None
) -> None:
    _, charset = content_type_parts(header)
    try:
        page = extract_page(decode_html(body, charset), "https://muster.example/", max_text_chars=300)
    except FatalScrapeError as exc:
        assert exc.reason
        return
    assert len(page.text) <= 300
    assert len(page.emails) <= 50


@BOUNDED
@given(html=markup(), page_path=st.sampled_from(["/", "/a/b?c=d", "/%zz"]))
def test_any_markup_extracts_to_a_result_or_a_named_fatal_error(html: str, page_path: str) -> None:
    try:
        page = extract_page(html, f"https://muster.example{page_path}", max_text_chars=500)
    except FatalScrapeError as exc:
        assert exc.reason
        return
    assert len(page.text) <= 500
    assert page.skipped_links >= 0


@BOUNDED
@given(html=st.text(max_size=3000), max_depth=st.integers(1, 64), max_chars=st.integers(1, 4000))
def test_bounded_markup_is_a_prefix_within_both_bounds(html: str, max_depth: int, max_chars: int) -> None:
    bounded = bound_markup(html, max_chars=max_chars, max_depth=max_depth)
    assert html.startswith(bounded.html)
    assert len(bounded.html) <= max_chars
    assert (bounded.cut is None) == (bounded.html == html)


@BOUNDED
@given(
    payload=st.binary(max_size=4000),
    header=st.one_of(
        st.none(), st.sampled_from(["gzip", "deflate", "x-gzip", "gzip, gzip", "br"]), st.text(max_size=15)
    ),
    wrap=st.sampled_from(["none", "gzip", "zlib", "raw", "corrupt"]),
    limit=st.integers(1, 5000),
)
def test_any_body_and_encoding_decode_within_the_cap_or_fail_by_name(
    payload: bytes, header: str | None, wrap: str, limit: int
) -> None:
    body = {
        "none": payload,
        "gzip": gzip.compress(payload),
        "zlib": zlib.compress(payload),
        "raw": zlib.compress(payload)[2:-4],
        "corrupt": gzip.compress(payload)[: len(payload) // 2] + b"\xff" * 8,
    }[wrap]
    try:
        coding = content_coding(header)
        decoded, truncated = read_capped(iter([body[:100], body[100:]]), coding, limit)
    except FatalScrapeError as exc:
        assert exc.reason == "unsupported_encoding"
        return
    except BadCompressedBodyError:
        return
    assert len(decoded) <= limit
    if not truncated and coding is None:
        assert decoded == body
    if not truncated and coding == "gzip" and wrap == "gzip":
        assert decoded == payload


@BOUNDED
@given(
    raw=st.one_of(
        st.text(max_size=120),
        st.builds(
            lambda scheme, host, port, path: f"{scheme}://{host}{port}{path}",
            st.sampled_from(["http", "https", "HTTP", "ftp", ""]),
            st.text(max_size=30),
            st.sampled_from(["", ":80", ":443", ":8080", ":0", ":x", ":99999"]),
            st.text(max_size=30),
        ),
    )
)
def test_any_url_has_one_stable_canonical_form_or_is_unusable(raw: str) -> None:
    try:
        first = canonical_url(raw)
    except UnusableUrlError:
        return
    text = str(first)
    assert len(text) <= MAX_URL_LENGTH
    assert first.host.isascii()
    assert canonical_url(text) == first
