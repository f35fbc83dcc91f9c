"""IAM policy evaluation for delivery checks: does a role allow an action, does an ARN match ``ArnLike``.

The emulator stores policies but does not enforce them; the delivery layer asks here before it hands an
event to Lambda. Wildcards follow IAM: ``*`` matches any run of characters and ``?`` one character
(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html#Conditions_ARN).
An explicit Deny wins over any Allow; no Allow means denied
(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html).
Conservative where this evaluator is simpler than IAM: an Allow statement with a ``Condition`` or a
``NotAction``/``NotResource`` grants nothing, a Deny statement with a ``Condition`` always applies.

Given a request context (``context``: condition key to its values), a ``Condition`` is evaluated as
IAM does for the operators below, and any other operator still makes its statement conservative
(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition.html):
the operators of a block, the keys of an operator and the request values of a key must all match,
any one of a key's policy values may (``StringEquals``/``StringLike`` case-sensitive, ``ArnEquals``/
``ArnLike`` part by part, ``Bool`` ``true``/``false`` in any case, with an ``IfExists`` suffix a missing
key matches); ``ForAllValues:`` needs every request value to match a policy value and is true for a
missing key, ``ForAnyValue:`` needs one and is false for a missing key
(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-single-vs-multi-valued-context-keys.html);
``Null`` ``"true"`` matches a missing key, ``"false"`` a present one
(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html#Conditions_Null).
Condition key names are matched case-insensitively. ``trust_allows`` evaluates a role's trust policy
for a service principal the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping
from functools import lru_cache
from typing import Any

from embedded_aws.errors import UnsupportedConditionError

# A request context: each condition key (any case) with its values; a missing key is absent.
Context = Mapping[str, Collection[str]]


@lru_cache(maxsize=512)
def _wildcard(pattern: str, case_insensitive: bool) -> re.Pattern[str]:
    body = re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".")
    return re.compile(f"^{body}$", re.IGNORECASE if case_insensitive else 0)


def arn_like(pattern: str, arn: str) -> bool:
    """IAM's ``ArnLike``: each of the six colon-separated ARN parts matched with ``*``/``?`` wildcards."""
    pattern_parts = pattern.split(":", 5)
    arn_parts = arn.split(":", 5)
    if len(pattern_parts) != len(arn_parts):
        return False
    return all(_wildcard(p, False).match(a) for p, a in zip(pattern_parts, arn_parts, strict=True))


