"""How large a rendered message may be, field by field and in all: small enough for one task row.

A message is stored whole on its email task (``EmailMessage.to_item``) and a task row may have
``task_store.MAX_ROW_BYTES`` (DynamoDB's 400 KB item limit less 8 KB kept for what sending adds,
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Constraints.html#limits-items).
SES takes far larger messages (10 MB through SendRawEmail, 40 MB through SESv2 SendEmail,
https://docs.aws.amazon.com/ses/latest/dg/quotas.html), so the row is the limit that counts. The
caps, checked on every rendered message at planning (so ``--dry-run`` shows a row that passes one):

- subject: 250 characters. RFC 5322 section 2.1.1 limits a header line to 998 characters (78
  recommended); 250 stays under it even before folding, and is more than any mail client shows.
- unsubscribe: 900 characters, so ``List-Unsubscribe: <...>`` (RFC 2369) fits one 998-character line.
- text: 128 KiB. About 30 printed pages; a text body is rarely longer than its HTML twin.
- html: 256 KiB. Gmail clips a message over about 102 KB; 256 KiB leaves room for inline styles.
- all four together: 320 KiB, so that with sender, recipient, ids and times the task row stays about
  70 KB under ``MAX_ROW_BYTES`` (``tests/outreach_operator/campaigns/test_rendering.py`` writes one
  at every cap).

Bytes are UTF-8 bytes, as DynamoDB counts them. A render stops as soon as its output passes the cap
(``template_sandbox.render_bounded``), not after making the whole value.
"""

from __future__ import annotations

from collections.abc import Mapping

SUBJECT_CHARS = 250
UNSUBSCRIBE_CHARS = 900
TEXT_BYTES = 128 * 1024
HTML_BYTES = 256 * 1024
MESSAGE_BYTES = 320 * 1024


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def too_large(prefix: str, fields: Mapping[str, str]) -> tuple[str, str] | None:
    """``(field, reason)`` for the first cap ``fields`` (``subject``, ``text``, ``html``,
    ``unsubscribe``) is over, else ``None``; step fields are named under ``prefix`` (``steps.0``)."""
    checks = (
        ("subject", len(fields["subject"]), SUBJECT_CHARS, "characters"),
        ("unsubscribe", len(fields["unsubscribe"]), UNSUBSCRIBE_CHARS, "characters"),
        ("text", utf8_size(fields["text"]), TEXT_BYTES, "bytes"),
        ("html", utf8_size(fields["html"]), HTML_BYTES, "bytes"),
    )
    for name, size, cap, unit in checks:
        if size > cap:
            where = name if name == "unsubscribe" else f"{prefix}.{name}"
            return where, f"{size:,} {unit}, over the {cap:,} {unit} it may have"
    total = sum(utf8_size(value) for value in fields.values())
    if total > MESSAGE_BYTES:
        return prefix, (
            f"the message would be {total:,} bytes (subject, text, html and unsubscribe), over the "
            f"{MESSAGE_BYTES:,} bytes a message may have"
        )
    return None
