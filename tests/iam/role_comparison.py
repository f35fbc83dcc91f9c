"""Compare a role's policy with what its function needs, both ways, and how narrowly it grants.

- missing: a need the policy does not allow (it would be AccessDenied on AWS; moto never enforces IAM);
- unused: an (action, resource) pair of an Allow statement that no need uses;
- too wide: a wildcard action, ``*`` as resource for an action that has a resource type, or a
  resource pattern that is not confined to one planned resource (its fixed part must be a planned
  ARN, or a planned ARN followed by ``/`` or ``:``: an index, a key prefix, a log stream), or whose
  wildcard covers a path segment every resource it serves shares (``bucket/*`` for ``results/`` keys);
- conditions: a grant that lacks a condition its action must carry, or a condition value that is
  wider than the planned resources or than what the needs use (``ConditionFinding``):
  - every DynamoDB item action on a table (``ITEM_ACTIONS``) needs ``ForAllValues:StringLike`` (or
    ``StringEquals``) on ``dynamodb:LeadingKeys`` and ``Null`` ``false`` on it: ``ForAllValues`` is true
    for a request without the key, the ``Null`` test refuses such a request
    (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html,
    https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-single-vs-multi-valued-context-keys.html).
    Each key pattern must be used by a need the grant serves (else it is unused), and stay inside
    one key kind: every key it serves has the same first ``#`` segment, which its fixed part starts
    with (``scrape#*``, ``job#*#?``; not ``*`` nor ``*#*``);
  - ``ses:SendEmail`` needs ``ses:FromAddress`` (``StringEquals``/``StringLike``) whose every value is a
    planned identity's: the address of an address identity, ``*@<domain>`` or ``*@*.<domain>`` of a
    domain identity, or one literal address (no ``*`` nor ``?``) at a domain identity or a subdomain
    of one, as the inbound processor's forwarder
    (https://docs.aws.amazon.com/ses/latest/dg/control-user-access.html);
  - ``iam:PassRole`` needs ``iam:PassedToService`` naming service principals, no wildcard
    (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_iam-condition-keys.html#ck_PassedToService).

Policy evaluation is the emulator's (``embedded_aws.iam_policies``), which follows IAM's
wildcards, its explicit-deny rule and, with each need's request context, the conditions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from embedded_aws.iam_policies import documents_allow
from tests.iam.needs import Need
from tests.iam.operation_actions import FROM_ADDRESS, LEADING_KEYS, PASSED_TO_SERVICE
from tests.iam.platform_actions import NO_RESOURCE_TYPE_ACTIONS

# DynamoDB actions that read or write items of a table by key (or its partition, for Query).
ITEM_ACTIONS = frozenset(
    {
        "dynamodb:GetItem",
        "dynamodb:BatchGetItem",
        "dynamodb:Query",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:DeleteItem",
        "dynamodb:BatchWriteItem",
        "dynamodb:ConditionCheckItem",
    }
)
_SET_OPERATORS = ("ForAllValues:StringLike", "ForAllValues:StringEquals")
_TABLE = re.compile(r"^arn:[^:]+:dynamodb:[^:]*:[^:]*:table/[^/]+$")


@dataclass(frozen=True, order=True)
class Grant:
    sid: str
    action: str
    resource: str
    condition: str = field(default="", compare=False)  # the statement's Condition, as JSON

    def __str__(self) -> str:
        return f"{self.sid}: {self.action} on {self.resource}"

    def conditions(self) -> dict[str, dict[str, list[str]]]:
        """The statement's Condition with lists of values; keys lower-cased (IAM ignores their case)."""
        parsed = json.loads(self.condition) if self.condition else {}
        return {
            operator: {key.lower(): _list(values) for key, values in entries.items()}
            for operator, entries in parsed.items()
        }

    def values_of(self, key: str, operators: Iterable[str]) -> list[str] | None:
        """The values of ``key`` under the first of ``operators`` the condition has, or None."""
        conditions = self.conditions()
        for operator in operators:
            if key.lower() in conditions.get(operator, {}):
                return conditions[operator][key.lower()]
        return None


