"""A CSV cell a spreadsheet shows as text: the OWASP CSV-injection rule, a formula start quoted with '.

Excel, LibreOffice Calc and Google Sheets evaluate a cell that starts with ``=``, ``+``, ``-`` or
``@`` (``=HYPERLINK(...)``, ``+cmd|' /C calc'!A0``, ``@SUM(...)``, ``-2+3``), and quoting the CSV
field does not stop them. OWASP's rule (https://owasp.org/www-community/attacks/CSV_Injection): a
cell that starts with ``=``, ``+``, ``-``, ``@``, tab (0x09) or carriage return (0x0D) gets a single
quote ``'`` in front, which a spreadsheet reads as "this is text", and every field is wrapped in
double quotes (``csv.QUOTE_ALL``, inner quotes doubled), so a separator inside a cell cannot start a
new cell for a reader that splits on another separator. For the same reason the quote also goes in
front of a cell that starts with a line feed (0x0A), or with the full-width equals, plus, minus or
commercial at (U+FF1D, U+FF0B, U+FF0D, U+FF20, which spreadsheets in East Asian locales may take for
the ASCII ones), or with any of these after leading spaces. The cost is a visible ``'`` in front of
such a value (an E.164 phone number ``+4930...`` is exported as ``'+4930...``); the JSONL export
keeps every value exact.

Read back (``outreach contacts import`` of a file ``contacts export`` wrote), ``plain_value`` takes
that quote off again: a cell that is ``'`` followed by what ``text_cell`` would have quoted is the
value after the quote. A cell is only ever data: nothing read is evaluated.
"""

from __future__ import annotations

import csv
from typing import Final

QUOTING: Final = csv.QUOTE_ALL
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def text_cell(value: str) -> str:
    """``value`` as a cell no spreadsheet evaluates: with a leading ``'`` if it could start a formula."""
    return "'" + value if value.lstrip(" ").startswith(FORMULA_STARTS) else value


def plain_value(cell: str) -> str:
    """The value ``text_cell`` made ``cell`` from: without the leading ``'`` it put before a formula
    start; any other cell as it is."""
    if cell.startswith("'") and text_cell(cell[1:]) == cell:
        return cell[1:]
    return cell
