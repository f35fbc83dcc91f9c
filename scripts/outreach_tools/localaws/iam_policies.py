"""IAM policy evaluation for delivery checks: does a role allow an action, does an ARN match ``ArnLike``.

The emulator stores policies but does not enforce them; the delivery layer asks here before it hands an
event to Lambda. Wildcards follow IAM: ``*`` matches any run of characters and ``?`` one character
(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html#Conditions_ARN).
An explicit Deny wins over any Allow; no Allow means denied
(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html).
Conservative where this evaluator is simpler than IAM: an Allow statement with a ``Condition`` or a
``NotAction``/``NotResource`` grants nothing, a Deny statement with a ``Condition`` always applies.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any


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


def documents_allow(documents: list[Any], action: str, resource: str) -> bool:
    """Whether identity policy ``documents`` together allow ``action`` on ``resource``."""
    allowed = False
    for document in documents:
        for statement in _statements(document):
            if not _names(statement, action, resource):
                continue
            if statement.get("Effect") == "Deny":
                return False
            plain = "Condition" not in statement and "Action" in statement and "Resource" in statement
            if statement.get("Effect") == "Allow" and plain:
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
