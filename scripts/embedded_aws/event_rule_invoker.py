"""Lambda targets of event-pattern rules: the invocations ``event_bus`` keeps, handed to Lambda's event queue.

A rule invokes its Lambda target asynchronously
(https://docs.aws.amazon.com/lambda/latest/dg/invocation-async.html). ``event_bus`` runs inside the
emulator, where PutEvents (or SES event publishing) happens, and only keeps each invocation; this
runner, part of ``LocalCloud`` like the schedule runner, takes them every tick and delivers them with
the schedules' ``TargetDelivery``: the function must exist and its resource-based policy must admit
``events.amazonaws.com`` for the rule (eb-use-resource-based.html), else the event goes to the
target's dead-letter queue at once (eb-rule-dlq.html). Once accepted, a function error is the event
queue's (``async_invoke``) to retry. The emulator and this runner share one process (the embedded
server is a thread of it), so the hand-over is an in-process list, as ``ses_v2.sent_emails`` is.
"""

from __future__ import annotations

import threading

from embedded_aws.async_invoke import AsyncInvoker
from embedded_aws.base import Journal, SourceStats
from embedded_aws.clock import VirtualClock
from embedded_aws.event_bus import take_rule_invocations
from embedded_aws.schedule_delivery import Delivery, TargetDelivery


class EventRuleInvoker:
    """Delivers the Lambda invocations of event-pattern rules to the function's event queue."""

    def __init__(
        self,
        invoker: AsyncInvoker,
        clock: VirtualClock,
        endpoint: str,
        *,
        journal: Journal | None = None,
        region: str = "us-east-1",
        account_id: str | None = None,
        tick_real_seconds: float = 0.02,
    ) -> None:
        self.clock = clock
        self.region = region
        self.account_id = account_id
        self.journal = journal or Journal()
        self._targets = TargetDelivery(invoker, endpoint, region, self.journal)
        self.stats: dict[str, SourceStats] = self._targets.stats
        self._tick = tick_real_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="event-rules", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.tick()
            except Exception as exc:  # keep delivering later invocations; the error is on record
                self.journal.record("event_rule.runner_error", error=repr(exc))
            self._stop.wait(self._tick)

    def tick(self) -> None:
        """Deliver every invocation the rules made since the last tick."""
        for invocation in take_rule_invocations(self.region, self.account_id):
            now = self.clock.now()
            delivery = Delivery(invocation.rule_arn, invocation.target, invocation.event, now)
            try:
                self._targets.deliver(delivery, now)
            except Exception as exc:  # one invocation's error never stops the others; it is on record
                self.journal.record("event_rule.delivery_error", source=invocation.rule_arn, error=repr(exc))
