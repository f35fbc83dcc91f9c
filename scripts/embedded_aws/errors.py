"""The errors the embedded AWS raises, and what each stands for in AWS.

Each is the local form of an AWS answer: a request AWS would refuse (``ValidationException``), a
function that is not there, or Lambda's throttle (HTTP 429). The pollers treat them as AWS's event
sources treat the real answers (a throttle returns the batch, a missing function is a delivery
failure); anything else raised inside the emulator is a defect of the emulator and stops the run.
"""

from __future__ import annotations


class FunctionNotFoundError(LookupError):
    """The function does not exist on the emulator (delivery failure, not a function error)."""


class InvalidScheduleExpressionError(ValueError):
    """An expression AWS would refuse (ValidationException on PutRule / CreateSchedule)."""


class ThrottledError(Exception):
    """Lambda refused the invocation: the function's reserved concurrency is in use (HTTP 429).

    The function did not run. ``reserved`` is the reservation that refused it (0: every invocation).
    """

    status_code = 429
    error_type = "TooManyRequestsException"
    reason = "ReservedFunctionConcurrentInvocationLimitExceeded"

    def __init__(self, function: str, reserved: int) -> None:
        super().__init__(f"Rate Exceeded: {function} is at its reserved concurrency of {reserved}")
        self.function = function
        self.reserved = reserved


class UnsupportedConditionError(ValueError):
    """A condition operator this evaluator does not implement."""


class UnknownFunctionUrlError(LookupError):
    """No applied function URL has this address (on AWS the host would not resolve)."""
