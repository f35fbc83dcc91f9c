"""What happens to each email after the embedded SES accepted it: delivered, bounced, complained, late.

On AWS a mailbox decides; here a test does, per recipient, for every SendEmail the embedded SES v2
accepts from then on (``ses_event_publishing`` publishes the events on the emulator's clock)::

    from embedded_aws.ses_outcomes import ses_outcomes

    with ses_outcomes(hard_bounce={"gone@example.org"}, soft_bounce={"full@example.org"},
                      complain={"angry@example.org"}, delay={"slow@example.org": 3600},
                      reject={"virus@example.org"}, duplicate_events=True):
        ...  # sends made here meet these outcomes

or ``set_ses_outcomes(SesOutcomes.of(...))`` and ``set_ses_outcomes(None)`` around a longer run. Every
other recipient is delivered. Outcomes, in this order of precedence (addresses compared case-blind):

- ``reject``: the message is rejected (``Reject``, reason ``Bad content``: SES found a virus) and
  nothing is delivered to any of its recipients;
- an address on the account's suppression list, when the configuration set's suppression options
  name a reason: a ``Permanent``/``OnAccountSuppressionList`` bounce, nothing delivered;
- ``hard_bounce``: a ``Permanent``/``General`` bounce ``delivery_seconds`` after the send;
- ``soft_bounce``: a ``Transient``/``General`` bounce ``soft_bounce_seconds`` after the send (SES
  publishes a soft bounce only once it stopped retrying);
- ``delay``: ``{address: seconds}``, a ``DeliveryDelay`` after ``delivery_seconds``, then the delivery
  ``seconds`` after the send;
- ``complain`` (with or without a delay): the delivery, then a complaint ``complaint_seconds`` later;
- anyone else: the delivery ``delivery_seconds`` after the send.

Every email also has its ``Send`` event at once. ``duplicate_events`` publishes every event twice
with the same event ``id``, as EventBridge's at-least-once delivery may. The meaning of each event:
https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_EventDestination.html.

The outcomes are the process's: the one running moto, in-process (``mock_aws``) or as the embedded
server (``server.embedded_aws``, a thread of the test process). Functions run in worker processes and
send through that server, so their sends meet the outcomes the test set. The outcome of an email is
fixed when SES accepts it; changing the outcomes later does not change events already planned.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

DELIVERY_SECONDS = 2.0
COMPLAINT_SECONDS = 30.0
SOFT_BOUNCE_SECONDS = 60.0


def _addresses(values: Iterable[str]) -> frozenset[str]:
    return frozenset(value.strip().lower() for value in values)


@dataclass(frozen=True)
class SesOutcomes:
    """The outcome rules of one run; build with ``SesOutcomes.of``."""

    hard_bounce: frozenset[str] = frozenset()
    soft_bounce: frozenset[str] = frozenset()
    complain: frozenset[str] = frozenset()
    reject: frozenset[str] = frozenset()
    delay: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    duplicate_events: bool = False
    delivery_seconds: float = DELIVERY_SECONDS
    complaint_seconds: float = COMPLAINT_SECONDS
    soft_bounce_seconds: float = SOFT_BOUNCE_SECONDS

    @classmethod
    def of(
        cls,
        *,
        hard_bounce: Iterable[str] = (),
        soft_bounce: Iterable[str] = (),
        complain: Iterable[str] = (),
        reject: Iterable[str] = (),
        delay: Mapping[str, float] | None = None,
        duplicate_events: bool = False,
        delivery_seconds: float = DELIVERY_SECONDS,
        complaint_seconds: float = COMPLAINT_SECONDS,
        soft_bounce_seconds: float = SOFT_BOUNCE_SECONDS,
    ) -> SesOutcomes:
        delays = {address.strip().lower(): float(seconds) for address, seconds in (delay or {}).items()}
        if (
            any(seconds < 0 for seconds in delays.values())
            or min(delivery_seconds, complaint_seconds, soft_bounce_seconds) < 0
        ):
            raise ValueError("outcome delays are virtual seconds, never negative")
        return cls(
            _addresses(hard_bounce),
            _addresses(soft_bounce),
            _addresses(complain),
            _addresses(reject),
            MappingProxyType(delays),
            duplicate_events,
            float(delivery_seconds),
            float(complaint_seconds),
            float(soft_bounce_seconds),
        )

    @property
    def copies(self) -> int:
        """How many times each event is published."""
        return 2 if self.duplicate_events else 1


_DEFAULT = SesOutcomes()
_active = _DEFAULT
_lock = threading.Lock()


def active_outcomes() -> SesOutcomes:
    """The outcome rules a SendEmail meets now (everyone delivered when none are set)."""
    return _active


def set_ses_outcomes(outcomes: SesOutcomes | None) -> None:
    """Apply ``outcomes`` to every later SendEmail; None: everyone is delivered again."""
    global _active
    with _lock:
        _active = outcomes or _DEFAULT


@contextlib.contextmanager
def ses_outcomes(
    *,
    hard_bounce: Iterable[str] = (),
    soft_bounce: Iterable[str] = (),
    complain: Iterable[str] = (),
    reject: Iterable[str] = (),
    delay: Mapping[str, float] | None = None,
    duplicate_events: bool = False,
    delivery_seconds: float = DELIVERY_SECONDS,
    complaint_seconds: float = COMPLAINT_SECONDS,
    soft_bounce_seconds: float = SOFT_BOUNCE_SECONDS,
) -> Iterator[SesOutcomes]:
    """Apply the outcomes to the sends made inside the block; the previous ones come back after it."""
    outcomes = SesOutcomes.of(
        hard_bounce=hard_bounce,
        soft_bounce=soft_bounce,
        complain=complain,
        reject=reject,
        delay=delay,
        duplicate_events=duplicate_events,
        delivery_seconds=delivery_seconds,
        complaint_seconds=complaint_seconds,
        soft_bounce_seconds=soft_bounce_seconds,
    )
    previous = active_outcomes()
    set_ses_outcomes(outcomes)
    try:
        yield outcomes
    finally:
        set_ses_outcomes(previous)
