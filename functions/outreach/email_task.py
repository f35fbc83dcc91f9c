"""What an email task carries: the rendered message, its campaign step and its planned send time.

The message is rendered when the campaign is scheduled, so a missing placeholder or an unsafe header is
an error then, not a broken mail later; the worker sends exactly what is stored. Every header field is
checked for CR, LF and other control characters (header injection) both when the task is written and
again before it is sent. The names derived from a task id live here too: the task id itself, its
schedule's name and the handle of its reply address (``reply_token``).
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from outreach.errors import UnsafeEmailError

if TYPE_CHECKING:
    from outreach.sequence_rules import SequenceRules

# CR, LF, NUL and the other C0/C1 control characters (tab included): none may appear in a header.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


# One ASCII addr-spec (RFC 5321 dot-atom local part, a domain of labels): what SES can deliver to, and
# what the planner writes (a Unicode domain as punycode). No display name, no list, no whitespace.
# https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_Destination.html
_ONE_ADDRESS = re.compile(
    r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
    r"@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+"
)
_MAX_ADDRESS_CHARS = 254
_SEND_AT_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def is_one_address(text: str) -> bool:
    """Whether ``text`` is exactly one ASCII e-mail address (``a@example.org``), nothing around it."""
    return len(text) <= _MAX_ADDRESS_CHARS and _ONE_ADDRESS.fullmatch(text) is not None


def utc_iso(moment: datetime) -> str:
    """``send_at`` as stored: ISO-8601 UTC to the second with a ``Z`` (``2026-12-01T08:30:00Z``)."""
    if moment.tzinfo is None:
        raise ValueError("a timezone-aware time is required")
    return moment.astimezone(UTC).strftime(_SEND_AT_FORMAT)


def parse_utc_iso(text: str) -> datetime:
    """The inverse of ``utc_iso``; ValueError for any other text."""
    return datetime.strptime(text, _SEND_AT_FORMAT).replace(tzinfo=UTC)


def check_header(field: str, value: str) -> str:
    """``value`` itself if it may go into the header ``field``; raises UnsafeEmailError otherwise."""
    if not isinstance(value, str):
        raise UnsafeEmailError(f"{field}: must be text, got {type(value).__name__}")
    found = _CONTROL.search(value)
    if found:
        raise UnsafeEmailError(f"{field}: control character {found.group()!r} not allowed in a header")
    return value


@dataclass(frozen=True)
class EmailMessage:
    """One rendered email. ``html`` may be empty (text only); every other field but ``unsubscribe`` is
    required. ``unsubscribe`` is the List-Unsubscribe target (a ``mailto:`` or ``https:`` URI);
    ``unsubscribe_mailto`` a ``mailto:`` URI sent beside an https one (RFC 8058 §3.1: the https URI
    stays first), the unsubscribe mailbox of the campaign's reply domain."""

    sender: str
    to: str
    subject: str
    text: str
    html: str = ""
    reply_to: str = ""
    unsubscribe: str = ""
    unsubscribe_mailto: str = ""

    def __post_init__(self) -> None:
        for name in ("sender", "to", "subject", "reply_to", "unsubscribe", "unsubscribe_mailto"):
            check_header(name, getattr(self, name))
        for name in ("sender", "to", "subject", "text"):
            if not getattr(self, name).strip():
                raise UnsafeEmailError(f"{name}: must not be empty")
        if self.unsubscribe_mailto and not (
            self.unsubscribe_mailto.startswith("mailto:") and self.unsubscribe.startswith("https:")
        ):
            raise UnsafeEmailError(
                "unsubscribe_mailto: a mailto: URI, only beside an https: unsubscribe target"
            )

    def to_item(self) -> dict[str, str]:
        """The ``message`` map stored on the task (empty optional fields left out)."""
        fields = {
            "sender": self.sender,
            "to": self.to,
            "subject": self.subject,
            "text": self.text,
            "html": self.html,
            "reply_to": self.reply_to,
            "unsubscribe": self.unsubscribe,
            "unsubscribe_mailto": self.unsubscribe_mailto,
        }
        return {name: value for name, value in fields.items() if value}

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> EmailMessage:
        """Read a stored ``message`` map back; raises UnsafeEmailError for a map that is no safe message."""
        try:
            return cls(
                sender=str(item["sender"]),
                to=str(item["to"]),
                subject=str(item["subject"]),
                text=str(item["text"]),
                html=str(item.get("html", "")),
                reply_to=str(item.get("reply_to", "")),
                unsubscribe=str(item.get("unsubscribe", "")),
                unsubscribe_mailto=str(item.get("unsubscribe_mailto", "")),
            )
        except KeyError as exc:
            raise UnsafeEmailError(f"stored message lacks {exc.args[0]}") from exc


