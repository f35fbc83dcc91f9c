"""Invalid filter patterns are refused when a mapping or pipe is created or updated, as AWS does.

Lambda answers CreateEventSourceMapping/UpdateEventSourceMapping with an invalid filter pattern with
``InvalidParameterValueException``
(https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html); Pipes answers
CreatePipe/UpdatePipe with ``ValidationException``
(https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-pipes-event-filtering.html). moto stores
any pattern, so the embedded AWS checks each one with ``patterns.validate`` before moto does.
EventBridge rule patterns are validated by moto itself (``$or`` and ``wildcard`` included) and
matched by ``event_bus``.

A DynamoDB stream mapping may filter on the ``dynamodb`` key only
(https://docs.aws.amazon.com/lambda/latest/dg/with-ddb-filtering.html): a pattern on any other
top-level key (``eventName``, say) is refused at creation. That AWS refuses it rather than storing a
filter that never matches is unconfirmed; refusing is the conservative choice, since either way the
mapping would dispatch nothing.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from typing import Any

from embedded_aws.patterns import PatternError, compile_filters


def _problem(criteria: Mapping[str, Any] | None) -> str | None:
    try:
        compile_filters(criteria)
    except PatternError as exc:
        return str(exc)
    return None


def _dynamodb_key_problem(criteria: Mapping[str, Any] | None) -> str | None:
    for entry in (criteria or {}).get("Filters", []):
        try:
            pattern = json.loads(entry.get("Pattern", "{}"))
        except ValueError:
            continue  # not JSON: reported by _problem
        others = sorted(set(pattern) - {"dynamodb"}) if isinstance(pattern, dict) else []
        if others:
            return f"DynamoDB event source mappings filter on the dynamodb key only, not {others}"
    return None


def _mapping_problem(spec: Mapping[str, Any]) -> str | None:
    criteria = spec.get("FilterCriteria")
    problem = _problem(criteria)
    if problem is None and ":dynamodb:" in str(spec.get("EventSourceArn", "")):
        problem = _dynamodb_key_problem(criteria)
    return problem


def _checked(
    method: Callable[..., Any], problem_of: Callable[..., str | None], error: Callable[[str], Exception]
) -> Any:
    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        problem = problem_of(*args, **kwargs)
        if problem is not None:
            raise error(f"Invalid filter pattern definition: {problem}")
        return method(self, *args, **kwargs)

    wrapper.__outreach_validated__ = True  # type: ignore[attr-defined]
    return wrapper


def _lambda_problem(*args: Any, **kwargs: Any) -> str | None:
    spec = kwargs.get("spec", args[-1] if args else {})
    return _mapping_problem(spec)


def _pipe_problem(*args: Any, **kwargs: Any) -> str | None:
    parameters = kwargs.get("source_parameters") or {}
    return _problem(parameters.get("FilterCriteria"))


def refuse_invalid_filter_patterns() -> None:
    """Patch moto's Lambda and Pipes backends to validate FilterCriteria first. Idempotent."""
    from moto.awslambda.exceptions import InvalidParameterValueException
    from moto.awslambda.models import LambdaBackend
    from moto.pipes.exceptions import ValidationException
    from moto.pipes.models import EventBridgePipesBackend

    targets: list[tuple[Any, str, Callable[..., Any], Callable[[str], Exception]]] = [
        (LambdaBackend, "create_event_source_mapping", _lambda_problem, InvalidParameterValueException),
        (LambdaBackend, "update_event_source_mapping", _lambda_problem, InvalidParameterValueException),
        (EventBridgePipesBackend, "create_pipe", _pipe_problem, ValidationException),
        (EventBridgePipesBackend, "update_pipe", _pipe_problem, ValidationException),
    ]
    for backend, name, problem_of, error in targets:
        method = getattr(backend, name)
        if not getattr(method, "__outreach_validated__", False):
            setattr(backend, name, _checked(method, problem_of, error))
