"""A reply's own text, without the original it quotes: ``new_text(body)``.

The classifier reads out-of-office wording and return dates in this text only: the quoted original is
our own email, and its words ("until 5 January", "out of office") are not the sender's. The text ends
where the first of these begins (each a line pattern of :data:`QUOTE_STARTS`, in English, German,
French and Spanish):

- an attribution line, possibly wrapped over up to three lines: ``On <date>, <name> wrote:`` (Gmail,
  Apple Mail, Thunderbird), ``Am <date> schrieb <name>:``, ``Le <date>, <name> a écrit :``, ``El
  <date>, <name> escribió:``, and ``<name> wrote:`` followed by a quoted line;
- a separator: ``-----Original Message-----``, ``-----Ursprüngliche Nachricht-----``, ``-----Message
  d'origine-----``, ``-----Mensaje original-----``, and the forwarded-message ones;
- an Outlook header block (desktop and web): a ``From:``/``Von:``/``De :`` line followed, within the
  next four lines, by a ``Sent:``/``Gesendet:``/``Envoyé :``/``Enviado:`` (or ``Date``, ``To``,
  ``Subject``, ...) line.

Quoted lines (``>``, RFC 3676 section 4.5; ``html_text`` quotes ``blockquote`` the same way) are dropped
wherever they are, so an interleaved reply keeps the sender's lines between them. A reply posted below
the quote (nothing but blank lines before the first cut) keeps what follows it, quoted lines dropped.
Trailing separator lines (``____``, ``----``) and blank lines go.

Judged and not used: ``mail-parser`` (PyPI, SpamScope; 4.8.0, maintained, no dependencies) wraps this
same standard ``email`` package for forensics (Received hops, Outlook ``.msg`` through an external Perl
tool) and reads neither DSNs nor RFC 3834 headers, so it would add a layer, not a rule;
``mail-parser-reply`` (1.36, one maintainer, no dependencies) splits a thread into replies,
signatures and disclaimers with its own per-language regex table, of which only the split at the top
reply is needed here. Neither is a dependency of the project or installed in its environment. This
file keeps the few patterns in one table the tests run line by line, ships in the Lambda zip without
another package, and changes only when this project changes it (an upstream pattern change would move
a reply from one class to another silently).
"""

from __future__ import annotations

import re

# Each pattern matches the whole (stripped) line where the quoted original starts, or up to three
# wrapped lines of it joined by spaces.
QUOTE_STARTS = {
    "attribution_en": r"on\b.{0,300}\bwrote\s*:",
    "attribution_de": r"am\b.{0,300}\bschrieb\b.{0,300}:",
    "attribution_fr": r"le\b.{0,300}\ba\s+[ée]crit\s*:",
    "attribution_es": r"el\b.{0,300}\bescribi[óo]\s*:",
    "separator": (
        r"-{2,}\s*(?:original message|urspr[üu]ngliche nachricht|original-nachricht|message d'origine"
        r"|message original|mensaje original|forwarded message|weitergeleitete nachricht"
        r"|message transf[ée]r[ée]|mensaje reenviado)\s*-{2,}"
    ),
    "forwarded": (
        r"(?:begin forwarded message|anfang der weitergeleiteten nachricht"
        r"|d[ée]but du message r[ée]exp[ée]di[ée]|inicio del mensaje reenviado)\s*:"
    ),
}
# The first line of an Outlook header block, and the lines that must follow it for it to be one.
_HEADER_FROM = re.compile(r"\*?(?:from|von|de|da)\s*:\*?\s*\S", re.IGNORECASE)
_HEADER_NEXT = re.compile(
    r"\*?(?:sent|gesendet|envoy[ée]|enviado|date|datum|fecha|to|an|[àa]|para|cc|subject|betreff|objet|asunto)"
    r"\s*:",
    re.IGNORECASE,
)
_WROTE = re.compile(r".{0,300}\b(?:wrote|schrieb|a\s+[ée]crit|escribi[óo])\s*:", re.IGNORECASE)
_QUOTE_START = re.compile("|".join(f"(?:{pattern})" for pattern in QUOTE_STARTS.values()), re.IGNORECASE)
_RULE = re.compile(r"[_\-=*\s]*")
_WRAPPED_LINES = 3
_HEADER_LOOKAHEAD = 4


def _is_quoted(line: str) -> bool:
    return line.lstrip().startswith(">")


def _quote_start(lines: list[str], index: int) -> int:
    """How many lines the start of the quoted original at ``lines[index]`` takes (0: none starts there)."""
    stripped = lines[index].strip()
    if not stripped or _is_quoted(stripped):
        return 0
    # An attribution may be wrapped ("On Mon, 5 Jan 2027 at 10:00, Ada <" / "ada@example.com> wrote:").
    for count in range(1, _WRAPPED_LINES + 1):
        joined = " ".join(line.strip() for line in lines[index : index + count])
        if _QUOTE_START.fullmatch(joined):
            return count
    if _WROTE.fullmatch(stripped):
        following = [line for line in lines[index + 1 : index + 3] if line.strip()]
        return 1 if following and _is_quoted(following[0]) else 0
    if _HEADER_FROM.match(stripped):
        following = lines[index + 1 : index + 1 + _HEADER_LOOKAHEAD]
        return 1 if any(_HEADER_NEXT.match(line.strip()) for line in following) else 0
    return 0


def _trimmed(lines: list[str]) -> str:
    kept = [line.rstrip() for line in lines if not _is_quoted(line)]
    while kept and _RULE.fullmatch(kept[-1]):
        kept.pop()
    while kept and not kept[0].strip():
        kept.pop(0)
    return "\n".join(kept)


def new_text(body: str) -> str:
    """The text of ``body`` the sender wrote, without the original it quotes (module docstring)."""
    lines = body.replace("\r\n", "\n").split("\n")
    for index in range(len(lines)):
        length = _quote_start(lines, index)
        if length:
            before = _trimmed(lines[:index])
            if before:
                return before
            # Posted below the quote: the attribution's own lines go, the sender's text stays.
            return _trimmed(lines[index + length :])
    return _trimmed(lines)
