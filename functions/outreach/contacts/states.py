"""What the ledger knows of a contact: its state (ranked, the highest wins), who said so, and a stop.

``ok`` 0, ``blocked`` 1, ``bounced`` 2, ``unsubscribed`` 3, ``complained`` 4: any rank above 0 stops every
send to the address (a ``domain#`` record, to every address of the domain). Writes only ever raise the
rank (``writes``); only the operator's ``unblock`` lowers ``blocked`` or ``bounced`` back to ``ok``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from outreach.errors import MalformedFieldError

WHY_CHARS = 500


class State(StrEnum):
    OK = "ok"
    BLOCKED = "blocked"
    BOUNCED = "bounced"
    UNSUBSCRIBED = "unsubscribed"
    COMPLAINED = "complained"

    @property
    def rank(self) -> int:
        """The state's rank: a write moves a record only to a higher one."""
        return _RANKS[self]

    @property
    def stops(self) -> bool:
        """Whether the state stops every send (every state but ``ok``)."""
        return self.rank > 0

    @property
    def operator_may_lift(self) -> bool:
        """Whether the operator's ``unblock`` may lower it to ``ok`` (never an opt-out or a complaint)."""
        return self in {State.BLOCKED, State.BOUNCED}


_RANKS = {State.OK: 0, State.BLOCKED: 1, State.BOUNCED: 2, State.UNSUBSCRIBED: 3, State.COMPLAINED: 4}


class Source(StrEnum):
    """Who set a state: an SES event, the recipient's one-click unsubscribe, the operator, an import."""

    SES = "ses"
    UNSUBSCRIBE = "unsubscribe"
    OPERATOR = "operator"
    IMPORT = "import"


def _text(item: Mapping[str, Any], name: str) -> str:
    value = item.get(name)
    if not isinstance(value, str) or not value:
        raise MalformedFieldError(name, "missing or not text")
    return value


@dataclass(frozen=True)
class Stop:
    """A record whose state stops sending: its key, state, since when (UTC ``YYYY-MM-DDTHH:MM:SSZ`` of the
    event that set it), why (human text), who said so, if known the campaign it came from, and when the
    ledger recorded it (``recorded_at``, the write's own time, same format: what a send is compared with)."""

    key: str
    state: State
    since: str
    why: str
    source: Source
    campaign_id: str | None = None
    recorded_at: str = ""

    @property
    def reason(self) -> str:
        """The failure reason of a task not sent for this stop (``contact_stopped: ...``)."""
        return f"contact_stopped: {self.state.value} since {self.since} ({self.why})"

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Stop | None:
        """The stop a stored record holds; ``None`` for an ``ok`` record (or one with no state yet).

        ``MalformedFieldError`` names the first field that is not what the writers store.
        """
        if "state" not in item and "state_rank" not in item:
            return None
        raw_state = _text(item, "state")
        try:
            state = State(raw_state)
        except ValueError as exc:
            raise MalformedFieldError("state", f"unknown state {raw_state[:40]!r}") from exc
        rank = item.get("state_rank")
        if rank != state.rank:
            raise MalformedFieldError("state_rank", f"{str(rank)[:40]!r} is not the rank of {state.value}")
        if not state.stops:
            return None
        raw_source = _text(item, "source")
        try:
            source = Source(raw_source)
        except ValueError as exc:
            raise MalformedFieldError("source", f"unknown source {raw_source[:40]!r}") from exc
        campaign = item.get("campaign_id")
        return cls(
            key=_text(item, "contact_key"),
            state=state,
            since=_text(item, "since"),
            why=str(item.get("why", ""))[:WHY_CHARS],
            source=source,
            campaign_id=campaign if isinstance(campaign, str) and campaign else None,
            recorded_at=str(item.get("recorded_at", "")),
        )
