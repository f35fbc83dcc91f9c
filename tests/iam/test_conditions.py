"""The roles' conditions: each function reaches only the rows it owns, sends only as its identity,
passes its role only to Scheduler, and only the email group's schedules assume the scheduler role.

``test_least_privilege`` already requires every role to be exact, conditions included: each recorded
key within the role's ``dynamodb:LeadingKeys`` patterns, each pattern used, no table item action, no
``ses:SendEmail`` and no ``iam:PassRole`` without its condition (``role_comparison``). The tests here
show each of those findings on copies of the planned policies with a condition taken out or widened,
name what each role refuses (keys of other kinds, other senders, other services), and check the
scheduler role's trust policy (``trust``).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from embedded_aws.iam_policies import documents_allow
from tests.iam.conftest import EVIDENCE_TIMEOUT, Evidence
from tests.iam.function_needs import function_needs
from tests.iam.needs import Need, context_of
from tests.iam.operation_actions import FROM_ADDRESS, LEADING_KEYS, PASSED_TO_SERVICE
from tests.iam.planned_roles import PlannedFunction
from tests.iam.role_comparison import ITEM_ACTIONS, Comparison, ConditionFinding, compare, grants
from tests.iam.scenarios import FUNCTIONS
from tests.iam.trust import scheduler_trust_findings

pytestmark = pytest.mark.timeout(EVIDENCE_TIMEOUT)

TABLE = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-prod-tasks"
LEDGER = "arn:aws:dynamodb:eu-central-1:111122223333:table/outreach-prod-contacts"
IDENTITY = "arn:aws:ses:eu-central-1:111122223333:identity/example.com"
CONFIGURATION_SET = "arn:aws:ses:eu-central-1:111122223333:configuration-set/outreach-prod-email"
SCHEDULER_ROLE = "arn:aws:iam::111122223333:role/outreach-prod-email-scheduler"
SCRAPER = "outreach-prod-scraper"
WORKER = "outreach-prod-email-worker"
SCRAPE_RECONCILER = "outreach-prod-scrape-reconciler"
EMAIL_RECONCILER = "outreach-prod-email-reconciler"
DISPATCHER = "outreach-prod-dispatcher"
CONSUMER = "outreach-prod-ses-event-consumer"
UNSUBSCRIBE = "outreach-prod-unsubscribe"

# One key of each kind of row in the tasks table (partition key task_id only).
KEYS = {
    "scrape task": "scrape#job-1#" + "0" * 32,
    "email task": "email#spring#" + "0" * 32,
    "counter shard": "job#job-1#7",
    "job row": "job#job-1",
}
# What each function may do to which kind of row; every other (action, kind) is refused.
REACHES: dict[str, dict[str, set[str]]] = {
    DISPATCHER: {},
    SCRAPER: {
        "dynamodb:GetItem": {"scrape task"},
        "dynamodb:UpdateItem": {"scrape task", "counter shard"},
    },
    SCRAPE_RECONCILER: {"dynamodb:UpdateItem": {"scrape task", "counter shard"}},
    WORKER: {
        "dynamodb:GetItem": {"email task"},
        "dynamodb:UpdateItem": {"email task", "counter shard"},
    },
    EMAIL_RECONCILER: {"dynamodb:UpdateItem": {"email task", "counter shard"}},
    CONSUMER: {
        "dynamodb:GetItem": {"email task"},
        "dynamodb:BatchGetItem": {"email task"},
        "dynamodb:UpdateItem": {"email task", "counter shard"},
    },
    UNSUBSCRIBE: {},
}
# One key of each kind of record in the contact ledger (partition key contact_key only).
LEDGER_KEYS = {
    "address record": "address#someone@example.com",
    "domain record": "domain#example.com",
}
# What each function may do to which kind of ledger record; every other (action, kind) is refused.
LEDGER_REACHES: dict[str, dict[str, set[str]]] = {
    DISPATCHER: {},
    SCRAPER: {},
    SCRAPE_RECONCILER: {},
    WORKER: {"dynamodb:BatchGetItem": {"address record", "domain record"}},
    EMAIL_RECONCILER: {},
    CONSUMER: {
        "dynamodb:GetItem": {"address record"},
        "dynamodb:BatchGetItem": {"address record", "domain record"},
        "dynamodb:UpdateItem": {"address record"},
    },
    UNSUBSCRIBE: {"dynamodb:UpdateItem": {"address record"}},
}
# Statements that read or write the table's items, each with its LeadingKeys patterns.
KEYED_STATEMENTS = [
    (SCRAPER, "ReadScrapeTasks", ["scrape#*"]),
    (SCRAPER, "ClaimAndCompleteTasks", ["scrape#*", "job#*#?"]),
    (SCRAPE_RECONCILER, "MoveStrandedTasks", ["scrape#*", "job#*#?"]),
    (WORKER, "ReadEmailTasks", ["email#*"]),
    (WORKER, "ClaimAndCompleteEmailTasks", ["email#*", "job#*#?"]),
    (EMAIL_RECONCILER, "MoveStrandedEmailTasks", ["email#*", "job#*#?"]),
    (WORKER, "ReadContactStops", ["address#*", "domain#*"]),
    (CONSUMER, "RecordContactEvents", ["address#*"]),
    (CONSUMER, "ReadContactStops", ["address#*", "domain#*"]),
    (CONSUMER, "ReadEmailTasks", ["email#*"]),
    (CONSUMER, "MarkAndCancelEmailTasks", ["email#*", "job#*#?"]),
    (UNSUBSCRIBE, "RecordUnsubscribes", ["address#*"]),
]


def _function(evidence: Evidence, name: str) -> PlannedFunction:
    return evidence.plan.functions()[name]


def _compare(evidence: Evidence, name: str, policy: dict[str, Any]) -> Comparison:
    needs = function_needs(_function(evidence, name), evidence.plan, evidence.records)
    return compare(policy, needs, evidence.plan.arns())


def _statement(policy: dict[str, Any], sid: str) -> dict[str, Any]:
    statements: list[dict[str, Any]] = policy["Statement"]
    (statement,) = [s for s in statements if s["Sid"] == sid]
    return statement


def _changed(evidence: Evidence, name: str, sid: str, condition: dict[str, Any] | None) -> dict[str, Any]:
    """A copy of the function's policy whose statement ``sid`` has ``condition`` (None: no condition)."""
    policy = copy.deepcopy(_function(evidence, name).policy)
    statement = _statement(policy, sid)
    statement.pop("Condition", None)
    if condition:
        statement["Condition"] = condition
    return policy


