"""Turning a fetched HTML body into text, following the usual browser rules for the character set."""

from __future__ import annotations

import codecs
import re

_SNIFF_BYTES = 4096
_META_CHARSET = re.compile(rb"""<meta[^>]+?charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)""", re.IGNORECASE)

_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))

# Browsers decode these labels as windows-1252; pages declaring them routinely contain its extra glyphs.
_WINDOWS_1252_ALIASES = frozenset({"iso-8859-1", "iso8859-1", "latin1", "latin-1", "ascii", "us-ascii"})


def content_type_parts(header: str | None) -> tuple[str, str | None]:
    """Split a Content-Type header into the lower-case media type and the charset parameter."""
    if not header:
        return "", None
    media_type, *params = header.split(";")
    charset = None
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("\"'")
    return media_type.strip().lower(), charset


def decode_html(body: bytes, declared_charset: str | None = None) -> str:
    """Decode ``body``: BOM first, then the HTTP charset, then a ``<meta>`` charset, then UTF-8.

    Bytes that do not fit the chosen encoding are replaced rather than failing the page; a body cut
    at the size cap may end in the middle of a character, which is dropped.
    """
    for bom, bom_codec in _BOMS:
        if body.startswith(bom):
            return _decode(body[len(bom) :], bom_codec)
    for label in (declared_charset, _meta_charset(body)):
        codec = _codec_for(label)
        if codec is not None:
            return _decode(body, codec)
    try:
        return codecs.getincrementaldecoder("utf-8")().decode(body, final=False)
    except UnicodeDecodeError:  # outcome: not UTF-8, read as windows-1252
        return body.decode("cp1252", errors="replace")


def looks_like_html(body: bytes) -> bool:
    """For a response without a Content-Type: does the body start like an HTML document?"""
    head = body[:_SNIFF_BYTES].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<!--"))


def _meta_charset(body: bytes) -> str | None:
    match = _META_CHARSET.search(body[:_SNIFF_BYTES])
    return match.group(1).decode("ascii") if match else None


def _codec_for(label: str | None) -> str | None:
    if not label:
        return None
    label = label.strip().lower()
    if label in _WINDOWS_1252_ALIASES:
        return "cp1252"
    try:
        name = codecs.lookup(label).name
    except LookupError:  # outcome: unknown charset label, caller falls back
        return None
    # A UTF-16 label on a document that was readable enough to find the label is really ASCII-based.
    return "utf-8" if name.startswith("utf-16") else name


def _decode(body: bytes, codec: str) -> str:
    return codecs.getincrementaldecoder(codec)(errors="replace").decode(body, final=False)
