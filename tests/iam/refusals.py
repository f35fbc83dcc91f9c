"""Recorded calls the roles are meant to refuse: a handler's read of a row of another kind.

Moto does not enforce IAM, so a handler's unit tests also walk the path where it is handed a task id
of the other kind and reads that row before refusing the task itself. On AWS the role's
``dynamodb:LeadingKeys`` condition refuses the read (AccessDeniedException) first. Each refusal names
what happens then; ``test_least_privilege`` leaves these needs out of the comparison, checks that
the role refuses every one of them, and that every refusal here still matches a recorded call.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.iam.needs import Need
from tests.iam.operation_actions import LEADING_KEYS


@dataclass(frozen=True)
class Refusal:
    function: str
    action: str
    key_prefix: str
    then: str

    def covers(self, function: str, need: Need) -> bool:
        keys = need.request_context.get(LEADING_KEYS, [])
        return (
            function == self.function
            and need.action == self.action
            and bool(keys)
            and all(key.startswith(self.key_prefix) for key in keys)
        )


# Empty since ``task_store.load_task`` refuses a task id of another kind before reading it: no handler
# reads another kind's row, so no recorded call needs the role's refusal. A handler that did would fail
# ``test_least_privilege`` (its role does not allow the read) until it is listed here with its outcome.
REFUSALS: tuple[Refusal, ...] = ()


def refusal_of(function: str, need: Need) -> Refusal | None:
    return next((refusal for refusal in REFUSALS if refusal.covers(function, need)), None)
