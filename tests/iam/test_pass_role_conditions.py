"""Passing the scheduler role: only to EventBridge Scheduler (``iam:PassedToService``), and only the
email group's schedules of this account may assume it (its trust policy's ``aws:SourceArn``).
https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_iam-condition-keys.html#ck_PassedToService
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.iam.conftest import EVIDENCE_TIMEOUT, Evidence
from tests.iam.function_needs import function_needs
from tests.iam.needs import Need, context_of
from tests.iam.operation_actions import PASSED_TO_SERVICE
from tests.iam.policy_probes import (
    EMAIL_RECONCILER,
    INBOUND,
    SCHEDULER_ROLE,
    allows,
    compare_with,
    findings,
    function_of,
    statement_of,
    with_condition,
)
from tests.iam.role_comparison import Comparison
from tests.iam.trust import scheduler_trust_findings

pytestmark = pytest.mark.timeout(EVIDENCE_TIMEOUT)


# ---- iam:PassedToService ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", [EMAIL_RECONCILER, INBOUND])
def test_the_schedule_writers_pass_the_scheduler_role_to_scheduler_only(
    evidence: Evidence, name: str
) -> None:
    writer = function_of(evidence, name)
    assert statement_of(writer.policy, "PassSchedulerRole")["Condition"] == {
        "StringEquals": {PASSED_TO_SERVICE: ["scheduler.amazonaws.com"]}
    }
    assert allows(writer, "iam:PassRole", SCHEDULER_ROLE, **{PASSED_TO_SERVICE: ["scheduler.amazonaws.com"]})
    for service in ("lambda.amazonaws.com", "ec2.amazonaws.com", "events.amazonaws.com"):
        assert not allows(writer, "iam:PassRole", SCHEDULER_ROLE, **{PASSED_TO_SERVICE: [service]})
    assert not allows(writer, "iam:PassRole", SCHEDULER_ROLE)


def test_pass_role_without_passed_to_service_is_reported(evidence: Evidence) -> None:
    policy = with_condition(evidence, EMAIL_RECONCILER, "PassSchedulerRole", None)
    comparison = compare_with(evidence, EMAIL_RECONCILER, policy)
    why = "passes the role to any service: no iam:PassedToService condition"
    expected = findings(policy, "PassSchedulerRole", PASSED_TO_SERVICE, "", why)
    assert comparison == Comparison(conditions=expected), str(comparison)


@pytest.mark.parametrize("service", ["*", "*.amazonaws.com"])
def test_a_passed_to_service_wildcard_is_reported(evidence: Evidence, service: str) -> None:
    condition = {"StringLike": {PASSED_TO_SERVICE: service}}
    policy = with_condition(evidence, EMAIL_RECONCILER, "PassSchedulerRole", condition)
    comparison = compare_with(evidence, EMAIL_RECONCILER, policy)
    expected = findings(policy, "PassSchedulerRole", PASSED_TO_SERVICE, service, "not one service principal")
    assert comparison == Comparison(conditions=expected), str(comparison)


@pytest.mark.parametrize("name", [EMAIL_RECONCILER, INBOUND])
def test_pass_role_needs_name_scheduler_as_the_service(evidence: Evidence, name: str) -> None:
    needs = function_needs(function_of(evidence, name), evidence.plan, evidence.records)
    passes = {n for n in needs if n.action == "iam:PassRole"}
    assert passes == {
        Need(
            "iam:PassRole",
            SCHEDULER_ROLE,
            context=context_of({PASSED_TO_SERVICE: ["scheduler.amazonaws.com"]}),
        )
    }


# ---- aws:SourceArn in the scheduler role's trust policy -------------------------------------------


def _scheduler_trust(evidence: Evidence) -> tuple[dict[str, Any], str]:
    environment = function_of(evidence, EMAIL_RECONCILER).environment
    document = evidence.plan.trust_policy(environment["EMAIL_SCHEDULER_ROLE_ARN"])
    return document, evidence.plan.schedule_group_arn(environment["EMAIL_SCHEDULE_GROUP"])


def test_only_the_email_groups_schedules_of_this_account_assume_the_scheduler_role(
    evidence: Evidence,
) -> None:
    document, group_arn = _scheduler_trust(evidence)
    assert group_arn == "arn:aws:scheduler:eu-central-1:111122223333:schedule-group/outreach-prod-email"
    assert scheduler_trust_findings(document, group_arn) == []


def test_the_scheduler_trust_policy_without_source_arn_is_reported(evidence: Evidence) -> None:
    document, group_arn = _scheduler_trust(evidence)
    changed = copy.deepcopy(document)
    for statement in changed["Statement"]:
        statement["Condition"].pop("ArnEquals")
    assert scheduler_trust_findings(changed, group_arn) == [
        "admits a schedule of another group of this account",
        "admits a request without aws:SourceArn",
    ]


def test_the_scheduler_trust_policy_without_source_account_or_any_condition_is_reported(
    evidence: Evidence,
) -> None:
    document, group_arn = _scheduler_trust(evidence)
    without_account = copy.deepcopy(document)
    unconditioned = copy.deepcopy(document)
    for statement in without_account["Statement"]:
        statement["Condition"].pop("StringEquals")
    for statement in unconditioned["Statement"]:
        statement.pop("Condition")
    assert scheduler_trust_findings(without_account, group_arn) == []  # the group's ARN names the account
    assert scheduler_trust_findings(unconditioned, group_arn) == [
        "admits a schedule of another group of this account",
        "admits a request without aws:SourceArn",
        "admits a schedule group of another account",
    ]
