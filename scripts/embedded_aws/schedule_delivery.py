"""Handing a rule's or schedule's event to Lambda: refusals, the source's retry policy, dead-letter events.

Only a failure of the hand-over is handled here: a rule's missing function or permission goes to the
target's DeadLetterConfig queue at once
(https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html); a schedule's refused
delivery (function missing, execution role without lambda:InvokeFunction, Input not JSON) is retried
with its RetryPolicy, then sent to its DeadLetterConfig queue as a dead-letter event
(https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html). A function
error after the hand-over is the event queue's (``async_invoke``) to retry.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from embedded_aws.async_invoke import AsyncInvoker
from embedded_aws.base import Journal, SourceStats, client, send_to_queue
from embedded_aws.errors import FunctionNotFoundError
from embedded_aws.iam_policies import arn_like, documents_allow, role_policy_documents


@dataclass
class Delivery:
    """One hand-over of an event to Lambda, with the source's retry policy for delivery failures.

    A rule's event is fixed; a schedule's is its target's ``Input`` rendered again for every attempt,
    with the context attributes of that attempt.
    """

    source_arn: str
    target: dict[str, Any]
    event: Any
    first_attempt: float
    schedule: dict[str, Any] | None = None
    scheduled_time: float = 0.0
    attempts: int = 0
    due: float = 0.0


def render_schedule_input(
    template: str | None, schedule_arn: str, scheduled_time: float, attempt: int
) -> str:
    """The target ``Input`` with Scheduler's context attributes substituted (``{}`` when it has none).

    https://docs.aws.amazon.com/scheduler/latest/UserGuide/managing-schedule-context-attributes.html
    """
    if not template:
        return "{}"
    values = {
        "<aws.scheduler.schedule-arn>": schedule_arn,
        "<aws.scheduler.scheduled-time>": datetime.fromtimestamp(scheduled_time, tz=UTC).strftime(
            "%Y-%m-%dT%H:%M:%SZ"
        ),
        "<aws.scheduler.execution-id>": uuid.uuid4().hex[:16],
        "<aws.scheduler.attempt-number>": str(attempt),
    }
    for placeholder, value in values.items():
        template = template.replace(placeholder, value)
    return template


class TargetDelivery:
    """Delivers events to their Lambda targets, retrying refused schedule deliveries as Scheduler does."""

    def __init__(self, invoker: AsyncInvoker, endpoint: str, region: str, journal: Journal) -> None:
        self.invoker = invoker
        self.endpoint = endpoint
        self.journal = journal
        self.stats: dict[str, SourceStats] = {}
        self.retrying: list[Delivery] = []
        self._lambda = client("lambda", endpoint, region)
        self._iam = client("iam", endpoint, region)

    def _stats(self, source: str) -> SourceStats:
        return self.stats.setdefault(source, SourceStats())

    def deliver(self, delivery: Delivery, now: float) -> None:
        delivery.attempts += 1
        stats = self._stats(delivery.source_arn)
        body, event, reason = self._payload(delivery)
        if reason is None:
            reason = self._refusal(delivery)
        if reason is None:
            self.invoker.submit(delivery.target["Arn"], event)
            stats.add(invocations=1)
            self.journal.record(
                "schedule.delivered",
                source=delivery.source_arn,
                target=delivery.target["Arn"],
                scheduled_time=delivery.scheduled_time or delivery.first_attempt,
                at=now,
            )
            return
        stats.add(delivery_failures=1)
        if delivery.schedule is None:
            # A missing target or permission is not retried: its event goes to the DLQ at once (eb-rule-dlq).
            self._dead_letter(delivery, body, reason, "MaximumRetryAttempts")
            return
        policy = delivery.target.get("RetryPolicy") or {}
        max_attempts = int(policy.get("MaximumRetryAttempts", 185))
        max_age = int(policy.get("MaximumEventAgeInSeconds", 86_400))
        next_due = now + min(2**delivery.attempts, 300)
        if delivery.attempts - 1 >= max_attempts:
            self._dead_letter(delivery, body, reason, "MaximumRetryAttempts")
        elif next_due - delivery.first_attempt > max_age:
            self._dead_letter(delivery, body, reason, "MaximumEventAgeInSeconds")
        else:
            delivery.due = next_due
            self.retrying.append(delivery)

    def _payload(self, delivery: Delivery) -> tuple[str, Any, tuple[str, str] | None]:
        """(body, event, refusal): a schedule's Input rendered for this attempt must be JSON for Lambda."""
        if delivery.schedule is None:
            return json.dumps(delivery.event), delivery.event, None
        body = render_schedule_input(
            delivery.event, delivery.source_arn, delivery.scheduled_time, delivery.attempts
        )
        try:
            return body, json.loads(body), None
        except json.JSONDecodeError:
            return body, None, ("InvalidRequestContentException", "Could not parse request body into json")

    def _dead_letter(self, delivery: Delivery, body: str, reason: tuple[str, str], condition: str) -> None:
        """Send the undelivered event to the target's DLQ with the attributes AWS documents for the source.

        Rules: eb-rule-dlq.html. Schedules: configuring-schedule-dlq.html ("dead-letter event").
        """
        self.journal.record(
            "schedule.delivery_failed", source=delivery.source_arn, reason=reason, condition=condition
        )
        dead_letter = (delivery.target.get("DeadLetterConfig") or {}).get("Arn")
        if not dead_letter:
            return
        attributes = {
            "ERROR_CODE": reason[0],
            "ERROR_MESSAGE": reason[1],
            "EXHAUSTED_RETRY_CONDITION": condition,
            "RETRY_ATTEMPTS": str(delivery.attempts - 1),
            "TARGET_ARN": delivery.target["Arn"],
        }
        if delivery.schedule is None:
            attributes["RULE_ARN"] = delivery.source_arn
        else:
            attributes.update(
                {
                    "X-Amz-Scheduler-Attempt": str(delivery.attempts),
                    "X-Amz-Scheduler-Group": delivery.schedule["GroupName"],
                    "X-Amz-Scheduler-Schedule": delivery.schedule["Name"],
                    "X-Amz-Scheduler-Schedule-Arn": delivery.source_arn,
                }
            )
        send_to_queue(self.endpoint, dead_letter, body, attributes)

    def retry_due(self, now: float) -> None:
        due = [d for d in self.retrying if d.due <= now]
        self.retrying = [d for d in self.retrying if d.due > now]
        for delivery in due:
            self.deliver(delivery, now)

    def _refusal(self, delivery: Delivery) -> tuple[str, str] | None:
        """Why Lambda would refuse the hand-over, or None.

        A rule needs a resource-based permission for ``events.amazonaws.com``
        (eb-use-resource-based.html); a schedule needs an execution role that allows
        ``lambda:InvokeFunction`` on the function (scheduler setting-up.html, "Set up the execution role").
        """
        function = delivery.target["Arn"]
        try:
            self.invoker.runtime.spec(function, fresh=True)
        except FunctionNotFoundError:
            return ("ResourceNotFoundException", f"Function not found: {function}")
        if delivery.schedule is not None:
            return self._role_refusal(delivery.target.get("RoleArn", ""), function)
        try:
            policy = json.loads(self._lambda.get_policy(FunctionName=function)["Policy"])
        except self._lambda.exceptions.ResourceNotFoundException:
            return ("AccessDeniedException", "no resource-based policy allows events.amazonaws.com")
        for statement in policy.get("Statement", []):
            principal = statement.get("Principal", {})
            service = principal.get("Service") if isinstance(principal, dict) else principal
            if service == "events.amazonaws.com" and self._source_arn_allows(statement, delivery.source_arn):
                return None
        return ("AccessDeniedException", "no resource-based policy allows this rule to invoke the function")

    @staticmethod
    def _source_arn_allows(statement: dict[str, Any], source_arn: str) -> bool:
        """Whether the statement's ``AWS:SourceArn`` condition (ArnLike or ArnEquals) admits the rule."""
        for operator, conditions in (statement.get("Condition") or {}).items():
            for key, value in conditions.items():
                if key.lower() != "aws:sourcearn":
                    continue
                patterns = value if isinstance(value, list) else [value]
                if operator in ("ArnLike", "StringLike"):
                    admitted = any(arn_like(p, source_arn) for p in patterns)
                else:
                    admitted = source_arn in patterns
                if not admitted:
                    return False
        return True

    def _role_refusal(self, role_arn: str, function: str) -> tuple[str, str] | None:
        documents = role_policy_documents(self._iam, role_arn) if role_arn else None
        if documents is None:
            return ("AccessDeniedException", f"execution role not found: {role_arn}")
        if documents_allow(documents, "lambda:InvokeFunction", function):
            return None
        return (
            "AccessDeniedException",
            f"{role_arn} is not authorized to perform lambda:InvokeFunction on {function}",
        )
