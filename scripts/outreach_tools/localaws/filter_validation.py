"""Invalid filter patterns are refused when a mapping or pipe is created or updated, as AWS does.

Lambda answers CreateEventSourceMapping/UpdateEventSourceMapping with an invalid filter pattern with
``InvalidParameterValueException``
(https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html); Pipes answers
CreatePipe/UpdatePipe with ``ValidationException``
(https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-pipes-event-filtering.html). moto stores
any pattern, so the embedded AWS checks each one with ``patterns.validate`` before moto does.
EventBridge rule patterns are validated and matched by moto itself (``$or`` and ``wildcard`` included).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from outreach_tools.localaws.patterns import PatternError, compile_filters


def _problem(criteria: Mapping[str, Any] | None) -> str | None:
    try:
        compile_filters(criteria)
    except PatternError as exc:
        return str(exc)
    return None


def _checked(
    method: Callable[..., Any], criteria_of: Callable[..., Any], error: Callable[[str], Exception]
) -> Any:
    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        problem = _problem(criteria_of(*args, **kwargs))
        if problem is not None:
            raise error(f"Invalid filter pattern definition: {problem}")
        return method(self, *args, **kwargs)

    wrapper.__outreach_validated__ = True  # type: ignore[attr-defined]
    return wrapper


def _lambda_criteria(*args: Any, **kwargs: Any) -> Any:
    spec = kwargs.get("spec", args[-1] if args else {})
    return spec.get("FilterCriteria")


def _pipe_criteria(*args: Any, **kwargs: Any) -> Any:
    parameters = kwargs.get("source_parameters") or {}
    return parameters.get("FilterCriteria")


def refuse_invalid_filter_patterns() -> None:
    """Patch moto's Lambda and Pipes backends to validate FilterCriteria first. Idempotent."""
    from moto.awslambda.exceptions import InvalidParameterValueException
    from moto.awslambda.models import LambdaBackend
    from moto.pipes.exceptions import ValidationException
    from moto.pipes.models import EventBridgePipesBackend

    targets: list[tuple[Any, str, Callable[..., Any], Callable[[str], Exception]]] = [
        (LambdaBackend, "create_event_source_mapping", _lambda_criteria, InvalidParameterValueException),
        (LambdaBackend, "update_event_source_mapping", _lambda_criteria, InvalidParameterValueException),
        (EventBridgePipesBackend, "create_pipe", _pipe_criteria, ValidationException),
        (EventBridgePipesBackend, "update_pipe", _pipe_criteria, ValidationException),
    ]
    for backend, name, criteria_of, error in targets:
        method = getattr(backend, name)
        if not getattr(method, "__outreach_validated__", False):
            setattr(backend, name, _checked(method, criteria_of, error))
