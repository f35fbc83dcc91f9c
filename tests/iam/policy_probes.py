"""Probing a planned role: its statements by Sid, copies with one condition changed, what it admits.

The condition tests (``test_conditions``, ``test_sender_conditions``, ``test_pass_role_conditions``)
share these, and the prod names they probe with (``roles.tftest.hcl`` gives the planned ARNs).
"""

from __future__ import annotations

import copy
from typing import Any

from embedded_aws.iam_policies import documents_allow
from tests.iam.conftest import Evidence
from tests.iam.function_needs import function_needs
from tests.iam.planned_roles import PlannedFunction
from tests.iam.role_comparison import Comparison, ConditionFinding, compare

TABLE = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-prod-tasks"
LEDGER = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-prod-contacts"
IDENTITY = "arn:aws:ses:eu-central-1:111122223333:identity/example.com"
REPLY_IDENTITY = "arn:aws:ses:eu-central-1:111122223333:identity/reply.example.com"
CONFIGURATION_SET = "arn:aws:ses:eu-central-1:111122223333:configuration-set/outreach-prod-email"
SCHEDULER_ROLE = "arn:aws:iam::111122223333:role/outreach-prod-email-scheduler"
SCRAPER = "outreach-prod-scraper"
WORKER = "outreach-prod-email-worker"
SCRAPE_RECONCILER = "outreach-prod-scrape-reconciler"
EMAIL_RECONCILER = "outreach-prod-email-reconciler"
DISPATCHER = "outreach-prod-dispatcher"
CONSUMER = "outreach-prod-ses-event-consumer"
UNSUBSCRIBE = "outreach-prod-unsubscribe"
INBOUND = "outreach-prod-inbound-processor"
GUARD = "outreach-prod-sending-guard"


def function_of(evidence: Evidence, name: str) -> PlannedFunction:
    return evidence.plan.functions()[name]


def compare_with(evidence: Evidence, name: str, policy: dict[str, Any]) -> Comparison:
    """``policy`` compared with what the function ``name`` needs."""
    needs = function_needs(function_of(evidence, name), evidence.plan, evidence.records)
    return compare(policy, needs, evidence.plan.arns())


def statement_of(policy: dict[str, Any], sid: str) -> dict[str, Any]:
    statements: list[dict[str, Any]] = policy["Statement"]
    (found,) = [s for s in statements if s["Sid"] == sid]
    return found


def with_condition(
    evidence: Evidence, name: str, sid: str, condition: dict[str, Any] | None
) -> dict[str, Any]:
    """A copy of the function's policy whose statement ``sid`` has ``condition`` (None: no condition)."""
    policy = copy.deepcopy(function_of(evidence, name).policy)
    edited = statement_of(policy, sid)
    edited.pop("Condition", None)
    if condition:
        edited["Condition"] = condition
    return policy


def findings(policy: dict[str, Any], sid: str, key: str, value: str, why: str) -> list[ConditionFinding]:
    """The finding ``why`` about ``key``'s ``value`` for every grant of the statement ``sid``."""
    found = statement_of(policy, sid)
    return sorted(
        ConditionFinding(sid, action, resource, key, value, why)
        for action in found["Action"]
        for resource in found["Resource"]
    )


def allows(function: PlannedFunction, action: str, resource: str, **context: list[str]) -> bool:
    return documents_allow([function.policy], action, resource, context)
