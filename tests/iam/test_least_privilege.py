"""Each function's role allows exactly the actions its code and its wiring use, on its own resources.

The needs come from the handlers' unit tests (recorded AWS calls) and the platform rules
(``platform_actions``); the policies from the prod root's plan. The comparison is shown to fail
precisely when an action is taken out of a role or an unused one is put in (on copies of the policy).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.iam.conftest import EVIDENCE_TIMEOUT, Evidence
from tests.iam.function_needs import function_needs
from tests.iam.needs import Need
from tests.iam.planned_roles import PlannedFunction
from tests.iam.platform_actions import customer_managed_keys
from tests.iam.role_comparison import Comparison, Grant, compare, grants
from tests.iam.scenarios import FUNCTIONS

pytestmark = pytest.mark.timeout(EVIDENCE_TIMEOUT)

FUNCTION_NAMES = [row.function for row in FUNCTIONS]


def _function(evidence: Evidence, name: str) -> PlannedFunction:
    return evidence.plan.functions()[name]


def _needs(evidence: Evidence, name: str) -> set[Need]:
    return function_needs(_function(evidence, name), evidence.plan, evidence.records)


def _compare(evidence: Evidence, name: str, policy: dict[str, Any]) -> Comparison:
    return compare(policy, _needs(evidence, name), evidence.plan.arns())


def _without(policy: dict[str, Any], action: str) -> dict[str, Any]:
    changed = copy.deepcopy(policy)
    for statement in changed["Statement"]:
        statement["Action"] = [a for a in statement["Action"] if a != action]
    changed["Statement"] = [s for s in changed["Statement"] if s["Action"]]
    return changed


def _with(policy: dict[str, Any], sid: str, action: str) -> dict[str, Any]:
    changed = copy.deepcopy(policy)
    (statement,) = [s for s in changed["Statement"] if s["Sid"] == sid]
    statement["Action"] = [*statement["Action"], action]
    return changed


def _resources(policy: dict[str, Any], sid: str) -> list[str]:
    (statement,) = [s for s in policy["Statement"] if s["Sid"] == sid]
    return list(statement["Resource"])


def test_every_planned_function_has_a_scenario_row(evidence: Evidence) -> None:
    planned = {name: f.handler_module for name, f in evidence.plan.functions().items()}
    assert planned == {row.function: row.handler_module for row in FUNCTIONS}


@pytest.mark.parametrize("name", FUNCTION_NAMES)
def test_the_role_allows_exactly_what_the_function_uses(evidence: Evidence, name: str) -> None:
    comparison = _compare(evidence, name, _function(evidence, name).policy)
    assert comparison.exact, f"{name}:\n{comparison}"


@pytest.mark.parametrize("name", FUNCTION_NAMES)
def test_the_handler_was_recorded_calling_aws(evidence: Evidence, name: str) -> None:
    handler = _function(evidence, name).handler_module
    assert any(record["handler"] == handler for record in evidence.records)


def test_no_function_touches_a_resource_encrypted_with_a_customer_managed_key(evidence: Evidence) -> None:
    assert customer_managed_keys(evidence.plan) == []


@pytest.mark.parametrize(
    ("name", "action"),
    [
        ("outreach-prod-dispatcher", "sqs:SendMessage"),
        ("outreach-prod-dispatcher", "dynamodb:GetRecords"),
        ("outreach-prod-dispatcher", "dynamodb:ListStreams"),
        ("outreach-prod-dispatcher", "s3:ListBucket"),
        ("outreach-prod-scraper", "dynamodb:UpdateItem"),
        ("outreach-prod-scraper", "dynamodb:GetItem"),
        ("outreach-prod-scraper", "sqs:ChangeMessageVisibility"),
        ("outreach-prod-scraper", "sqs:ReceiveMessage"),
        ("outreach-prod-scraper", "s3:PutObject"),
        ("outreach-prod-scrape-reconciler", "dynamodb:Query"),
        ("outreach-prod-scrape-reconciler", "sqs:SendMessage"),
        ("outreach-prod-scrape-reconciler", "logs:PutLogEvents"),
        ("outreach-prod-scrape-reconciler", "xray:PutTraceSegments"),
        ("outreach-prod-email-worker", "ses:SendEmail"),
        ("outreach-prod-email-worker", "ses:GetSuppressedDestination"),
        ("outreach-prod-email-worker", "ses:GetAccount"),
        ("outreach-prod-email-worker", "dynamodb:UpdateItem"),
        ("outreach-prod-email-worker", "sqs:SendMessage"),
        ("outreach-prod-email-reconciler", "scheduler:CreateSchedule"),
        ("outreach-prod-email-reconciler", "scheduler:GetSchedule"),
        ("outreach-prod-email-reconciler", "scheduler:DeleteSchedule"),
        ("outreach-prod-email-reconciler", "iam:PassRole"),
        ("outreach-prod-email-worker", "dynamodb:BatchGetItem"),
        ("outreach-prod-ses-event-consumer", "dynamodb:Query"),
        ("outreach-prod-ses-event-consumer", "dynamodb:BatchGetItem"),
        ("outreach-prod-ses-event-consumer", "dynamodb:UpdateItem"),
        ("outreach-prod-ses-event-consumer", "scheduler:DeleteSchedule"),
        ("outreach-prod-ses-event-consumer", "sqs:ReceiveMessage"),
        ("outreach-prod-unsubscribe", "kms:VerifyMac"),
        ("outreach-prod-unsubscribe", "dynamodb:UpdateItem"),
        ("outreach-prod-unsubscribe", "sqs:SendMessage"),
        ("outreach-prod-inbound-processor", "s3:GetObject"),
        ("outreach-prod-inbound-processor", "dynamodb:Query"),
        ("outreach-prod-inbound-processor", "dynamodb:BatchGetItem"),
        ("outreach-prod-inbound-processor", "dynamodb:GetItem"),
        ("outreach-prod-inbound-processor", "kms:GenerateMac"),
        ("outreach-prod-inbound-processor", "ses:SendEmail"),
        ("outreach-prod-inbound-processor", "scheduler:CreateSchedule"),
        ("outreach-prod-inbound-processor", "iam:PassRole"),
        ("outreach-prod-inbound-processor", "sqs:DeleteMessage"),
    ],
)
def test_an_action_removed_from_a_role_is_reported_missing_on_each_resource_that_needs_it(
    evidence: Evidence, name: str, action: str
) -> None:
    needed = sorted(n for n in _needs(evidence, name) if n.action == action)
    comparison = _compare(evidence, name, _without(_function(evidence, name).policy, action))
    assert needed
    assert comparison == Comparison(missing=needed), str(comparison)


@pytest.mark.parametrize(
    ("name", "sid", "action"),
    [
        ("outreach-prod-scraper", "ClaimAndCompleteTasks", "dynamodb:PutItem"),
        ("outreach-prod-scraper", "ClaimAndCompleteTasks", "dynamodb:ConditionCheckItem"),
        ("outreach-prod-scraper", "SendUnreadableToDlq", "sqs:ReceiveMessage"),
        ("outreach-prod-scraper", "WriteResults", "s3:GetObject"),
        ("outreach-prod-dispatcher", "SendScrapeMessages", "sqs:DeleteMessage"),
        ("outreach-prod-dispatcher", "ListFailureBucket", "s3:DeleteObject"),
        ("outreach-prod-scrape-reconciler", "MoveStrandedTasks", "dynamodb:DeleteItem"),
        ("outreach-prod-scrape-reconciler", "ReadOpenTasks", "dynamodb:Scan"),
        ("outreach-prod-email-worker", "ClaimAndCompleteEmailTasks", "dynamodb:ConditionCheckItem"),
        ("outreach-prod-email-worker", "SendWithTheCampaignIdentity", "ses:SendRawEmail"),
        ("outreach-prod-email-reconciler", "ManageEmailSchedules", "scheduler:UpdateSchedule"),
        ("outreach-prod-email-reconciler", "PassSchedulerRole", "iam:GetRole"),
        ("outreach-prod-email-worker", "ReadContactStops", "dynamodb:PutItem"),
        ("outreach-prod-ses-event-consumer", "DeleteCancelledEmailSchedules", "scheduler:CreateSchedule"),
        ("outreach-prod-ses-event-consumer", "ConsumeSesEvents", "sqs:SendMessage"),
        ("outreach-prod-unsubscribe", "VerifyUnsubscribeTokens", "kms:GenerateMac"),
        ("outreach-prod-unsubscribe", "RecordUnsubscribes", "dynamodb:PutItem"),
        ("outreach-prod-unsubscribe", "FanOutUnsubscribes", "sqs:ReceiveMessage"),
        ("outreach-prod-inbound-processor", "ReadReceivedMessages", "s3:DeleteObject"),
        ("outreach-prod-inbound-processor", "KeepInboundReceipts", "dynamodb:PutItem"),
        ("outreach-prod-inbound-processor", "ReadContactStops", "dynamodb:DeleteItem"),
        ("outreach-prod-inbound-processor", "ForwardFromTheForwarder", "ses:SendRawEmail"),
        ("outreach-prod-inbound-processor", "MoveEmailSchedules", "scheduler:UpdateSchedule"),
    ],
)
def test_an_unused_action_added_to_a_role_is_reported_unused_on_each_resource_it_names(
    evidence: Evidence, name: str, sid: str, action: str
) -> None:
    policy = _function(evidence, name).policy
    comparison = _compare(evidence, name, _with(policy, sid, action))
    assert comparison == Comparison(unused=[Grant(sid, action, r) for r in sorted(_resources(policy, sid))])


@pytest.mark.parametrize(
    ("name", "sid", "resource"),
    [
        ("outreach-prod-scraper", "ClaimAndCompleteTasks", "*"),
        (
            "outreach-prod-scraper",
            "ClaimAndCompleteTasks",
            "arn:aws:dynamodb:eu-central-1:111122223333:table/*",
        ),
        ("outreach-prod-scraper", "WriteResults", "arn:aws:s3:::outreach-prod-*"),
        (
            "outreach-prod-scraper",
            "WriteResults",
            "arn:aws:s3:::outreach-prod-results-111122223333-eu-central-1/*",
        ),
        (
            "outreach-prod-dispatcher",
            "ListTaskStreams",
            "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-prod-tasks/*",
        ),
        ("outreach-prod-dispatcher", "SendScrapeMessages", "arn:aws:sqs:*:111122223333:outreach-prod-scrape"),
        (
            "outreach-prod-email-worker",
            "SendWithTheCampaignIdentity",
            "arn:aws:ses:eu-central-1:111122223333:*",
        ),
        ("outreach-prod-email-reconciler", "ManageEmailSchedules", "*"),
        (
            "outreach-prod-email-reconciler",
            "ManageEmailSchedules",
            "arn:aws:scheduler:eu-central-1:111122223333:schedule/*",
        ),
        (
            "outreach-prod-email-reconciler",
            "ManageEmailSchedules",
            "arn:aws:scheduler:eu-central-1:111122223333:schedule/outreach-prod-email*",
        ),
        ("outreach-prod-email-reconciler", "PassSchedulerRole", "arn:aws:iam::111122223333:role/*"),
        (
            "outreach-prod-email-worker",
            "ReadContactStops",
            "arn:aws:dynamodb:eu-central-1:111122223333:table/*",
        ),
        (
            "outreach-prod-ses-event-consumer",
            "DeleteCancelledEmailSchedules",
            "arn:aws:scheduler:eu-central-1:111122223333:schedule/*",
        ),
        (
            "outreach-prod-unsubscribe",
            "VerifyUnsubscribeTokens",
            "arn:aws:kms:eu-central-1:111122223333:key/*",
        ),
        ("outreach-prod-unsubscribe", "FanOutUnsubscribes", "arn:aws:sqs:eu-central-1:111122223333:*"),
        (
            "outreach-prod-inbound-processor",
            "ReadReceivedMessages",
            "arn:aws:s3:::outreach-prod-inbound-111122223333-eu-central-1/*",
        ),
        (
            "outreach-prod-inbound-processor",
            "ForwardFromTheForwarder",
            "arn:aws:ses:eu-central-1:111122223333:identity/*",
        ),
        (
            "outreach-prod-inbound-processor",
            "MoveEmailSchedules",
            "arn:aws:scheduler:eu-central-1:111122223333:schedule/*",
        ),
        (
            "outreach-prod-inbound-processor",
            "KeepInboundReceipts",
            "arn:aws:dynamodb:eu-central-1:111122223333:table/*",
        ),
    ],
)
def test_a_resource_wider_than_one_planned_resource_is_reported_too_wide(
    evidence: Evidence, name: str, sid: str, resource: str
) -> None:
    policy = copy.deepcopy(_function(evidence, name).policy)
    (statement,) = [s for s in policy["Statement"] if s["Sid"] == sid]
    statement["Resource"] = [resource]
    comparison = _compare(evidence, name, policy)
    assert comparison.too_wide == [Grant(sid, a, resource) for a in sorted(statement["Action"])]
    assert comparison.missing == []


@pytest.mark.parametrize("name", FUNCTION_NAMES)
def test_removing_any_one_granted_action_is_reported_missing(evidence: Evidence, name: str) -> None:
    policy = _function(evidence, name).policy
    needs = _needs(evidence, name)
    for action in sorted({grant.action for grant in grants(policy)}):
        comparison = compare(_without(policy, action), needs, evidence.plan.arns())
        assert comparison.missing == sorted(n for n in needs if n.action == action), action
        assert comparison.missing, action
