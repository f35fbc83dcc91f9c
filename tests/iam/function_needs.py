"""Everything one planned function's role must allow: its handler's recorded calls and the platform's.

Recorded calls the role is meant to refuse (``refusals.REFUSALS``) are not needs; ``refused_needs``
lists them, for the test that the role refuses each one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tests.iam.needs import Need
from tests.iam.operation_actions import needs_of
from tests.iam.planned_roles import Plan, PlannedFunction
from tests.iam.platform_actions import platform_needs
from tests.iam.refusals import refusal_of


def recorded_needs(function: PlannedFunction, plan: Plan, records: Sequence[Mapping[str, Any]]) -> set[Need]:
    return {
        need
        for record in records
        if record["handler"] == function.handler_module
        for need in needs_of(record, function, plan)
    }


def function_needs(function: PlannedFunction, plan: Plan, records: Sequence[Mapping[str, Any]]) -> set[Need]:
    needs = {n for n in recorded_needs(function, plan, records) if refusal_of(function.name, n) is None}
    return needs | set(platform_needs(function, plan))


def refused_needs(function: PlannedFunction, plan: Plan, records: Sequence[Mapping[str, Any]]) -> set[Need]:
    return {n for n in recorded_needs(function, plan, records) if refusal_of(function.name, n) is not None}
