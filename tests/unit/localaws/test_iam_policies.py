"""The delivery layer's IAM evaluation: ArnLike wildcards, Allow needed, explicit Deny wins."""

from __future__ import annotations

from outreach_tools.localaws.iam_policies import arn_like, documents_allow

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