def _values(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _statements(document: Any) -> list[dict[str, Any]]:
    if isinstance(document, str):
        document = json.loads(document)
    statements = document.get("Statement", [])
    return [statements] if isinstance(statements, dict) else list(statements)


def _names(statement: dict[str, Any], action: str, resource: str) -> bool:
    """Whether the statement's Action and Resource (or inverted NotAction/NotResource) name the request."""
    if "Action" in statement:
        action_hit = any(_wildcard(a, True).match(action) for a in _values(statement["Action"]))
    else:
        action_hit = not any(_wildcard(a, True).match(action) for a in _values(statement.get("NotAction")))
    if "Resource" in statement:
        resource_hit = any(_wildcard(r, False).match(resource) for r in _values(statement["Resource"]))
    else:
        resource_hit = not any(
            _wildcard(r, False).match(resource) for r in _values(statement.get("NotResource"))
        )
    return action_hit and resource_hit


_MATCHERS: dict[str, Callable[[str, str], bool]] = {
    "StringEquals": lambda pattern, value: pattern == value,
    "StringLike": lambda pattern, value: bool(_wildcard(pattern, False).match(value)),
    "ArnEquals": lambda pattern, value: pattern == value,
    "ArnLike": arn_like,
    # Bool compares "true"/"false" without regard to case (condition_operators.html#Conditions_Boolean).
    "Bool": lambda pattern, value: pattern.lower() == value.lower(),
}


def _operator_matches(operator: str, policy_values: list[str], request: list[str] | None) -> bool:
    """One operator on one key: ``request`` is the key's request values, None when it is missing."""
    if operator == "Null":
        if policy_values not in (["true"], ["false"]):
            raise UnsupportedConditionError(f"Null takes true or false, not {policy_values}")
        return (request is None or not request) == (policy_values == ["true"])
    qualifier, _, base = operator.rpartition(":")
    if_exists = base.endswith("IfExists")
    base = base.removesuffix("IfExists")
    match = _MATCHERS.get(base)
    if match is None or qualifier not in ("", "ForAllValues", "ForAnyValue"):
        raise UnsupportedConditionError(f"condition operator {operator} is not evaluated here")

    def hit(value: str) -> bool:
        return any(match(pattern, value) for pattern in policy_values)

    if qualifier == "ForAllValues":
        return all(hit(value) for value in request or [])
    if qualifier == "ForAnyValue":
        return any(hit(value) for value in request or [])
    if not request:
        return if_exists
    return any(hit(value) for value in request)


def conditions_match(condition: Mapping[str, Any], context: Context) -> bool:
    """Whether a statement's ``Condition`` block holds for a request with ``context``.

    Raises ``UnsupportedConditionError`` for an operator it does not evaluate.
    """
    keys = {key.lower(): [str(v) for v in values] for key, values in context.items()}
    for operator, entries in condition.items():
        for key, values in entries.items():
            if not _operator_matches(operator, _values(values), keys.get(key.lower())):
                return False
    return True


def _applies(statement: dict[str, Any], context: Context | None) -> bool | None:
    """Whether the statement's condition holds: True or False, None when it cannot be evaluated."""
    if "Condition" not in statement:
        return True
    if context is None:
        return None
    try:
        return conditions_match(statement["Condition"], context)
    except UnsupportedConditionError:
        return None


def documents_allow(documents: list[Any], action: str, resource: str, context: Context | None = None) -> bool:
    """Whether identity policy ``documents`` together allow ``action`` on ``resource``.

    Without ``context`` a conditional Allow grants nothing and a conditional Deny applies; with one,
    conditions are evaluated (see the module docstring), and one this evaluator cannot evaluate is
    treated the same conservative way.
    """
    allowed = False
    for document in documents:
        for statement in _statements(document):
            if not _names(statement, action, resource):
                continue
            applies = _applies(statement, context)
            if statement.get("Effect") == "Deny" and applies is not False:
                return False
            plain = "Action" in statement and "Resource" in statement
            if statement.get("Effect") == "Allow" and plain and applies:
                allowed = True
    return allowed


def _principal_services(statement: dict[str, Any]) -> list[str]:
    principal = statement.get("Principal")
    if principal == "*":
        return ["*"]
    if isinstance(principal, dict):
        return _values(principal.get("Service"))
    return []


def trust_allows(document: Any, service: str, context: Context, action: str = "sts:AssumeRole") -> bool:
    """Whether a role's trust policy lets the service principal ``service`` assume it with ``context``
    (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_principal.html#principal-services)."""
    allowed = False
    for statement in _statements(document):
        actions = _values(statement.get("Action"))
        if not any(_wildcard(a, True).match(action) for a in actions):
            continue
        services = _principal_services(statement)
        if "*" not in services and service not in services:
            continue
        applies = _applies(statement, context)
        if statement.get("Effect") == "Deny" and applies is not False:
            return False
        if statement.get("Effect") == "Allow" and applies:
            allowed = True
    return allowed


def role_policy_documents(iam: Any, role_arn: str) -> list[Any] | None:
    """The inline and attached policy documents of the role ``role_arn``; None when the role is missing."""
    name = role_arn.rsplit("/", 1)[-1]
    try:
        iam.get_role(RoleName=name)
    except iam.exceptions.NoSuchEntityException:
        return None
    documents: list[Any] = []
    for page in iam.get_paginator("list_role_policies").paginate(RoleName=name):
        documents.extend(
            iam.get_role_policy(RoleName=name, PolicyName=policy_name)["PolicyDocument"]
            for policy_name in page.get("PolicyNames", [])
        )
    for page in iam.get_paginator("list_attached_role_policies").paginate(RoleName=name):
        for attached in page.get("AttachedPolicies", []):
            policy = iam.get_policy(PolicyArn=attached["PolicyArn"])["Policy"]
            version = iam.get_policy_version(
                PolicyArn=attached["PolicyArn"], VersionId=policy["DefaultVersionId"]
            )
            documents.append(version["PolicyVersion"]["Document"])
    return documents
