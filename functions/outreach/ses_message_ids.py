"""The Message-ID a recipient sees on an email SES sent, and the SES ids named in a reply's headers.

SES gives each sent email an id (SendEmail's ``MessageId``, stored on the task as ``ses_message_id``)
and sets the email's Message-ID header itself: "If you provide a Message-ID header, Amazon SES
overrides the header with its own value" (https://docs.aws.amazon.com/ses/latest/dg/header-fields.html).
That is all SES documents of it; the form is not documented. What received mail shows, and what this
module writes, is ``<id@email.amazonses.com>`` for email sent in us-east-1 and
``<id@<region>.amazonses.com>`` elsewhere. Follow-ups are threaded against it (RFC 5322 §3.6.4:
In-Reply-To names the message answered, References the thread), and a reply whose client dropped the
reply token still names it in In-Reply-To or References: ``ses_ids_in`` reads the ids back, so the
inbound processor matches them against the tasks' ``ses_message_id``.
"""

from __future__ import annotations

import re

# The ids SendEmail returns are letters, digits and hyphens; an id-left of RFC 5322 (dot-atom-text) is
# what may go between "<" and "@" at all.
_ATEXT_DOTS = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*")
_REGION = re.compile(r"[a-z]{2}(-[a-z]+)+-[0-9]{1,2}")
_MAX_ID_CHARS = 200
# What ``ses_ids_in`` reads of a header value: at most this many msg-ids, each at most this long
# (RFC 5322 §2.1.1: a line is at most 998 characters), in at most this much text.
MAX_IDS = 50
MAX_MSG_ID_CHARS = 998
_MAX_SCANNED_CHARS = MAX_IDS * (MAX_MSG_ID_CHARS + 2)
# One msg-id: "<" id-left "@" id-right ">" (RFC 5322 §3.6.4), the obsolete forms' quoted strings and
# comments aside.
_MSG_ID = re.compile(r"<([^<>@\s]+)@([^<>@\s]+)>")
_US_EAST_1 = "us-east-1"


def message_id_header(ses_message_id: str, region: str) -> str:
    """The Message-ID (with its angle brackets) SES gives the email it sent in ``region`` as
    ``ses_message_id``; ``ValueError`` for an id or region that cannot be one."""
    if not isinstance(ses_message_id, str) or len(ses_message_id) > _MAX_ID_CHARS:
        raise ValueError("ses_message_id: not text of at most 200 characters")
    if not _ATEXT_DOTS.fullmatch(ses_message_id):
        raise ValueError("ses_message_id: not the left part of a msg-id (RFC 5322 dot-atom-text)")
    if not isinstance(region, str) or not _REGION.fullmatch(region):
        raise ValueError(f"region: not an AWS region name: {str(region)[:40]!r}")
    domain = "email.amazonses.com" if region == _US_EAST_1 else f"{region}.amazonses.com"
    return f"<{ses_message_id}@{domain}>"


def ses_ids_in(header_value: str) -> list[str]:
    """The id-left of each msg-id in an In-Reply-To or References value, in order, each once.

    Bounded for a stranger's header: only the first ``MAX_IDS`` msg-ids of the first
    ``MAX_IDS * 1,000`` characters are read, and a msg-id longer than ``MAX_MSG_ID_CHARS`` is skipped.
    Every msg-id is returned, whatever its right part: the caller matches them against the ids it
    stored, and one nobody stored matches nothing.
    """
    if not isinstance(header_value, str):
        return []
    found: list[str] = []
    for match in _MSG_ID.finditer(header_value[:_MAX_SCANNED_CHARS]):
        if len(found) >= MAX_IDS:
            break
        if len(match.group(0)) > MAX_MSG_ID_CHARS:
            continue
        left = match.group(1)
        if left not in found:
            found.append(left)
    return found
