"""CKV_OUT_003: a queue that a Lambda function consumes redrives to a longer-lived dead-letter queue.

Without a redrive policy a message that keeps failing is received until its retention expires and
then vanishes. A standard queue's message keeps its original enqueue time when moved, so a DLQ whose
retention is not longer than the source's deletes it early (Amazon SQS Developer Guide, "Setting-up
dead-letter queue retention").
"""

from __future__ import annotations

from typing import Any

from outreach_policy_aws import QUEUE_TYPES, consuming_mappings, dead_letter_users
from outreach_policy_check import OutreachCheck
from outreach_policy_evaluation import effective, flag_unset_variables
from outreach_policy_graph import GraphView
from outreach_policy_values import MISSING, Problems, read_int, read_json_object, read_str, value

DEFAULT_RETENTION_SECONDS = 345_600  # SQS default MessageRetentionPeriod: 4 days


def retention(conf: Any, problems: Problems) -> int | None:
    """``message_retention_seconds`` with the SQS default; ``None`` when unresolved."""
    raw = value(conf, "message_retention_seconds")
    seconds = read_int(conf, ("message_retention_seconds",), problems)
    return DEFAULT_RETENTION_SECONDS if raw is MISSING or raw is None else seconds


REDRIVE_INPUTS = ("redrive_policy", "redrive_policy.deadLetterTargetArn", "redrive_policy.maxReceiveCount")


class ConsumedQueueRedrivesToLongerLivedDlq(OutreachCheck):
    inputs = (*REDRIVE_INPUTS, "message_retention_seconds")

    def __init__(self) -> None:
        super().__init__(
            name=(
                "SQS queues consumed by a Lambda event source mapping have a redrive_policy to a dead-letter "
                "queue whose message_retention_seconds exceeds the source queue's "
                "(a queue that is itself a DLQ is exempt)"
            ),
            id="CKV_OUT_003",
            supported_resources=("aws_sqs_queue",),
        )

    def evaluate(self, conf: dict[str, Any], problems: Problems) -> bool:
        graph = self.require_graph(problems)
        if graph is None:
            return True
        view, idx = graph
        if not consuming_mappings(view, idx):
            return False
        if dead_letter_users(view, idx):
            return True  # exempt: this queue is the dead-letter queue of another resource

        policy_owner = self._redrive_policy_owner(view, idx, conf)
        policy_conf = conf if policy_owner == idx else effective(view, policy_owner, REDRIVE_INPUTS)
        raw_policy = value(policy_conf, "redrive_policy")
        if raw_policy is MISSING or raw_policy in (None, "", {}):
            problems.add(
                "redrive_policy is not set (on the queue or in an aws_sqs_queue_redrive_policy): a message "
                "that keeps failing is received until its retention expires and is then lost"
            )
            return True
        policy = read_json_object(policy_conf, "redrive_policy", problems)
        if policy is None:
            return True

        target = read_str(policy, ("deadLetterTargetArn",), problems)
        if "deadLetterTargetArn" not in policy:
            problems.add("redrive_policy has no deadLetterTargetArn")
        receives = read_int(policy, ("maxReceiveCount",), problems)
        if "maxReceiveCount" not in policy:
            problems.add("redrive_policy has no maxReceiveCount")
        elif receives is not None and receives < 1:
            problems.add(f"redrive_policy.maxReceiveCount = {receives} must be at least 1")
        if target is None:
            return True

        dead_letter_queues = [
            n for n in view.resolve(policy_owner, "redrive_policy", target, QUEUE_TYPES) if n != idx
        ]
        if len(dead_letter_queues) != 1:
            problems.add(
                f"the dead-letter queue {target!r} is not an aws_sqs_queue declared in this configuration, "
                "so its retention cannot be compared with the source queue's"
            )
            return True
        dlq = dead_letter_queues[0]
        dlq_problems = problems.child(view.address(dlq))
        flag_unset_variables(view, idx, ("message_retention_seconds",), problems)
        flag_unset_variables(view, dlq, ("message_retention_seconds",), dlq_problems)
        source_retention = retention(conf, problems)
        dlq_retention = retention(effective(view, dlq, ("message_retention_seconds",)), dlq_problems)
        if source_retention is not None and dlq_retention is not None and dlq_retention <= source_retention:
            problems.add(
                f"dead-letter queue {view.address(dlq)} keeps messages {dlq_retention} s, not longer than "
                f"the source queue's {source_retention} s: a moved message keeps its enqueue time and "
                "would expire early"
            )
        return True

    @staticmethod
    def _redrive_policy_owner(view: GraphView, idx: int, conf: dict[str, Any]) -> int:
        """The node holding the queue's redrive policy: the queue or an aws_sqs_queue_redrive_policy."""
        if value(conf, "redrive_policy") not in (MISSING, None, ""):
            return idx
        for node in view.referrers(
            idx, ("aws_sqs_queue_redrive_policy",), "queue_url", ("queue_url",), QUEUE_TYPES
        ):
            return node
        return idx


check = ConsumedQueueRedrivesToLongerLivedDlq()
