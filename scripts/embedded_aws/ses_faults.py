"""SES fault injection: the refusals and lost answers a SendEmail meets on AWS and never on moto.

moto's SES v2 accepts every SendEmail, at any rate and in any number, and always answers. Like
``faults.inject`` for SQS, S3 and DynamoDB, ``inject_ses()`` wraps the embedded SES v2 SendEmail
(``ses_v2``) for the duration of a block, and every rule counts how often it fired:

- ``throttle(recipients, times)``: the first ``times`` SendEmail calls to each recipient answer
  ``TooManyRequestsException`` (HTTP 429), as SES does above the account's sending rate
  (https://docs.aws.amazon.com/ses/latest/dg/manage-sending-quotas-errors.html); nothing is sent.
- ``die_after_send(recipients, clock, hold_seconds)``: the email is accepted and recorded, then the
  call holds its connection, unanswered, for ``hold_seconds`` of virtual time (more than the caller's
  function timeout), so the runtime ends that invocation (``Sandbox.Timedout``) after SES took the
  email and before the worker could record it. The clock is not moved: every other invocation in
  flight keeps its own deadline.
- ``timeout_after_send(recipients, times=1)``: the first ``times`` SendEmail calls to each recipient
  are accepted and recorded (``ses_v2.sent_emails``), and then the caller hears nothing back. In-process
  (moto answering from botocore's ``before-send`` hook, as under ``mock_aws``) the handler raises
  ``botocore.exceptions.ReadTimeoutError``, which botocore hands to the caller as it does a real read
  timeout. Through the embedded server (``server.embedded_aws``) the server shuts the request's
  connection down instead of answering, and botocore raises ``ConnectionClosedError``. Both are
  ``HTTPClientError``s: the request went out and no answer came. SES took the email once whatever the
  caller sees; a client that retries transient errors
  (https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html) sends it again.
- ``throttle_at_account_rate()``: SendEmail is held to the account's send quota (``ses_account``:
  ``MaxSendRate`` and ``Max24HourSend``, set with ``set_ses_account``) on the emulator's clock. While
  the recipients accepted in the last second (a sliding window) reach ``MaxSendRate``, a call answers
  ``TooManyRequestsException`` "Maximum sending rate exceeded." (HTTP 429); while those of the last 24
  hours reach ``Max24HourSend`` (-1: no limit), ``LimitExceededException`` "Daily message quota
  exceeded." (HTTP 400). Nothing is sent for a refused call, and SES drops it
  (https://docs.aws.amazon.com/ses/latest/dg/manage-sending-quotas-errors.html). That page files both
  messages under a ``ThrottlingException``, which SES v2's SendEmail does not have: its errors
  (https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_SendEmail.html, and botocore's sesv2
  model) are ``TooManyRequestsException`` (429) for too many requests and ``LimitExceededException``
  (400), under which v2 callers meet the daily message. Quotas count recipients, not calls
  (https://docs.aws.amazon.com/ses/latest/dg/quotas.html); here a call goes through while any of the
  quota is left.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from embedded_aws.clock import VirtualClock


@dataclass
class PerRecipientRule:
    """A rule that fires on the first ``times`` SendEmail calls to each of ``recipients``."""

    recipients: frozenset[str]
    times: int
    per_recipient: Counter[str] = field(default_factory=Counter)

    @property
    def fired(self) -> int:
        return sum(self.per_recipient.values())

    def take(self, wanted: set[str]) -> bool:
        """Fire for one of ``wanted`` (lower-cased) if any has firings left; the caller holds the lock."""
        for recipient in sorted(wanted & self.recipients):
            if self.per_recipient[recipient] < self.times:
                self.per_recipient[recipient] += 1
                return True
        return False


class SesThrottle(PerRecipientRule):
    """``throttle``: the call answers TooManyRequestsException and sends nothing."""


class TimeoutAfterSend(PerRecipientRule):
    """``timeout_after_send``: the email is sent and recorded, then the answer is lost."""


@dataclass
class AccountRateThrottle:
    """Counts the calls it refused: above the sending rate, and beyond the 24-hour quota."""

    rate_refused: int = 0
    daily_refused: int = 0

    @property
    def fired(self) -> int:
        return self.rate_refused + self.daily_refused


@dataclass
class DeathAfterSend:
    recipients: frozenset[str]
    clock: VirtualClock
    hold_seconds: float
    fired: int = 0


class SesFaults:
    """The rules active in an ``inject_ses()`` block."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.throttles: list[SesThrottle] = []
        self.deaths: list[DeathAfterSend] = []
        self.timeouts: list[TimeoutAfterSend] = []
        self.account_rate: AccountRateThrottle | None = None
        # Held from the quota check to the send's record, so concurrent calls see each other's sends.
        self.quota_lock = threading.Lock()

    def throttle(self, recipients: set[str] | frozenset[str], times: int) -> SesThrottle:
        rule = SesThrottle(frozenset(r.lower() for r in recipients), times)
        with self._lock:
            self.throttles.append(rule)
        return rule

    def die_after_send(
        self, recipients: set[str] | frozenset[str], clock: VirtualClock, hold_seconds: float
    ) -> DeathAfterSend:
        rule = DeathAfterSend(frozenset(r.lower() for r in recipients), clock, hold_seconds)
        with self._lock:
            self.deaths.append(rule)
        return rule

    def timeout_after_send(self, recipients: set[str] | frozenset[str], times: int = 1) -> TimeoutAfterSend:
        rule = TimeoutAfterSend(frozenset(r.lower() for r in recipients), times)
        with self._lock:
            self.timeouts.append(rule)
        return rule

    def throttle_at_account_rate(self) -> AccountRateThrottle:
        """Hold SendEmail to the account's quota (one rule per block: asking again returns it)."""
        with self._lock:
            if self.account_rate is None:
                self.account_rate = AccountRateThrottle()
            return self.account_rate

    def throttled(self, recipients: list[str]) -> bool:
        wanted = {r.lower() for r in recipients}
        with self._lock:
            return any(rule.take(wanted) for rule in self.throttles)

    def death(self, recipients: list[str]) -> DeathAfterSend | None:
        wanted = {r.lower() for r in recipients}
        with self._lock:
            for rule in self.deaths:
                if wanted & rule.recipients and rule.fired == 0:
                    rule.fired += 1
                    return rule
        return None

    def timed_out(self, recipients: list[str]) -> bool:
        wanted = {r.lower() for r in recipients}
        with self._lock:
            return any(rule.take(wanted) for rule in self.timeouts)

    def over_quota(self, backend: Any) -> Exception | None:
        """The error for a SendEmail now, if the ``throttle_at_account_rate`` rule refuses it (counted)."""
        rule = self.account_rate
        if rule is None:
            return None
        from embedded_aws.ses_account import (
            DAY_SECONDS,
            emulator_now,
            recipients_sent,
            send_quota,
        )

        rate, daily = send_quota(backend)
        now = emulator_now()
        if daily >= 0 and recipients_sent(backend, DAY_SECONDS, now) >= daily:
            with self._lock:
                rule.daily_refused += 1
            return _error("LimitExceededException", "Daily message quota exceeded.", 400)
        if recipients_sent(backend, 1.0, now) >= rate:
            with self._lock:
                rule.rate_refused += 1
            return _error("TooManyRequestsException", "Maximum sending rate exceeded.", 429)
        return None


