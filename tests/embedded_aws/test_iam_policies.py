"""The delivery layer's IAM evaluation: ArnLike wildcards, Allow needed, explicit Deny wins, and with a
request context the conditions (set operators, Null, IfExists) and trust policies."""

from __future__ import annotations

from embedded_aws.iam_policies import arn_like, documents_allow, trust_allows

FUNCTION = "arn:aws:lambda:us-east-1:123456789012:function:reconciler"


def test_arnlike_matches_wildcards_within_each_arn_part() -> None:
    rule = "arn:aws:events:us-east-1:123456789012:rule/reconcile-scrape"
    assert arn_like("arn:aws:events:*:123456789012:rule/reconcile-*", rule)
    assert arn_like("arn:aws:events:us-east-1:123456789012:rule/reconcile-scrap?", rule)
    assert not arn_like("arn:aws:events:us-east-1:123456789012:rule/other-*", rule)
    assert not arn_like("arn:aws:events:us-east-1:999999999999:rule/*", rule)


def test_a_role_allows_an_action_only_through_an_allow_statement_naming_it() -> None:
    invoke = {"Effect": "Allow", "Action": "lambda:Invoke*", "Resource": "arn:aws:lambda:*:*:function:*"}
    other = {"Effect": "Allow", "Action": ["sqs:SendMessage"], "Resource": "*"}
    assert documents_allow([{"Statement": [invoke]}], "lambda:InvokeFunction", FUNCTION)
    assert not documents_allow([{"Statement": [other]}], "lambda:InvokeFunction", FUNCTION)
    assert not documents_allow([], "lambda:InvokeFunction", FUNCTION)


def test_an_explicit_deny_wins_over_any_allow() -> None:
    allow = {"Effect": "Allow", "Action": "*", "Resource": "*"}
    deny = {"Effect": "Deny", "Action": "lambda:InvokeFunction", "Resource": FUNCTION}
    assert not documents_allow(
        [{"Statement": allow}, {"Statement": [deny]}], "lambda:InvokeFunction", FUNCTION
    )


def test_a_conditional_allow_grants_nothing() -> None:
    conditional = {
        "Effect": "Allow",
        "Action": "lambda:InvokeFunction",
        "Resource": "*",
        "Condition": {"StringEquals": {"aws:SourceAccount": "123456789012"}},
    }
    assert not documents_allow([{"Statement": [conditional]}], "lambda:InvokeFunction", FUNCTION)


TABLE = "arn:aws:dynamodb:eu-central-1:123456789012:table/tasks"