@dataclass(frozen=True, order=True)
class ConditionFinding:
    """A grant without a condition its action needs (``value`` empty), or one condition value too wide
    or unused."""

    sid: str
    action: str
    resource: str
    key: str
    value: str
    why: str

    def __str__(self) -> str:
        what = f"{self.key} {self.value!r}" if self.value else self.key
        return f"{self.sid}: {self.action} on {self.resource}: {what}: {self.why}"


@dataclass(frozen=True)
class Comparison:
    missing: list[Need] = field(default_factory=list)
    unused: list[Grant] = field(default_factory=list)
    too_wide: list[Grant] = field(default_factory=list)
    conditions: list[ConditionFinding] = field(default_factory=list)

    @property
    def exact(self) -> bool:
        return not (self.missing or self.unused or self.too_wide or self.conditions)

    def __str__(self) -> str:
        lines = [f"missing   {n}" for n in self.missing]
        lines += [f"unused    {g}" for g in self.unused]
        lines += [f"too wide  {g}" for g in self.too_wide]
        lines += [f"condition {c}" for c in self.conditions]
        return "\n".join(lines) or "exact"


def _list(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def grants(policy: dict[str, Any]) -> Iterator[Grant]:
    statements = policy.get("Statement", [])
    for statement in [statements] if isinstance(statements, dict) else statements:
        if statement.get("Effect") != "Allow":
            continue
        condition = json.dumps(statement["Condition"], sort_keys=True) if "Condition" in statement else ""
        for action in _list(statement.get("Action", [])):
            for resource in _list(statement.get("Resource", [])):
                yield Grant(str(statement.get("Sid", "")), action, resource, condition)


def _allows(grant: Grant, need: Need) -> bool:
    single: dict[str, Any] = {"Effect": "Allow", "Action": grant.action, "Resource": grant.resource}
    if grant.condition:
        single["Condition"] = json.loads(grant.condition)
    return documents_allow([{"Statement": [single]}], need.action, need.resource, need.request_context)


def _used(grant: Grant, needs: Iterable[Need]) -> bool:
    return any(_allows(grant, need) for need in needs)


def _confined(resource: str, planned_arns: Collection[str]) -> bool:
    fixed = resource.split("*", 1)[0].split("?", 1)[0]
    if fixed == resource:
        return any(resource == arn or resource.startswith((f"{arn}/", f"{arn}:")) for arn in planned_arns)
    return any(fixed.startswith((f"{arn}/", f"{arn}:")) for arn in planned_arns)


def _wider_than_its_uses(grant: Grant, needs: Iterable[Need], planned_arns: Collection[str]) -> bool:
    """A wildcard standing where every resource it serves has the same first path segment below the
    planned resource: ``bucket/*`` when every object written is under ``bucket/results/``."""
    fixed = grant.resource.split("*", 1)[0].split("?", 1)[0]
    bases = [arn for arn in planned_arns if fixed.startswith(f"{arn}/")]
    served = [need.resource for need in needs if _used(grant, [need])]
    if fixed == grant.resource or not bases or not served:
        return False
    base = f"{max(bases, key=len)}/"
    paths = [resource.removeprefix(base) for resource in served if resource.startswith(base)]
    firsts = {path.split("/", 1)[0] for path in paths if "/" in path}
    if len(paths) != len(served) or len(firsts) != 1 or any("/" not in path for path in paths):
        return False
    return not fixed.startswith(f"{base}{firsts.pop()}/")


def _too_wide(grant: Grant, needs: Iterable[Need], planned_arns: Collection[str]) -> bool:
    if "*" in grant.action or "?" in grant.action:
        return True
    if grant.resource == "*":
        return grant.action not in NO_RESOURCE_TYPE_ACTIONS
    return not _confined(grant.resource, planned_arns) or _wider_than_its_uses(grant, needs, planned_arns)


def _wildcard_match(pattern: str, value: str) -> bool:
    body = re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".")
    return re.fullmatch(body, value) is not None


