"""CKV_OUT_009: EventBridge rule targets other than Lambda have a dead-letter queue.

EventBridge retries a delivery that fails (a queue policy that refuses it, a missing topic, a
throttled API destination) for 24 hours and up to 185 times by default, then drops the event
(https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-retry-policy.html). With a
dead_letter_config the event is kept in an SQS queue instead, where an alarm can see it
(https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html; CKV_OUT_007 asks for
the alarm). A target that invokes Lambda is CKV_OUT_005's, which asks for the same and more; every
other target (a queue, a topic, a stream, an API destination, another bus) is judged here. A target
whose ARN cannot be told apart is judged too, and fails closed.
"""

from __future__ import annotations

from typing import Any

from outreach_policy_aws import functions_named, names_lambda, target_branch_kinds
from outreach_policy_check import OutreachCheck
from outreach_policy_values import Problems, block, require_reference, value


class EventTargetDeadLetterQueue(OutreachCheck):
    inputs = ("arn", "dead_letter_config.arn")

    def __init__(self) -> None:
        super().__init__(
            name=(
                "EventBridge rule targets that do not invoke Lambda have a dead_letter_config naming an "
                "SQS queue, so an event whose delivery retries are spent is kept, not dropped"
            ),
            id="CKV_OUT_009",
            supported_resources=("aws_cloudwatch_event_target",),
        )

    def evaluate(self, conf: dict[str, Any], problems: Problems) -> bool:
        if not self._judged(conf, problems):
            return False
        if block(conf, "dead_letter_config") is None:
            problems.add(
                "dead_letter_config is missing: an event EventBridge cannot deliver is dropped once its "
                "retries are spent"
            )
        else:
            require_reference(conf, ("dead_letter_config", "arn"), problems, "no dead-letter queue")
        return True

    def _judged(self, conf: dict[str, Any], problems: Problems) -> bool:
        """Whether the target is one this rule judges: anything but a Lambda function or alias."""
        branches = target_branch_kinds(self.view, self.node, self.entry, "arn")
        if branches is not None:
            judged = False
            for branch, kind in branches:
                if kind is None:
                    problems.unresolved("arn", branch)
                judged = judged or kind != "lambda"
            return judged
        raw_arn = value(conf, "arn")
        view, idx = self.view, self.node
        if view is not None and idx is not None and functions_named(view, idx, "arn", raw_arn):
            return False
        # An ARN that names nothing this can tell is recorded as unresolved and judged (fails closed).
        return not names_lambda(raw_arn, problems)


check = EventTargetDeadLetterQueue()
