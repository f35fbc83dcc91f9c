"""CKV_OUT_007: every dead-letter queue has a CloudWatch alarm on its visible messages.

A queue counts as a dead-letter queue when another resource names it as such: a redrive target, an
event source mapping's or event invoke config's on-failure destination, a function's, rule
target's, schedule's or pipe's dead-letter config. A DLQ nobody is alerted about only delays the loss.
"""

from __future__ import annotations

from typing import Any

from outreach_policy_aws import QUEUE_TYPES, dead_letter_user_names, dead_letter_users
from outreach_policy_check import OutreachCheck
from outreach_policy_evaluation import effective, flag_unset_variables
from outreach_policy_graph import GraphView
from outreach_policy_values import MISSING, Problems, read_str, value

METRIC = "ApproximateNumberOfMessagesVisible"
NAMESPACE = "AWS/SQS"


ALARM_INPUTS = ("metric_name", "namespace", "dimensions.QueueName")


class DeadLetterQueueHasVisibleMessagesAlarm(OutreachCheck):
    def __init__(self) -> None:
        super().__init__(
            name=(
                "SQS queues used as a dead-letter queue or on-failure destination have a CloudWatch alarm on "
                "AWS/SQS ApproximateNumberOfMessagesVisible"
            ),
            id="CKV_OUT_007",
            supported_resources=("aws_sqs_queue",),
        )

    def evaluate(self, conf: dict[str, Any], problems: Problems) -> bool:
        graph = self.require_graph(problems)
        if graph is None:
            return True
        view, idx = graph
        users = dead_letter_users(view, idx)
        if not users:
            return False
        if not self._alarmed(view, idx, conf, problems):
            problems.add(
                f"dead-letter queue of {', '.join(dead_letter_user_names(view, idx))} has no "
                f"aws_cloudwatch_metric_alarm on {NAMESPACE} {METRIC} with dimensions.QueueName naming it"
            )
        return True

    @staticmethod
    def _alarmed(view: GraphView, idx: int, conf: dict[str, Any], problems: Problems) -> bool:
        """True when an alarm watches the queue's visible messages.

        An alarm whose dimension names the queue but whose metric or namespace is unresolved is
        reported as unresolved and does not count.
        """
        queue_name = value(conf, "name")
        for alarm in view.by_type.get("aws_cloudwatch_metric_alarm", []):
            alarm_conf = effective(view, alarm, ALARM_INPUTS)
            metrics: list[tuple[str, dict[str, Any]]] = [("", alarm_conf)]
            queries = alarm_conf.get("metric_query")
            if isinstance(queries, list):
                metrics.extend(
                    ("metric_query.metric.", query["metric"][0])
                    for query in queries
                    if isinstance(query, dict) and isinstance(query.get("metric"), list) and query["metric"]
                )
            for prefix, metric in metrics:
                dimension = value(metric, "dimensions", "QueueName")
                if dimension is MISSING:
                    continue
                names_queue = idx in view.resolve(alarm, prefix + "dimensions", dimension, QUEUE_TYPES) or (
                    isinstance(queue_name, str) and dimension == queue_name
                )
                if not names_queue:
                    continue
                local = Problems()
                metric_name = read_str(metric, ("metric_name",), local)
                namespace = read_str(metric, ("namespace",), local)
                flag_unset_variables(view, alarm, (prefix + "metric_name", prefix + "namespace"), local)
                for line in local.lines:
                    problems.add(
                        line.replace("unresolved: ", f"unresolved: {view.address(alarm)}.{prefix}", 1)
                    )
                if not local and metric_name == METRIC and namespace == NAMESPACE:
                    return True
        return False


check = DeadLetterQueueHasVisibleMessagesAlarm()
