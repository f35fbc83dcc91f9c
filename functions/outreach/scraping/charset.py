"""Turning a fetched HTML body into text, following the usual browser rules for the character set.

Only the labels of the WHATWG Encoding Standard (https://encoding.spec.whatwg.org/#names-and-labels,
via the ``webencodings`` package) name a character set: Python also knows ``hex``, ``base64``,
``rot13`` or ``undefined`` as codecs, and a page declaring one of them must not choose a codec that
turns bytes into something else or always raises. An unknown label is ignored like a missing one.
"""

from __future__ import annotations

import codecs
import re

import webencodings

_SNIFF_BYTES = 4096
_META_CHARSET = re.compile(rb"""<meta[^>]+?charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)""", re.IGNORECASE)

_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16le"), (codecs.BOM_UTF16_BE, "utf-16be"))


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


def _codec_for(label: str | None) -> webencodings.Encoding | None:
    if not label:
        return None
    encoding = webencodings.lookup(label)
    # "replacement" stands for encodings that can hide markup (ISO-2022-KR, HZ): ignored like unknown.
    if encoding is None or encoding.name == "replacement":
        return None
    # A UTF-16 label on a document that was readable enough to find the label is really ASCII-based.
    if encoding.name.startswith("utf-16"):
        return webencodings.UTF8
    return encoding


def _decode(body: bytes, codec: str | webencodings.Encoding) -> str:
    encoding = webencodings.lookup(codec) if isinstance(codec, str) else codec
    if encoding is None:
        raise LookupError(f"no encoding {codec!r}")
    text: str = encoding.codec_info.incrementaldecoder(errors="replace").decode(body, final=False)
    return text
