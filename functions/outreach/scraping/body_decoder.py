"""Reading a response body through its Content-Encoding with a hard cap on the decoded bytes.

The raw body is streamed through one ``zlib`` decompressor whose output is limited with
``max_length`` on every call, so a few hundred bytes on the wire that expand to gigabytes (a
"compression bomb") never occupy more than the cap in memory. Only what the fetcher asks for is
accepted: no encoding, ``gzip`` or ``deflate``, once. A stacked encoding (``gzip, gzip``) or one that
was not requested (``br``, ``zstd``, ``compress``) is refused with ``unsupported_encoding``: no
retry changes what the site sends. Compressed bytes on the wire are capped as well, so an endless
stream that decodes to little cannot keep the fetch busy either.

Content-Encoding: https://www.rfc-editor.org/rfc/rfc9110#name-content-encoding
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from typing import Protocol

from outreach.errors import BadCompressedBodyError, FatalScrapeError

ACCEPTED_ENCODINGS = ("gzip", "deflate")
# The value of the request's Accept-Encoding header.
ACCEPT_ENCODING = ", ".join(ACCEPTED_ENCODINGS)
_IDENTITY = frozenset({"", "identity"})


class _Decompressor(Protocol):
    @property
    def unconsumed_tail(self) -> bytes: ...

    def decompress(self, data: bytes, max_length: int = ...) -> bytes: ...


def content_coding(header: str | None) -> str | None:
    """The one coding named by a Content-Encoding header (None for identity), or refuse it."""
    codings = [part.strip().lower() for part in (header or "").split(",")]
    codings = [coding for coding in codings if coding not in _IDENTITY]
    if len(codings) > 1:
        raise FatalScrapeError("unsupported_encoding", f"stacked content codings {header!r}")
    if not codings:
        return None
    coding = "gzip" if codings[0] == "x-gzip" else codings[0]
    if coding not in ACCEPTED_ENCODINGS:
        raise FatalScrapeError("unsupported_encoding", f"content coding {coding[:40]!r} was not requested")
    return coding


def read_capped(raw_chunks: Iterable[bytes], coding: str | None, limit: int) -> tuple[bytes, bool]:
    """The decoded body, at most ``limit`` bytes, and whether there was more (cut at the cap).

    Raises :class:`BadCompressedBodyError` when the compressed stream is corrupt.
    """
    out = bytearray()
    wire = 0
    decompressor: _Decompressor | None = None
    for chunk in raw_chunks:
        if not chunk:
            continue
        wire += len(chunk)
        room = limit - len(out)
        if coding is None:
            out += chunk[:room]
            if len(chunk) > room:
                return bytes(out), True
            continue
        if room <= 0 or wire > limit:
            return bytes(out), True
        if decompressor is None:
            decompressor = _decompressor(coding, chunk)
        if _inflate(decompressor, chunk, out, limit):
            return bytes(out), True
    return bytes(out), False


def _decompressor(coding: str, first_chunk: bytes) -> _Decompressor:
    if coding == "gzip":
        return zlib.decompressobj(zlib.MAX_WBITS | 16)
    # "deflate" is meant to be zlib-wrapped, but some servers send a raw deflate stream.
    probe = zlib.decompressobj(zlib.MAX_WBITS)
    try:
        probe.decompress(first_chunk[:2])
    except zlib.error:  # outcome: not zlib-wrapped, read as raw deflate
        return zlib.decompressobj(-zlib.MAX_WBITS)
    return zlib.decompressobj(zlib.MAX_WBITS)


def _inflate(decompressor: _Decompressor, chunk: bytes, out: bytearray, limit: int) -> bool:
    """Decompress ``chunk`` into ``out`` up to ``limit`` bytes; True if output was left over."""
    data = chunk
    try:
        while data and len(out) < limit:
            out += decompressor.decompress(data, limit - len(out))
            data = decompressor.unconsumed_tail
    except zlib.error as exc:
        raise BadCompressedBodyError(str(exc)) from exc
    return bool(data)
