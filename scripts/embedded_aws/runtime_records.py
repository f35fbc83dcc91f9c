"""The function runtime's records: a function's applied configuration, how an invocation ended, its result.

``FunctionStats`` are the counters the runtime keeps per function; ``Ending`` tells the ways an
invocation ends (the worker answered with a success or a function error, or it went silent past the
deadline or by dying) and gives each its Lambda error type and message.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FunctionSpec:
    """A function's applied configuration, as GetFunction reports it."""

    name: str
    arn: str
    handler: str
    timeout: int
    memory: int
    environment: Mapping[str, str]
    code_sha256: str
    region: str
    reserved_concurrency: int | None

    @property
    def account(self) -> str:
        return self.arn.split(":")[4]


@dataclass
class InvocationResult:
    request_id: str
    ok: bool
    payload: Any = None
    error_type: str | None = None
    error_message: str | None = None
    started_at: float = 0.0
    ended_at: float = 0.0

    @property
    def function_error(self) -> str | None:
        """Lambda's X-Amz-Function-Error header value: Unhandled for errors, None on success."""
        return None if self.ok else "Unhandled"

    def error_payload(self) -> dict[str, Any]:
        return {"errorType": self.error_type, "errorMessage": self.error_message}


@dataclass
class FunctionStats:
    invocations: int = 0
    errors: int = 0
    timeouts: int = 0
    crashes: int = 0
    cold_starts: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    throttles: int = 0
    admitted: int = 0  # invocations past the reservation check and not yet ended (waiting included)


class Ending(enum.Enum):
    """How an invocation ended: the worker answered (success or function error), or it went silent."""

    SUCCEEDED = "succeeded"
    FUNCTION_ERROR = "function_error"
    TIMED_OUT = "timed_out"
    CRASHED = "crashed"

    @classmethod
    def of(cls, answer: dict[str, Any] | None, *, timed_out: bool) -> Ending:
        if answer is None:
            return cls.TIMED_OUT if timed_out else cls.CRASHED
        return cls.SUCCEEDED if answer.get("ok") else cls.FUNCTION_ERROR

    def count(self, stats: FunctionStats) -> None:
        """Add this ending to the function's counters (the caller holds the runtime's lock)."""
        stats.errors += self is not Ending.SUCCEEDED
        stats.timeouts += self is Ending.TIMED_OUT
        stats.crashes += self is Ending.CRASHED

    def result(
        self, spec: FunctionSpec, request_id: str, answer: dict[str, Any], *, started: float, ended: float
    ) -> InvocationResult:
        """The invocation's result, with Lambda's error type and message for each way of failing."""
        if self is Ending.SUCCEEDED:
            payload = json.loads(answer["payload"])
            return InvocationResult(request_id, True, payload, started_at=started, ended_at=ended)
        error_type: str | None
        error_message: str | None
        if self is Ending.TIMED_OUT:
            error_type = "Sandbox.Timedout"
            error_message = f"Task timed out after {spec.timeout:.2f} seconds"
        elif self is Ending.CRASHED:
            error_type = "Runtime.ExitError"
            error_message = f"RequestId: {request_id} Error: Runtime exited without providing a reason"
        else:
            error_type, error_message = answer.get("errorType"), answer.get("errorMessage")
        return InvocationResult(
            request_id,
            False,
            error_type=error_type,
            error_message=error_message,
            started_at=started,
            ended_at=ended,
        )
