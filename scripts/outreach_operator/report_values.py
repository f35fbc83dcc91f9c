"""A value echoed in a report, cut to 200 characters and labelled with its full length.

A rejected line or cell is shown back to the operator (in the table and in ``--json``) so they can find
it; a 2 MB line echoed whole would make the report as large as the file. The first 200 characters
say which line it is; the length says how much was left out.
"""

from __future__ import annotations

ECHO_CHARS = 200


def shorten(value: str, limit: int = ECHO_CHARS) -> str:
    """``value`` itself if it has at most ``limit`` characters, else its start and its length."""
    if len(value) <= limit:
        return value
    return f"{value[:limit]}… ({len(value):,} characters)"
