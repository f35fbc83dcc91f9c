"""CKV_OUT_005: EventBridge rules and Scheduler schedules that invoke Lambda handle both kinds of failure.

Both services invoke Lambda asynchronously. Their retry policy and dead-letter queue cover only a
failed *delivery* (missing function, permission, throttling). Once Lambda has accepted the event a
function *error* is retried by Lambda's asynchronous invocation (at most 2 more attempts) and then
goes to the function's on-failure destination or dead-letter queue, or is dropped when it has none.
So the rule asks for both: a retry policy and a DLQ on the target or schedule, and an
aws_lambda_function_event_invoke_config with explicit retries and an on-failure destination (or a
dead_letter_config on the function).
"""

from __future__ import annotations

from typing import Any

from outreach_policy_aws import FUNCTION_TYPES, functions_named, names_lambda, target_branch_kinds
from outreach_policy_check import OutreachCheck
from outreach_policy_evaluation import effective, flag_unset_variables
from outreach_policy_graph import GraphView
from outreach_policy_values import (
    MISSING,
    Problems,
    block,
    require_int_in_range,
    require_reference,
    value,
)

TARGET_RETRY_RANGE = (0, 185)  # EventBridge and Scheduler RetryPolicy.MaximumRetryAttempts
EVENT_AGE_RANGE = (60, 86_400)  # RetryPolicy.MaximumEventAgeInSeconds
ASYNC_RETRY_RANGE = (0, 2)  # Lambda asynchronous invocation MaximumRetryAttempts


INVOKE_CONFIG_INPUTS = ("maximum_retry_attempts", "destination_config.on_failure.destination")


class AsyncLambdaInvocationFailureHandling(OutreachCheck):
    inputs = (
        "arn",
        "retry_policy.maximum_retry_attempts",
        "retry_policy.maximum_event_age_in_seconds",
        "dead_letter_config.arn",
        "target.arn",
        "target.retry_policy.maximum_retry_attempts",
        "target.retry_policy.maximum_event_age_in_seconds",
        "target.dead_letter_config.arn",
    )

    def __init__(self) -> None:
        super().__init__(
            name=(
                "EventBridge rule targets and Scheduler schedules that invoke Lambda have a retry_policy and "
                "a dead_letter_config, and the function has an event invoke config with explicit "
                "maximum_retry_attempts and an on-failure destination (or a function dead_letter_config)"
            ),
            id="CKV_OUT_005",
            supported_resources=("aws_cloudwatch_event_target", "aws_scheduler_schedule"),
        )

    def evaluate(self, conf: dict[str, Any], problems: Problems) -> bool:
        if self.entity_type == "aws_scheduler_schedule":
            target = block(conf, "target")
            scoped = problems.child("target", ".")
            arn_attribute = "target.arn"
        else:
            target = conf
            scoped = problems
            arn_attribute = "arn"
        if target is None:
            problems.add("the schedule has no target block")
            return True

        view, idx = self.view, self.node
        raw_arn = value(target, "arn")
        functions = (
            functions_named(view, idx, arn_attribute, raw_arn) if view is not None and idx is not None else []
        )
        if (
            not functions
            and not names_lambda(raw_arn, scoped)
            and not self._a_branch_may_name_lambda(arn_attribute, problems)
        ):
            return bool(problems)

        retry = block(target, "retry_policy")
        if retry is None:
            scoped.add(
                "retry_policy is missing: failed deliveries to Lambda fall back to the service defaults"
            )
        else:
            retry_problems = scoped.child("retry_policy", ".")
            for attribute, (low, high) in (
                ("maximum_retry_attempts", TARGET_RETRY_RANGE),
                ("maximum_event_age_in_seconds", EVENT_AGE_RANGE),
            ):
                if value(retry, attribute) is not MISSING:
                    require_int_in_range(retry, (attribute,), low, high, retry_problems, "service default")
        if block(target, "dead_letter_config") is None:
            scoped.add("dead_letter_config is missing: an event that cannot be delivered is dropped")
        else:
            require_reference(target, ("dead_letter_config", "arn"), scoped, "no dead-letter queue")

        if view is None or idx is None:
            problems.add(
                "checkov's resource graph is unavailable, so the invoked function's event invoke config "
                "cannot be checked; the rule fails closed"
            )
        elif len(functions) != 1:
            problems.add(
                f"{arn_attribute} = {raw_arn!r} does not name exactly one aws_lambda_function of this "
                "configuration, so its asynchronous-invocation failure handling cannot be checked"
            )
        else:
            self._check_function(view, functions[0], problems)
        return True

    def _a_branch_may_name_lambda(self, arn_attribute: str, problems: Problems) -> bool:
        """Whether the other result of a conditional target ARN may be a Lambda function; a result
        that cannot be told apart fails the rule closed."""
        applies = False
        for branch, kind in target_branch_kinds(self.view, self.node, self.entry, arn_attribute) or []:
            if kind is None:
                problems.unresolved(arn_attribute, branch)
            applies = applies or kind != "other"
        return applies

    @staticmethod
    def _check_function(view: GraphView, function: int, problems: Problems) -> None:
        name = view.address(function)
        configs = view.referrers(
            function,
            ("aws_lambda_function_event_invoke_config",),
            "function_name",
            ("function_name",),
            FUNCTION_TYPES,
        )
        if not configs:
            problems.add(
                f"{name} has no aws_lambda_function_event_invoke_config: a function error is retried with "
                "Lambda's defaults (2 retries, 6 h event age) that nobody chose"
            )
            return
        function_conf = effective(view, function, ("dead_letter_config.target_arn",))
        function_dlq = block(function_conf, "dead_letter_config")
        for config in configs:
            config_conf = effective(view, config, INVOKE_CONFIG_INPUTS)
            config_problems = problems.child(view.address(config))
            flag_unset_variables(view, config, INVOKE_CONFIG_INPUTS, config_problems)
            require_int_in_range(
                config_conf,
                ("maximum_retry_attempts",),
                *ASYNC_RETRY_RANGE,
                config_problems,
                "the default of 2 retries is implicit",
            )
            if value(config_conf, "destination_config", "on_failure", "destination") is not MISSING:
                require_reference(
                    config_conf,
                    ("destination_config", "on_failure", "destination"),
                    config_problems,
                    "no on-failure destination",
                )
            elif function_dlq is not None:
                require_reference(
                    function_conf, ("dead_letter_config", "target_arn"), problems.child(name), "no DLQ"
                )
            else:
                config_problems.add(
                    "destination_config.on_failure is missing and the function has no dead_letter_config: an "
                    "event whose retries are exhausted is dropped"
                )


check = AsyncLambdaInvocationFailureHandling()
