"""SES fault injection into the in-process emulator: throttled sends, and a worker that dies after a send.

Like ``faults.inject`` for SQS, S3 and DynamoDB, ``inject_ses()`` wraps the embedded SES v2 SendEmail
(``ses_v2``) for the duration of a block, and every rule counts how often it fired:

- ``throttle(recipients, times)``: the first ``times`` SendEmail calls to each recipient answer
  ``TooManyRequestsException`` (HTTP 429), as SES does above the account's sending rate
  (https://docs.aws.amazon.com/ses/latest/dg/manage-sending-quotas-errors.html); nothing is sent.
- ``die_after_send(recipients, clock, jump_seconds)``: the email is accepted and recorded, then the
  call holds its connection while the virtual clock jumps past the caller's function timeout, so the
  runtime ends the invocation (``Sandbox.Timedout``) after SES took the email and before the worker
  could record it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from outreach_tools.localaws.clock import VirtualClock


@dataclass
class SesThrottle:
    recipients: frozenset[str]
    times: int
    per_recipient: Counter[str] = field(default_factory=Counter)

    @property
    def fired(self) -> int:
        return sum(self.per_recipient.values())


@dataclass
class DeathAfterSend:
    recipients: frozenset[str]
    clock: VirtualClock
    jump_seconds: float
    hold_real_seconds: float = 0.5
    fired: int = 0


class SesFaults:
    """The rules active in an ``inject_ses()`` block."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.throttles: list[SesThrottle] = []
        self.deaths: list[DeathAfterSend] = []

    def throttle(self, recipients: set[str] | frozenset[str], times: int) -> SesThrottle:
        rule = SesThrottle(frozenset(r.lower() for r in recipients), times)
        with self._lock:
            self.throttles.append(rule)
        return rule

    def die_after_send(
        self, recipients: set[str] | frozenset[str], clock: VirtualClock, jump_seconds: float
    ) -> DeathAfterSend:
        rule = DeathAfterSend(frozenset(r.lower() for r in recipients), clock, jump_seconds)
        with self._lock:
            self.deaths.append(rule)
        return rule

    def throttled(self, recipients: list[str]) -> bool:
        wanted = {r.lower() for r in recipients}
        with self._lock:
            for rule in self.throttles:
                for recipient in sorted(wanted & rule.recipients):
                    if rule.per_recipient[recipient] < rule.times:
                        rule.per_recipient[recipient] += 1
                        return True
        return False

    def death(self, recipients: list[str]) -> DeathAfterSend | None:
        wanted = {r.lower() for r in recipients}
        with self._lock:
            for rule in self.deaths:
                if wanted & rule.recipients and rule.fired == 0:
                    rule.fired += 1
                    return rule
        return None


_active: SesFaults | None = None
_install_lock = threading.Lock()


def _wrap(original: Callable[..., Any]) -> Callable[..., Any]:
    def send_email(self: Any) -> Any:
        import json

        from moto.core.exceptions import JsonRESTError

        faults = _active
        if faults is None:
            return original(self)
        recipients = list(json.loads(self.body).get("Destination", {}).get("ToAddresses", []))
        if faults.throttled(recipients):
            error = JsonRESTError("TooManyRequestsException", "Maximum sending rate exceeded.")
            error.code = 429
            raise error
        result = original(self)
        death = faults.death(recipients)
        if death is not None:
            death.clock.advance(death.jump_seconds)
            time.sleep(death.hold_real_seconds)
        return result

    return send_email


@contextlib.contextmanager
def inject_ses() -> Iterator[SesFaults]:
    """Apply the rules added to the yielded ``SesFaults`` to every SendEmail until the block ends."""
    global _active
    from moto.sesv2.responses import SESV2Response

    from outreach_tools.localaws.ses_v2 import support_ses_v2

    support_ses_v2()
    with _install_lock:
        if _active is not None:
            raise RuntimeError("SES fault injection is already active")
        original = SESV2Response.__dict__["send_email"]
        SESV2Response.send_email = _wrap(original)  # type: ignore[method-assign]
        faults = SesFaults()
        _active = faults
    try:
        yield faults
    finally:
        with _install_lock:
            _active = None
            SESV2Response.send_email = original  # type: ignore[method-assign]
