"""An operator's text file read in bounded memory: every line capped, the file hashed in chunks.

Reading a file with ``for line in handle`` (or ``csv.reader(handle)``) holds a whole line in memory
before anything can look at it, and ``path.read_bytes()`` the whole file: a 300 MB file of one line
cost gigabytes before it was refused. Here a line is read at most ``MAX_LINE_CHARS`` characters at a
time (``readline(limit)``), so a longer one is refused, naming it, after that much has been read; and
the hash reads the file in chunks (``hashlib.file_digest``).

256 Ki characters per line: no value can be used whole in a message whose largest part, the HTML
body, has at most 256 KiB (``campaigns.message_caps``), and a site's URL has at most 2,048 characters;
a recipients row with a 90 KB note (a value that does fit in a text body) still reads. A quoted CSV
field that goes on over many lines is held to the ``csv`` module's own limit
(``csv.field_size_limit()``, 131,072 characters by default).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from outreach_operator.errors import LineTooLongError

MAX_LINE_CHARS = 256 * 1024


def bounded_lines(handle: TextIO, path: Path) -> Iterator[str]:
    """The lines of ``handle``, line ends kept; raises LineTooLongError at the first longer than the cap."""
    number = 0
    while line := handle.readline(MAX_LINE_CHARS + 2):
        number += 1
        if len(line.rstrip("\r\n")) > MAX_LINE_CHARS:
            raise LineTooLongError(path, number, MAX_LINE_CHARS)
        yield line


def file_sha256(path: Path) -> str:
    """The SHA-256 of the file's bytes, read in chunks (the file is never held whole)."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
