"""The AWS vocabulary of the rules: which resource types are streams, queues and functions, and how they link.

A mapping's source decides between the stream and the SQS rules; a queue is consumed when a
mapping polls it and is a dead-letter queue when another resource names it as one.
"""

from __future__ import annotations

import re
from typing import Any

from outreach_policy_evaluation import scope_of
from outreach_policy_expression_values import truth
from outreach_policy_expressions import UnknownValueError, evaluate_expression
from outreach_policy_graph import GraphView
from outreach_policy_instances import ForEachEntry
from outreach_policy_source import conditional_parts, literal
from outreach_policy_values import (
    MISSING,
    Problems,
    is_set,
    is_unresolved,
    read_str_list,
    reference_target,
    value,
)

# A function name with an optional version or alias qualifier (``digest``, ``digest:live``).
_FUNCTION_NAME = re.compile(r"([A-Za-z0-9_-]{1,64})(?::[A-Za-z0-9_$-]{1,128})?")
STREAM_SOURCE_TYPES = frozenset({"aws_dynamodb_table", "aws_kinesis_stream", "aws_kinesis_stream_consumer"})
DYNAMODB_TYPES = frozenset({"aws_dynamodb_table"})
QUEUE_TYPES = frozenset({"aws_sqs_queue"})
FUNCTION_TYPES = frozenset({"aws_lambda_function"})
ALIAS_TYPES = frozenset({"aws_lambda_alias"})

# Attributes through which a resource names a dead-letter queue or on-failure destination.
DEAD_LETTER_REFERENCES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("aws_sqs_queue", "redrive_policy", ("redrive_policy",)),
    ("aws_sqs_queue_redrive_policy", "redrive_policy", ("redrive_policy",)),
    (
        "aws_lambda_event_source_mapping",
        "destination_config.on_failure.destination_arn",
        ("destination_config", "on_failure", "destination_arn"),
    ),
    (
        "aws_lambda_function_event_invoke_config",
        "destination_config.on_failure.destination",
        ("destination_config", "on_failure", "destination"),
    ),
    ("aws_lambda_function", "dead_letter_config.target_arn", ("dead_letter_config", "target_arn")),
    ("aws_cloudwatch_event_target", "dead_letter_config.arn", ("dead_letter_config", "arn")),
    ("aws_scheduler_schedule", "target.dead_letter_config.arn", ("target", "dead_letter_config", "arn")),
    (
        "aws_pipes_pipe",
        "source_parameters.dynamodb_stream_parameters.dead_letter_config.arn",
        ("source_parameters", "dynamodb_stream_parameters", "dead_letter_config", "arn"),
    ),
    (
        "aws_pipes_pipe",
        "source_parameters.kinesis_stream_parameters.dead_letter_config.arn",
        ("source_parameters", "kinesis_stream_parameters", "dead_letter_config", "arn"),
    ),
)


def arn_service(raw: Any) -> str | None:
    """The service part of a literal ARN (``sqs``, ``dynamodb``, ``lambda``, ...)."""
    if isinstance(raw, str) and raw.startswith("arn:"):
        parts = raw.split(":")
        if len(parts) > 2:
            return parts[2]
    return None


def dead_letter_users(view: GraphView, queue: int) -> list[int]:
    """Resources that name ``queue`` as their dead-letter queue or on-failure destination.

    A queue is not the dead-letter queue of its own redrive policy, inline or in an
    aws_sqs_queue_redrive_policy whose queue_url names it.
    """
    users: list[int] = []
    for source_type, attribute, path in DEAD_LETTER_REFERENCES:
        users.extend(
            node
            for node in view.referrers(queue, (source_type,), attribute, path, QUEUE_TYPES)
            if node != queue and not _redrives(view, node, queue)
        )
    return users


def dead_letter_user_names(view: GraphView, queue: int) -> list[str]:
    """Addresses of the resources naming ``queue`` as a DLQ (``<address>["<key>"]`` for a for_each entry)."""
    names: list[str] = []
    for source_type, attribute, path in DEAD_LETTER_REFERENCES:
        for node in view.referrers(queue, (source_type,), attribute, path, QUEUE_TYPES):
            if node == queue or _redrives(view, node, queue):
                continue
            keys = view.entry_keys(node, attribute, queue)
            names.extend([f'{view.address(node)}["{key}"]' for key in keys] or [view.address(node)])
    return sorted(set(names))


def _redrives(view: GraphView, node: int, queue: int) -> bool:
    """Whether ``node`` is an aws_sqs_queue_redrive_policy of ``queue`` itself."""
    if view.attrs(node).get("resource_type") != "aws_sqs_queue_redrive_policy":
        return False
    return queue in view.resolve(node, "queue_url", value(view.conf(node), "queue_url"), QUEUE_TYPES)


def consuming_mappings(view: GraphView, queue: int) -> list[int]:
    """Lambda event source mappings that poll ``queue``."""
    return view.referrers(
        queue, ("aws_lambda_event_source_mapping",), "event_source_arn", ("event_source_arn",), QUEUE_TYPES
    )


def functions_named(view: GraphView, idx: int, attribute: str, rendered: Any) -> list[int]:
    """Lambda function nodes named by ``attribute`` directly or through an alias.

    A reference is followed through the graph; a name, an ARN, a qualified ARN or ``name:alias``
    written as text (``arn:aws:lambda:eu-west-1:123456789012:function:digest:live``, an alias whose
    ``function_name = "digest"``) names the function of the configuration with that
    ``function_name``. Lambda accepts all of these forms for ``FunctionName``:
    https://docs.aws.amazon.com/lambda/latest/api/API_CreateEventSourceMapping.html
    """
    functions = view.resolve(idx, attribute, rendered, FUNCTION_TYPES)
    for alias in view.resolve(idx, attribute, rendered, ALIAS_TYPES):
        named = value(view.conf(alias), "function_name")
        functions.extend(
            view.resolve(alias, "function_name", named, FUNCTION_TYPES) or functions_by_name(view, named)
        )
    if not functions:
        functions = functions_by_name(view, rendered)
    return list(dict.fromkeys(functions))