def _findings(policy: dict[str, Any], sid: str, key: str, value: str, why: str) -> list[ConditionFinding]:
    statement = _statement(policy, sid)
    return sorted(
        ConditionFinding(sid, action, resource, key, value, why)
        for action in statement["Action"]
        for resource in statement["Resource"]
    )


def _allows(function: PlannedFunction, action: str, resource: str, **context: list[str]) -> bool:
    return documents_allow([function.policy], action, resource, context)


# ---- dynamodb:LeadingKeys ---------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "sid", "patterns"), KEYED_STATEMENTS)
def test_each_table_statement_is_confined_to_its_key_kinds(
    evidence: Evidence, name: str, sid: str, patterns: list[str]
) -> None:
    condition = _statement(_function(evidence, name).policy, sid)["Condition"]
    assert condition == {
        "ForAllValues:StringLike": {LEADING_KEYS: patterns},
        "Null": {LEADING_KEYS: ["false"]},
    }


@pytest.mark.parametrize("name", [row.function for row in FUNCTIONS])
def test_every_recorded_key_of_a_function_is_within_its_roles_leading_keys(
    evidence: Evidence, name: str
) -> None:
    function = _function(evidence, name)
    keyed = [
        n
        for n in function_needs(function, evidence.plan, evidence.records)
        if LEADING_KEYS in n.request_context
    ]
    outside = [
        n for n in keyed if not documents_allow([function.policy], n.action, n.resource, n.request_context)
    ]
    assert outside == []
    reaches = bool(REACHES[name]) or bool(LEDGER_REACHES[name])
    assert bool(keyed) == reaches, "the recording names the keys of every table request"


