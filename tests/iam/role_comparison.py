"""Compare a role's policy with what its function needs, both ways, and how narrowly it grants.

- missing: a need the policy does not allow (it would be AccessDenied on AWS; moto never enforces IAM);
- unused: an (action, resource) pair of an Allow statement that no need uses;
- too wide: a wildcard action, ``*`` as resource for an action that has a resource type, or a
  resource pattern that is not confined to one planned resource (its fixed part must be a planned
  ARN, or a planned ARN followed by ``/`` or ``:``: an index, a key prefix, a log stream), or whose
  wildcard covers a path segment every resource it serves shares (``bucket/*`` for ``results/`` keys).

Policy evaluation is the emulator's (``outreach_tools.localaws.iam_policies``), which follows IAM's
wildcards and its explicit-deny rule.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from outreach_tools.localaws.iam_policies import documents_allow
from tests.iam.needs import Need
from tests.iam.platform_actions import NO_RESOURCE_TYPE_ACTIONS


@dataclass(frozen=True, order=True)
class Grant:
    sid: str
    action: str
    resource: str

    def __str__(self) -> str:
        return f"{self.sid}: {self.action} on {self.resource}"


@dataclass(frozen=True)
class Comparison:
    missing: list[Need] = field(default_factory=list)
    unused: list[Grant] = field(default_factory=list)
    too_wide: list[Grant] = field(default_factory=list)

    @property
    def exact(self) -> bool:
        return not (self.missing or self.unused or self.too_wide)

    def __str__(self) -> str:
        lines = [f"missing   {n}" for n in self.missing]
        lines += [f"unused    {g}" for g in self.unused]
        lines += [f"too wide  {g}" for g in self.too_wide]
        return "\n".join(lines) or "exact"


def _list(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def grants(policy: dict[str, Any]) -> Iterator[Grant]:
    statements = policy.get("Statement", [])
    for statement in [statements] if isinstance(statements, dict) else statements:
        if statement.get("Effect") != "Allow":
            continue
        for action in _list(statement.get("Action", [])):
            for resource in _list(statement.get("Resource", [])):
                yield Grant(str(statement.get("Sid", "")), action, resource)


def _used(grant: Grant, needs: Iterable[Need]) -> bool:
    single = {"Statement": [{"Effect": "Allow", "Action": grant.action, "Resource": grant.resource}]}
    return any(documents_allow([single], need.action, need.resource) for need in needs)


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


def compare(policy: dict[str, Any], needs: Collection[Need], planned_arns: Collection[str]) -> Comparison:
    granted = sorted(set(grants(policy)))
    return Comparison(
        missing=sorted({n for n in needs if not documents_allow([policy], n.action, n.resource)}),
        unused=[g for g in granted if not _used(g, needs)],
        too_wide=[g for g in granted if _too_wide(g, needs, planned_arns)],
    )