@dataclass(frozen=True)
class PlannedEmail:
    """One email of a campaign: recipient ``message.to``, campaign ``step`` (1 = first mail) at
    ``send_at`` (timezone-aware). ``timezone`` is the IANA zone of the campaign's send window (shown to
    people; schedules are written in UTC). ``max_per_minute`` is the campaign's rate, which the email
    reconciler keeps to when it sends overdue emails.

    ``rules`` are the campaign's sequence rules (``sequence_rules.SequenceRules``), stored on the task;
    ``threaded``: the email is sent as a reply in the thread of the campaign's earlier steps
    (In-Reply-To and References, ``email_headers``). Follow-ups are threaded unless the campaign says
    otherwise; the first step never is (``threaded`` is false for step 1, whatever was given)."""

    campaign_id: str
    step: int
    send_at: datetime
    timezone: str
    message: EmailMessage
    max_per_minute: int | None = None
    rules: SequenceRules | None = None
    threaded: bool = True

    def __post_init__(self) -> None:
        if self.send_at.tzinfo is None:
            raise ValueError("send_at must be timezone-aware")
        if self.step < 1:
            raise ValueError(f"step must be >= 1, got {self.step}")
        if self.step == 1 and self.threaded:
            object.__setattr__(self, "threaded", False)

    @property
    def task_id(self) -> str:
        return email_task_id(self.campaign_id, self.message.to, self.step)

    @property
    def schedule_name(self) -> str:
        return email_schedule_name(self.task_id)

    @property
    def reply_handle(self) -> str | None:
        """The task's reply handle if its Reply-To is its reply address (``reply+<handle>.<mac>@...``,
        ``reply_token``), else ``None``: only such tasks are written with ``reply_handle``."""
        handle = email_reply_handle(self.task_id)
        local = self.message.reply_to.rpartition("@")[0].lower()
        return handle if local.startswith(f"{REPLY_LOCAL_PREFIX}{handle}.") else None


def email_task_id(campaign_id: str, recipient: str, step: int) -> str:
    """The one task id of a campaign step to a recipient (address compared case-insensitively)."""
    key = f"{campaign_id}\n{recipient.strip().lower()}\n{step}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:32]
    return f"email#{campaign_id}#{digest}"


def email_schedule_name(task_id: str) -> str:
    """The one EventBridge Scheduler schedule name of an email task (46 characters of the allowed 64)."""
    return "email-" + hashlib.sha256(task_id.encode()).hexdigest()[:40]


# The local part of every reply address starts with this (``reply+<handle>.<mac>``, ``reply_token``).
REPLY_LOCAL_PREFIX = "reply+"
# The handle is the first 10 bytes of a SHA-256: 16 characters of base32, 80 bits.
REPLY_HANDLE_BYTES = 10


def email_reply_handle(task_id: str) -> str:
    """The handle of the task's reply address: 16 lowercase base32 characters (no padding) of the first
    10 bytes of SHA-256(``reply-handle\\n`` + task id). It names the task (the tasks table's
    ``reply-handles`` index finds it) and proves nothing: the MAC beside it does."""
    digest = hashlib.sha256(b"reply-handle\n" + task_id.encode()).digest()[:REPLY_HANDLE_BYTES]
    return base64.b32encode(digest).decode("ascii").lower()
