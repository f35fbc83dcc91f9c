"""The why an operator gives a change of the ledger: required, bounded, kept with who gave it.

A record keeps ``why`` as human text of at most ``contacts.WHY_CHARS`` (500) characters; the operator's
name is added as `` (by <who>)`` (``… (import by <who>)`` for a file's rows), as ``campaign cancel``
records who cancelled, so the record says who stopped or lifted it and why.
"""

from __future__ import annotations

from outreach import contacts
from outreach_operator.cli.output import BadInput

# Room kept for " (import by <who>)": the operator's part of ``why`` is at most this long.
OPERATOR_WHY_CHARS = 400


def checked_why(why: str, field: str = "--why") -> str:
    """``why`` stripped; BadInput naming ``field`` when it is empty or longer than the ledger keeps."""
    text = why.strip()
    if not text:
        raise BadInput(f"{field}: say why (it is kept with the record)")
    if len(text) > OPERATOR_WHY_CHARS:
        raise BadInput(
            f"{field}: {len(text):,} characters; at most {OPERATOR_WHY_CHARS} (the record keeps "
            f"{contacts.WHY_CHARS} with the operator's name)"
        )
    return text


def recorded_why(why: str, who: str, *, imported: bool = False) -> str:
    """What the record keeps: the operator's why and who gave it."""
    by = "import by" if imported else "by"
    return contacts.clean_why(f"{why} ({by} {who})")