def function_name_of(raw: Any) -> str | None:
    """The function name in a literal name, ``name:qualifier``, function ARN or qualified function ARN."""
    if not isinstance(raw, str) or is_unresolved(raw):
        return None
    if raw.startswith("arn:"):
        parts = raw.split(":")
        if len(parts) in (7, 8) and parts[2] == "lambda" and parts[5] == "function":
            return parts[6]
        return None
    match = _FUNCTION_NAME.fullmatch(raw)
    return match.group(1) if match is not None else None


def functions_by_name(view: GraphView, raw: Any) -> list[int]:
    """The one existing ``aws_lambda_function`` whose ``function_name`` is the name ``raw`` holds."""
    name = function_name_of(raw)
    if name is None:
        return []
    found = [
        node
        for node in view.by_type.get("aws_lambda_function", [])
        if view.exists(node) and value(view.conf(node), "function_name") == name
    ]
    return found if len(found) == 1 else []


def names_lambda(raw_arn: Any, problems: Problems) -> bool:
    """Whether a target ARN that the graph did not resolve names a Lambda function or alias.

    One that names nothing this can tell is recorded as unresolved (and counts as not Lambda)."""
    reference = reference_target(raw_arn)
    if reference is not None:
        return reference[0] in FUNCTION_TYPES | ALIAS_TYPES
    service = arn_service(raw_arn)
    if service is not None:
        return service == "lambda"
    problems.unresolved("arn", raw_arn)
    return False


def target_branch_kinds(
    view: GraphView | None, idx: int | None, entry: ForEachEntry | None, arn_attribute: str
) -> list[tuple[str, str | None]] | None:
    """Each result of a conditional target ARN with ``lambda``, ``other`` or None (cannot be told).

    checkov renders ``cond ? <api destination>.arn : each.value.arn`` as one of its results; when the
    condition was not decided for this instance every result is considered. None: the ARN is no
    undecided conditional.
    """
    if view is None or idx is None or (entry is not None and arn_attribute in entry.values):
        return None
    located = view.locate(idx, arn_attribute.split("."))
    parts = conditional_parts(located.expression) if located and located.expression else None
    if parts is None:
        return None
    condition, when_true, when_false = parts
    try:
        chosen = truth(evaluate_expression(condition, scope_of(view, idx)))
    except UnknownValueError:
        branches: tuple[str, ...] = (when_true, when_false)
    else:
        branches = (when_true if chosen else when_false,)  # decided: only the chosen result exists
    kinds: list[tuple[str, str | None]] = []
    for branch in branches:
        reference = reference_target(branch)
        service = arn_service(literal(branch))
        if reference is not None:
            kinds.append((branch, "lambda" if reference[0] in FUNCTION_TYPES | ALIAS_TYPES else "other"))
        elif service is not None:
            kinds.append((branch, "lambda" if service == "lambda" else "other"))
        else:
            kinds.append((branch, None))
    return kinds


def mapping_source_kind(
    view: GraphView | None, idx: int | None, conf: dict[str, Any], problems: Problems
) -> str:
    """``stream`` (DynamoDB/Kinesis), ``sqs``, ``other`` or ``unresolved`` for an event source mapping."""
    raw = value(conf, "event_source_arn")
    if raw is MISSING or raw is None:
        return "other"  # self-managed Kafka and similar sources have no event_source_arn
    if view is not None and idx is not None:
        if view.resolve(idx, "event_source_arn", raw, STREAM_SOURCE_TYPES):
            return "stream"
        if view.resolve(idx, "event_source_arn", raw, QUEUE_TYPES):
            return "sqs"
    target = reference_target(raw)
    if target is not None:
        if target[0] in STREAM_SOURCE_TYPES:
            return "stream"
        if target[0] in QUEUE_TYPES:
            return "sqs"
        return "other"
    service = arn_service(raw)
    if service in {"dynamodb", "kinesis"}:
        return "stream"
    if service == "sqs":
        return "sqs"
    if service is not None:
        return "other"
    problems.unresolved("event_source_arn", raw)
    return "unresolved"


def stream_source_service(
    view: GraphView | None, idx: int | None, conf: dict[str, Any], problems: Problems
) -> str | None:
    """``dynamodb`` or ``kinesis`` for a stream event source mapping; None for any other source.

    An unresolved source is recorded by :func:`mapping_source_kind`.
    """
    if mapping_source_kind(view, idx, conf, problems) != "stream":
        return None
    raw = value(conf, "event_source_arn")
    if view is not None and idx is not None and view.resolve(idx, "event_source_arn", raw, DYNAMODB_TYPES):
        return "dynamodb"
    target = reference_target(raw)
    if target is not None:
        return "dynamodb" if target[0] in DYNAMODB_TYPES else "kinesis"
    return "dynamodb" if arn_service(raw) == "dynamodb" else "kinesis"


def require_report_batch_item_failures(conf: dict[str, Any], problems: Problems, consequence: str) -> None:
    """Record a problem unless ``function_response_types`` contains ReportBatchItemFailures."""
    types = read_str_list(conf, "function_response_types", problems)
    if not is_set(conf, "function_response_types") or (
        types is not None and "ReportBatchItemFailures" not in types
    ):
        problems.add(f'function_response_types must contain "ReportBatchItemFailures": {consequence}')
