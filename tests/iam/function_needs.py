"""Everything one planned function's role must allow: its handler's recorded calls and the platform's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tests.iam.needs import Need
from tests.iam.operation_actions import needs_of
from tests.iam.planned_roles import Plan, PlannedFunction
from tests.iam.platform_actions import platform_needs


def function_needs(function: PlannedFunction, plan: Plan, records: Sequence[Mapping[str, Any]]) -> set[Need]:
    needs = {
        need
        for record in records
        if record["handler"] == function.handler_module
        for need in needs_of(record, function, plan)
    }
    return needs | set(platform_needs(function, plan))
