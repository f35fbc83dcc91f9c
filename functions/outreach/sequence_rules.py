"""A campaign's sequence rules, stored on each of its email tasks: what a reply or an absence does.

The campaign file states them (``stop_rules``, docs/listening.md "Replies: the outbound half"); the
planner writes them, with the send window's days and hours and the owner mailbox, as the map ``rules``
on every email task, so the email worker and the inbound processor read them from the task they
already hold, never from a file:

- ``on_reply``: ``stop`` (default) cancels the follow-ups of a recipient who replied; ``continue``
  sends them anyway.
- ``reply_stops_other_campaigns`` (default true): a reply in any campaign stops this one's follow-ups.
- ``on_out_of_office``: ``postpone`` (default) moves the next step past the absence, inside the
  window (``send_days``, ``window_start``-``window_end``, local times in the task's ``timezone``);
  ``continue`` leaves the plan as it is.
- ``forward_auto_replies`` (default false): whether automatic replies are forwarded to ``owner`` too.
- ``owner``: the campaign owner's mailbox (the campaign file's ``reply_to``), where replies go.

Rows written before the rules existed carry none; their readers use ``SequenceRules()``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from outreach.email_task import is_one_address
from outreach.errors import MalformedFieldError

OnReply = Literal["stop", "continue"]
OnOutOfOffice = Literal["postpone", "continue"]
ON_REPLY: tuple[OnReply, ...] = ("stop", "continue")
ON_OUT_OF_OFFICE: tuple[OnOutOfOffice, ...] = ("postpone", "continue")
_HH_MM = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]")
# The names the stored map may hold; a reader ignores none silently (an unknown one is refused).
_FIELDS = frozenset(
    {
        "on_reply",
        "reply_stops_other_campaigns",
        "on_out_of_office",
        "forward_auto_replies",
        "owner",
        "send_days",
        "window_start",
        "window_end",
    }
)


def _field(name: str) -> str:
    return f"rules.{name}"


def _shown(value: Any) -> str:
    return repr(str(value)[:40])


@dataclass(frozen=True)
class SequenceRules:
    """What a reply or an out-of-office does to a campaign's sequence (see the module docstring).

    Every field is checked when the rules are made, so a stored map that breaks one is refused by
    ``from_item`` with ``MalformedFieldError`` naming it (``rules.<field>``).
    """

    on_reply: OnReply = "stop"
    reply_stops_other_campaigns: bool = True
    on_out_of_office: OnOutOfOffice = "postpone"
    forward_auto_replies: bool = False
    owner: str = ""
    send_days: tuple[int, ...] = (0, 1, 2, 3, 4)
    window_start: str = "09:00"
    window_end: str = "17:00"

    def __post_init__(self) -> None:
        for name, allowed in (("on_reply", ON_REPLY), ("on_out_of_office", ON_OUT_OF_OFFICE)):
            value = getattr(self, name)
            if value not in allowed:
                choices = " or ".join(allowed)
                raise MalformedFieldError(_field(name), f"must be {choices}, got {_shown(value)}")
        for name in ("reply_stops_other_campaigns", "forward_auto_replies"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise MalformedFieldError(_field(name), f"must be true or false, got {_shown(value)}")
        if not isinstance(self.owner, str) or (self.owner and not is_one_address(self.owner)):
            raise MalformedFieldError(_field("owner"), "not exactly one ASCII e-mail address")
        days = self.send_days
        if (
            not isinstance(days, tuple)
            or not days
            or any(isinstance(day, bool) or not isinstance(day, int) or not 0 <= day <= 6 for day in days)
            or list(days) != sorted(set(days))
        ):
            raise MalformedFieldError(
                _field("send_days"), f"must be distinct weekdays 0-6 (Monday 0) in order, got {_shown(days)}"
            )
        for name in ("window_start", "window_end"):
            value = getattr(self, name)
            if not isinstance(value, str) or not _HH_MM.fullmatch(value):
                raise MalformedFieldError(_field(name), f"not a local time HH:MM: {_shown(value)}")
        if self.window_start >= self.window_end:
            raise MalformedFieldError(
                _field("window_end"), f"{self.window_end} is not after window_start {self.window_start}"
            )

    def to_item(self) -> dict[str, Any]:
        """The ``rules`` map stored on an email task (an empty ``owner`` left out)."""
        item: dict[str, Any] = {
            "on_reply": self.on_reply,
            "reply_stops_other_campaigns": self.reply_stops_other_campaigns,
            "on_out_of_office": self.on_out_of_office,
            "forward_auto_replies": self.forward_auto_replies,
            "send_days": list(self.send_days),
            "window_start": self.window_start,
            "window_end": self.window_end,
        }
        if self.owner:
            item["owner"] = self.owner
        return item

    @classmethod
    def from_item(cls, item: Any) -> SequenceRules:
        """The rules of a stored ``rules`` map (DynamoDB numbers as ``Decimal``); a name it leaves out
        takes its default. ``MalformedFieldError`` naming the field for anything ``to_item`` never
        writes: not a map, an unknown name, a value of the wrong kind."""
        if not isinstance(item, Mapping):
            raise MalformedFieldError("rules", f"not a map: {type(item).__name__}")
        unknown = sorted(str(name) for name in item if name not in _FIELDS)
        if unknown:
            raise MalformedFieldError("rules", f"unknown names {unknown[:5]}")
        values: dict[str, Any] = dict(item)
        if "send_days" in values:
            values["send_days"] = _weekdays(values["send_days"])
        return cls(**values)


def _weekdays(value: Any) -> tuple[int, ...]:
    """A stored list of weekday numbers as ints (DynamoDB gives ``Decimal``); anything else refused."""
    if not isinstance(value, list | tuple) or len(value) > 7:
        raise MalformedFieldError(_field("send_days"), f"not a list of weekdays: {_shown(value)}")
    days: list[int] = []
    for day in value:
        finite = not isinstance(day, Decimal) or day.is_finite()
        if isinstance(day, bool) or not isinstance(day, int | Decimal) or not finite or day != int(day):
            raise MalformedFieldError(_field("send_days"), f"not a weekday number: {_shown(day)}")
        days.append(int(day))
    return tuple(days)