def _reached(policy: dict[str, Any], table: str = TABLE, keys: dict[str, str] = KEYS) -> dict[str, set[str]]:
    """Per item action, the kinds of row of ``table`` that ``policy`` lets a request with that row's
    key reach."""
    reached = {
        action: {
            kind
            for kind, key in keys.items()
            if documents_allow([policy], action, table, {LEADING_KEYS: [key]})
        }
        for action in sorted(ITEM_ACTIONS)
    }
    return {action: kinds for action, kinds in reached.items() if kinds}


@pytest.mark.parametrize("name", [row.function for row in FUNCTIONS])
def test_a_role_reaches_only_the_rows_it_owns(evidence: Evidence, name: str) -> None:
    assert _reached(_function(evidence, name).policy) == REACHES[name]


@pytest.mark.parametrize("name", [row.function for row in FUNCTIONS])
def test_a_role_reaches_only_the_contact_records_it_owns(evidence: Evidence, name: str) -> None:
    assert _reached(_function(evidence, name).policy, LEDGER, LEDGER_KEYS) == LEDGER_REACHES[name]


@pytest.mark.parametrize(("name", "sid", "patterns"), KEYED_STATEMENTS)
def test_a_table_request_naming_no_key_or_keys_of_two_kinds_is_refused(
    evidence: Evidence, name: str, sid: str, patterns: list[str]
) -> None:
    function = _function(evidence, name)
    statement = _statement(function.policy, sid)
    (table,) = statement["Resource"]
    foreign = "email#spring#1" if patterns[0].startswith("scrape") else "scrape#job-1#1"
    own = patterns[0].replace("*", "x")
    for action in statement["Action"]:
        assert _allows(function, action, table, **{LEADING_KEYS: [own]})
        assert not _allows(function, action, table)
        assert not _allows(function, action, table, **{LEADING_KEYS: [own, foreign]})


@pytest.mark.parametrize(("name", "sid", "patterns"), KEYED_STATEMENTS)
def test_a_table_statement_without_its_leading_keys_condition_is_reported(
    evidence: Evidence, name: str, sid: str, patterns: list[str]
) -> None:
    policy = _changed(evidence, name, sid, None)
    comparison = _compare(evidence, name, policy)
    why = "writes or reads the table's items without a ForAllValues condition on it"
    assert comparison == Comparison(conditions=_findings(policy, sid, LEADING_KEYS, "", why)), str(comparison)


@pytest.mark.parametrize(("name", "sid", "patterns"), KEYED_STATEMENTS)
def test_a_table_statement_without_its_null_test_is_reported(
    evidence: Evidence, name: str, sid: str, patterns: list[str]
) -> None:
    policy = _changed(evidence, name, sid, {"ForAllValues:StringLike": {LEADING_KEYS: patterns}})
    comparison = _compare(evidence, name, policy)
    why = "no Null false test: a request without the key would pass ForAllValues"
    assert comparison == Comparison(conditions=_findings(policy, sid, LEADING_KEYS, "", why)), str(comparison)


@pytest.mark.parametrize(
    ("name", "sid", "patterns", "wide"),
    [
        (SCRAPER, "ClaimAndCompleteTasks", ["*"], "*"),
        (SCRAPER, "ClaimAndCompleteTasks", ["scrape#*", "*#*"], "*#*"),
        (WORKER, "ClaimAndCompleteEmailTasks", ["email#*", "j*"], "j*"),
        (EMAIL_RECONCILER, "MoveStrandedEmailTasks", ["*#*"], "*#*"),
    ],
)
def test_a_leading_keys_pattern_beyond_one_key_kind_is_reported(
    evidence: Evidence, name: str, sid: str, patterns: list[str], wide: str
) -> None:
    condition = {"ForAllValues:StringLike": {LEADING_KEYS: patterns}, "Null": {LEADING_KEYS: "false"}}
    policy = _changed(evidence, name, sid, condition)
    comparison = _compare(evidence, name, policy)
    why = "reaches beyond the one key kind its keys share"
    assert comparison == Comparison(conditions=_findings(policy, sid, LEADING_KEYS, wide, why)), str(
        comparison
    )