def _leading_key_findings(grant: Grant, needs: Collection[Need]) -> Iterator[ConditionFinding]:
    def finding(value: str, why: str) -> ConditionFinding:
        return ConditionFinding(grant.sid, grant.action, grant.resource, LEADING_KEYS, value, why)

    patterns = grant.values_of(LEADING_KEYS, _SET_OPERATORS)
    if patterns is None:
        yield finding("", "writes or reads the table's items without a ForAllValues condition on it")
        return
    if grant.values_of(LEADING_KEYS, ["Null"]) != ["false"]:
        yield finding("", "no Null false test: a request without the key would pass ForAllValues")
    served = [
        value
        for need in needs
        if _allows(grant, need)
        for value in need.request_context.get(LEADING_KEYS, [])
    ]
    if not served:
        return  # an unused grant, reported as such
    for pattern in patterns:
        matched = [value for value in served if _wildcard_match(pattern, value)]
        kinds = {value.split("#", 1)[0] for value in matched}
        fixed = re.split(r"[*?]", pattern, maxsplit=1)[0]
        if not matched:
            yield finding(pattern, "no key the function uses matches it")
        elif len(kinds) > 1 or not fixed.startswith(f"{kinds.pop()}#"):
            yield finding(pattern, "reaches beyond the one key kind its keys share")


def _identity_names(planned_arns: Collection[str]) -> set[str]:
    return {
        arn.split(":identity/", 1)[1].lower()
        for arn in planned_arns
        if ":ses:" in arn and ":identity/" in arn
    }


def _sender_findings(grant: Grant, planned_arns: Collection[str]) -> Iterator[ConditionFinding]:
    def finding(value: str, why: str) -> ConditionFinding:
        return ConditionFinding(grant.sid, grant.action, grant.resource, FROM_ADDRESS, value, why)

    senders = grant.values_of(FROM_ADDRESS, ["StringEquals", "StringLike"])
    if senders is None:
        yield finding("", "sends from any address: no ses:FromAddress condition")
        return
    identities = _identity_names(planned_arns)
    allowed = set()
    for identity in identities:
        allowed |= {identity} if "@" in identity else {f"*@{identity}", f"*@*.{identity}"}
    domains = {identity for identity in identities if "@" not in identity}
    for sender in senders:
        if sender not in allowed and not _one_address_at(sender, domains):
            yield finding(sender, "not an address of a planned SES identity")


def _one_address_at(sender: str, domains: Collection[str]) -> bool:
    """Whether ``sender`` is one literal address (no wildcard) at one of ``domains`` or a subdomain."""
    local, at, domain = sender.rpartition("@")
    if not at or not local or "@" in local or any(c in sender for c in "*?"):
        return False
    return any(domain == d or domain.endswith(f".{d}") for d in domains)


def _passed_to_findings(grant: Grant) -> Iterator[ConditionFinding]:
    def finding(value: str, why: str) -> ConditionFinding:
        return ConditionFinding(grant.sid, grant.action, grant.resource, PASSED_TO_SERVICE, value, why)

    services = grant.values_of(PASSED_TO_SERVICE, ["StringEquals", "StringLike"])
    if services is None:
        yield finding("", "passes the role to any service: no iam:PassedToService condition")
        return
    for service in services:
        if "*" in service or "?" in service or not service.endswith(".amazonaws.com"):
            yield finding(service, "not one service principal")


def condition_findings(
    grant: Grant, needs: Collection[Need], planned_arns: Collection[str]
) -> Iterator[ConditionFinding]:
    """What the grant's conditions lack or allow beyond the needs and the planned identities."""
    if grant.action in ITEM_ACTIONS and _TABLE.match(grant.resource):
        yield from _leading_key_findings(grant, needs)
    elif grant.action == "ses:SendEmail":
        yield from _sender_findings(grant, planned_arns)
    elif grant.action == "iam:PassRole":
        yield from _passed_to_findings(grant)


def compare(policy: dict[str, Any], needs: Collection[Need], planned_arns: Collection[str]) -> Comparison:
    granted = sorted(set(grants(policy)))
    return Comparison(
        missing=sorted(
            {n for n in needs if not documents_allow([policy], n.action, n.resource, n.request_context)}
        ),
        unused=[g for g in granted if not _used(g, needs)],
        too_wide=[g for g in granted if _too_wide(g, needs, planned_arns)],
        conditions=sorted({f for g in granted for f in condition_findings(g, needs, planned_arns)}),
    )