def _error(code: str, message: str, status: int) -> Exception:
    from moto.core.exceptions import JsonRESTError

    error = JsonRESTError(code, message)
    error.code = status
    return error


def _drop_connection(response: Any) -> None:
    """Raise a read timeout in-process; close the connection when served over HTTP."""
    import socket

    from botocore.exceptions import ReadTimeoutError

    request = response.normalized_request
    connection = request.environ.get("werkzeug.socket") if request.from_wsgi_server else None
    if connection is None:
        raise ReadTimeoutError(endpoint_url=response.uri)
    # The answer werkzeug then writes fails with a broken pipe, which it takes for a dropped client.
    connection.shutdown(socket.SHUT_RDWR)


_active: SesFaults | None = None
_install_lock = threading.Lock()


def _wrap(original: Callable[..., Any]) -> Callable[..., Any]:
    def send_email(self: Any) -> Any:
        import json

        faults = _active
        if faults is None:
            return original(self)
        recipients = list(json.loads(self.body).get("Destination", {}).get("ToAddresses", []))
        if faults.throttled(recipients):
            raise _error("TooManyRequestsException", "Maximum sending rate exceeded.", 429)
        held = faults.quota_lock if faults.account_rate is not None else contextlib.nullcontext()
        with held:
            refused = faults.over_quota(self.sesv2_backend)
            if refused is not None:
                raise refused
            result = original(self)
        if faults.timed_out(recipients):
            _drop_connection(self)
            return result
        death = faults.death(recipients)
        if death is not None:
            death.clock.sleep(death.hold_seconds)
        return result

    return send_email


@contextlib.contextmanager
def inject_ses() -> Iterator[SesFaults]:
    """Apply the rules added to the yielded ``SesFaults`` to every SendEmail until the block ends."""
    global _active
    from moto.sesv2.responses import SESV2Response

    from embedded_aws.ses_v2 import support_ses_v2

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