@pytest.mark.parametrize(
    ("name", "sid", "patterns", "extra"),
    [
        (SCRAPER, "ReadScrapeTasks", ["scrape#*", "email#*"], "email#*"),
        (SCRAPER, "ReadScrapeTasks", ["scrape#*", "job#*#?"], "job#*#?"),
        (WORKER, "ClaimAndCompleteEmailTasks", ["email#*", "job#*#?", "scrape#*"], "scrape#*"),
        (SCRAPE_RECONCILER, "MoveStrandedTasks", ["scrape#*", "job#*#?", "email#*"], "email#*"),
        (UNSUBSCRIBE, "RecordUnsubscribes", ["address#*", "domain#*"], "domain#*"),
        (CONSUMER, "RecordContactEvents", ["address#*", "domain#*"], "domain#*"),
    ],
)
def test_a_leading_keys_pattern_no_recorded_key_uses_is_reported(
    evidence: Evidence, name: str, sid: str, patterns: list[str], extra: str
) -> None:
    condition = {"ForAllValues:StringLike": {LEADING_KEYS: patterns}, "Null": {LEADING_KEYS: "false"}}
    policy = _changed(evidence, name, sid, condition)
    comparison = _compare(evidence, name, policy)
    why = "no key the function uses matches it"
    assert comparison == Comparison(conditions=_findings(policy, sid, LEADING_KEYS, extra, why)), str(
        comparison
    )


def test_a_recorded_key_outside_the_patterns_is_reported_missing(evidence: Evidence) -> None:
    # The scraper's writes confined to scrape tasks: every counter shard update it makes is missing.
    condition = {"ForAllValues:StringLike": {LEADING_KEYS: ["scrape#*"]}, "Null": {LEADING_KEYS: "false"}}
    policy = _changed(evidence, SCRAPER, "ClaimAndCompleteTasks", condition)
    comparison = _compare(evidence, SCRAPER, policy)
    needs = function_needs(_function(evidence, SCRAPER), evidence.plan, evidence.records)
    shards = sorted(n for n in needs if n.request_context.get(LEADING_KEYS, [""])[0].startswith("job#"))
    assert shards
    assert comparison == Comparison(missing=shards), str(comparison)


def test_a_pattern_that_reaches_a_jobs_own_row_is_caught_by_the_row_probe(evidence: Evidence) -> None:
    # job#* serves the recorded shard keys as job#*#? does, so the comparison cannot tell them apart;
    # the probe with one key per kind can: job#* also reaches the job's own row, the operator's.
    condition = {
        "ForAllValues:StringLike": {LEADING_KEYS: ["email#*", "job#*"]},
        "Null": {LEADING_KEYS: "false"},
    }
    policy = _changed(evidence, WORKER, "ClaimAndCompleteEmailTasks", condition)
    assert _compare(evidence, WORKER, policy).exact
    assert _reached(policy) == {
        **REACHES[WORKER],
        "dynamodb:UpdateItem": {"email task", "counter shard", "job row"},
    }


# ---- recorded reads of another kind's rows: refused -----------------------------------------------


# ---- ses:FromAddress --------------------------------------------------------------------------------


def test_the_worker_sends_only_from_addresses_of_the_planned_identity(evidence: Evidence) -> None:
    worker = _function(evidence, WORKER)
    assert _statement(worker.policy, "SendWithTheCampaignIdentity")["Condition"] == {
        "StringLike": {FROM_ADDRESS: ["*@example.com", "*@*.example.com"]}
    }
    for resource in (IDENTITY, CONFIGURATION_SET):
        for sender in ("sales@example.com", "news@mail.example.com"):
            assert _allows(worker, "ses:SendEmail", resource, **{FROM_ADDRESS: [sender]}), (resource, sender)
        for sender in ("ceo@evil.test", "sales@example.com.evil.test", "Sales@Example.com"):
            assert not _allows(worker, "ses:SendEmail", resource, **{FROM_ADDRESS: [sender]}), (
                resource,
                sender,
            )
        assert not _allows(worker, "ses:SendEmail", resource)


def test_send_email_without_from_address_is_reported(evidence: Evidence) -> None:
    policy = _changed(evidence, WORKER, "SendWithTheCampaignIdentity", None)
    comparison = _compare(evidence, WORKER, policy)
    why = "sends from any address: no ses:FromAddress condition"
    expected = _findings(policy, "SendWithTheCampaignIdentity", FROM_ADDRESS, "", why)
    assert comparison == Comparison(conditions=expected), str(comparison)