def _keyed(*patterns: str, null_guard: bool = True) -> dict[str, object]:
    condition: dict[str, object] = {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": list(patterns)}}
    if null_guard:
        condition["Null"] = {"dynamodb:LeadingKeys": "false"}
    return {
        "Statement": [
            {"Effect": "Allow", "Action": "dynamodb:UpdateItem", "Resource": TABLE, "Condition": condition}
        ]
    }


def test_for_all_values_needs_every_request_value_to_match_a_pattern() -> None:
    policy = _keyed("scrape#*", "job#*#?")
    allowed = [["scrape#j#h"], ["job#j#3"], ["scrape#j#h", "job#j#3"]]
    refused = [["email#c#h"], ["job#j"], ["job#j#10"], ["scrape#j#h", "email#c#h"]]
    for keys in allowed:
        assert documents_allow([policy], "dynamodb:UpdateItem", TABLE, {"dynamodb:LeadingKeys": keys}), keys
    for keys in refused:
        assert not documents_allow([policy], "dynamodb:UpdateItem", TABLE, {"dynamodb:LeadingKeys": keys}), (
            keys
        )


def test_for_all_values_holds_for_a_missing_key_unless_a_null_test_refuses_it() -> None:
    assert documents_allow([_keyed("scrape#*", null_guard=False)], "dynamodb:UpdateItem", TABLE, {})
    assert not documents_allow([_keyed("scrape#*")], "dynamodb:UpdateItem", TABLE, {})
    assert not documents_allow(
        [_keyed("scrape#*")], "dynamodb:UpdateItem", TABLE, {"dynamodb:LeadingKeys": []}
    )


def test_condition_key_names_match_in_any_case_and_values_case_sensitively() -> None:
    policy = _keyed("scrape#*")
    assert documents_allow([policy], "dynamodb:UpdateItem", TABLE, {"DynamoDB:leadingkeys": ["scrape#j#h"]})
    assert not documents_allow(
        [policy], "dynamodb:UpdateItem", TABLE, {"dynamodb:LeadingKeys": ["SCRAPE#j#h"]}
    )


def _ses(operator: str, *senders: str) -> dict[str, object]:
    statement = {
        "Effect": "Allow",
        "Action": "ses:SendEmail",
        "Resource": "*",
        "Condition": {operator: {"ses:FromAddress": list(senders)}},
    }
    return {"Statement": [statement]}


def test_single_valued_operators_need_the_key_unless_if_exists() -> None:
    like = _ses("StringLike", "*@example.com", "*@*.example.com")
    assert documents_allow([like], "ses:SendEmail", "*", {"ses:FromAddress": ["news@mail.example.com"]})
    assert not documents_allow([like], "ses:SendEmail", "*", {"ses:FromAddress": ["ceo@evil.test"]})
    assert not documents_allow([like], "ses:SendEmail", "*", {})
    equals = _ses("StringEquals", "sales@example.com")
    assert documents_allow([equals], "ses:SendEmail", "*", {"ses:FromAddress": ["sales@example.com"]})
    assert not documents_allow([equals], "ses:SendEmail", "*", {"ses:FromAddress": ["Sales@example.com"]})
    if_exists = _ses("StringEqualsIfExists", "sales@example.com")
    assert documents_allow([if_exists], "ses:SendEmail", "*", {})
    assert not documents_allow([if_exists], "ses:SendEmail", "*", {"ses:FromAddress": ["x@example.com"]})


def test_for_any_value_needs_one_matching_value_and_the_key() -> None:
    policy = _ses("ForAnyValue:StringEquals", "sales@example.com")
    assert documents_allow(
        [policy], "ses:SendEmail", "*", {"ses:FromAddress": ["x@y.test", "sales@example.com"]}
    )
    assert not documents_allow([policy], "ses:SendEmail", "*", {})


def test_an_operator_the_evaluator_does_not_know_keeps_its_statement_conservative() -> None:
    allow = _ses("StringNotEquals", "sales@example.com")
    assert not documents_allow([allow], "ses:SendEmail", "*", {"ses:FromAddress": ["x@example.com"]})
    deny = {
        "Effect": "Deny",
        "Action": "ses:SendEmail",
        "Resource": "*",
        "Condition": {"DateGreaterThan": {"aws:CurrentTime": "2020-01-01T00:00:00Z"}},
    }
    everything = {"Effect": "Allow", "Action": "*", "Resource": "*"}
    assert not documents_allow([{"Statement": [everything, deny]}], "ses:SendEmail", "*", {})


def test_a_conditional_deny_applies_only_when_its_condition_holds_in_the_context() -> None:
    everything = {"Effect": "Allow", "Action": "*", "Resource": "*"}
    deny = {
        "Effect": "Deny",
        "Action": "iam:PassRole",
        "Resource": "*",
        "Condition": {"StringEquals": {"iam:PassedToService": "ec2.amazonaws.com"}},
    }
    policy = {"Statement": [everything, deny]}
    assert documents_allow(
        [policy], "iam:PassRole", "*", {"iam:PassedToService": ["scheduler.amazonaws.com"]}
    )
    assert not documents_allow([policy], "iam:PassRole", "*", {"iam:PassedToService": ["ec2.amazonaws.com"]})
    assert not documents_allow([policy], "iam:PassRole", "*")  # no context: a conditional Deny applies


GROUP = "arn:aws:scheduler:eu-central-1:123456789012:schedule-group/email"


def _trust(condition: dict[str, object]) -> dict[str, object]:
    statement = {
        "Effect": "Allow",
        "Principal": {"Service": "scheduler.amazonaws.com"},
        "Action": "sts:AssumeRole",
        "Condition": condition,
    }
    return {"Statement": [statement]}


def test_a_trust_policy_admits_its_service_principal_when_its_conditions_hold() -> None:
    trust = _trust(
        {"StringEquals": {"aws:SourceAccount": "123456789012"}, "ArnEquals": {"aws:SourceArn": GROUP}}
    )
    own = {"aws:SourceAccount": ["123456789012"], "aws:SourceArn": [GROUP]}
    assert trust_allows(trust, "scheduler.amazonaws.com", own)
    assert not trust_allows(trust, "lambda.amazonaws.com", own)
    assert not trust_allows(trust, "scheduler.amazonaws.com", {"aws:SourceAccount": ["123456789012"]})
    other = {"aws:SourceAccount": ["123456789012"], "aws:SourceArn": [GROUP.replace("/email", "/other")]}
    assert not trust_allows(trust, "scheduler.amazonaws.com", other)
    assert not trust_allows(trust, "scheduler.amazonaws.com", own, action="sts:TagSession")


def test_arn_like_in_a_trust_condition_matches_part_by_part() -> None:
    trust = _trust({"ArnLike": {"aws:SourceArn": "arn:aws:scheduler:*:123456789012:schedule-group/*"}})
    assert trust_allows(trust, "scheduler.amazonaws.com", {"aws:SourceArn": [GROUP]})
    other_account = GROUP.replace("123456789012", "444455556666")
    assert not trust_allows(trust, "scheduler.amazonaws.com", {"aws:SourceArn": [other_account]})