@pytest.mark.parametrize("sender", ["*", "*@*", "*@example.org"])
def test_a_from_address_beyond_the_planned_identity_is_reported(evidence: Evidence, sender: str) -> None:
    condition = {"StringLike": {FROM_ADDRESS: ["*@example.com", sender]}}
    policy = _changed(evidence, WORKER, "SendWithTheCampaignIdentity", condition)
    comparison = _compare(evidence, WORKER, policy)
    why = "not an address of a planned SES identity"
    expected = _findings(policy, "SendWithTheCampaignIdentity", FROM_ADDRESS, sender, why)
    assert comparison == Comparison(conditions=expected), str(comparison)


def test_recorded_senders_outside_the_condition_are_reported_missing(evidence: Evidence) -> None:
    condition = {"StringEquals": {FROM_ADDRESS: ["nobody@example.com"]}}
    policy = _changed(evidence, WORKER, "SendWithTheCampaignIdentity", condition)
    comparison = _compare(evidence, WORKER, policy)
    needs = function_needs(_function(evidence, WORKER), evidence.plan, evidence.records)
    sends = sorted(n for n in needs if n.action == "ses:SendEmail")
    assert sends
    assert comparison.missing == sends


# ---- iam:PassedToService ----------------------------------------------------------------------------


def test_the_email_reconciler_passes_the_scheduler_role_to_scheduler_only(evidence: Evidence) -> None:
    reconciler = _function(evidence, EMAIL_RECONCILER)
    assert _statement(reconciler.policy, "PassSchedulerRole")["Condition"] == {
        "StringEquals": {PASSED_TO_SERVICE: ["scheduler.amazonaws.com"]}
    }
    assert _allows(
        reconciler, "iam:PassRole", SCHEDULER_ROLE, **{PASSED_TO_SERVICE: ["scheduler.amazonaws.com"]}
    )
    for service in ("lambda.amazonaws.com", "ec2.amazonaws.com", "events.amazonaws.com"):
        assert not _allows(reconciler, "iam:PassRole", SCHEDULER_ROLE, **{PASSED_TO_SERVICE: [service]})
    assert not _allows(reconciler, "iam:PassRole", SCHEDULER_ROLE)


def test_pass_role_without_passed_to_service_is_reported(evidence: Evidence) -> None:
    policy = _changed(evidence, EMAIL_RECONCILER, "PassSchedulerRole", None)
    comparison = _compare(evidence, EMAIL_RECONCILER, policy)
    why = "passes the role to any service: no iam:PassedToService condition"
    expected = _findings(policy, "PassSchedulerRole", PASSED_TO_SERVICE, "", why)
    assert comparison == Comparison(conditions=expected), str(comparison)


@pytest.mark.parametrize("service", ["*", "*.amazonaws.com"])
def test_a_passed_to_service_wildcard_is_reported(evidence: Evidence, service: str) -> None:
    condition = {"StringLike": {PASSED_TO_SERVICE: service}}
    policy = _changed(evidence, EMAIL_RECONCILER, "PassSchedulerRole", condition)
    comparison = _compare(evidence, EMAIL_RECONCILER, policy)
    expected = _findings(policy, "PassSchedulerRole", PASSED_TO_SERVICE, service, "not one service principal")
    assert comparison == Comparison(conditions=expected), str(comparison)


def test_pass_role_needs_name_scheduler_as_the_service(evidence: Evidence) -> None:
    needs = function_needs(_function(evidence, EMAIL_RECONCILER), evidence.plan, evidence.records)
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
    environment = _function(evidence, EMAIL_RECONCILER).environment
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


# ---- every table, sender and pass-role grant is conditioned ---------------------------------------


def test_no_planned_role_grants_a_table_item_action_send_email_or_pass_role_unconditioned(
    evidence: Evidence,
) -> None:
    unconditioned = [
        (name, str(grant))
        for name, function in evidence.plan.functions().items()
        for grant in grants(function.policy)
        if not grant.condition
        and (
            (grant.action in ITEM_ACTIONS and grant.resource == TABLE)
            or grant.action in ("ses:SendEmail", "iam:PassRole")
        )
    ]
    assert unconditioned == []
