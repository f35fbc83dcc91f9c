"""What a saved plan does to each managed resource, read from ``terraform show -json``.

Each entry of the plan's ``resource_changes`` names a resource instance and the actions Terraform
plans for it (https://developer.hashicorp.com/terraform/internals/json-format#change-representation):
``["no-op"]``, ``["create"]``, ``["read"]``, ``["update"]``, ``["delete"]``, ``["forget"]``, or a
replacement, ``["delete", "create"]`` or ``["create", "delete"]`` (create before destroy). An instance
a ``moved`` block (or a changed module path with one) carries to a new address keeps its object and
names where it was in ``previous_address``. Only what destroys an object counts as a loss: a delete
or a replacement. Moves, updates in place, creates and forgets keep every existing object.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# How each kind of change reads in a report, in the order a report lists them.
KINDS = ("replace", "delete", "create", "update", "move", "forget")


@dataclass(frozen=True)
class ResourceChange:
    """One managed resource instance the plan does something to."""

    address: str
    actions: tuple[str, ...]
    # Where a moved instance was before (None: it stays where it is).
    previous_address: str | None = None
    # Terraform's reason for a replacement or delete (e.g. "replace_because_cannot_update").
    reason: str | None = None
    # The attributes whose change forces a replacement, each as a path of keys and indexes.
    replace_paths: tuple[tuple[str | int, ...], ...] = ()
    # For an update, the top-level attributes whose value changes (or becomes known only on apply).
    updated: tuple[str, ...] = ()

    @property
    def destroys(self) -> bool:
        """Whether the plan destroys the existing object (a delete, or a replacement)."""
        return "delete" in self.actions

    @property
    def kind(self) -> str:
        """replace, delete, create, update, forget; move for a moved instance that is otherwise unchanged."""
        if self.destroys:
            return "replace" if "create" in self.actions else "delete"
        for kind in ("create", "update", "forget"):
            if kind in self.actions:
                return kind
        return "move"

    def as_json(self) -> dict[str, Any]:
        return {
            "address": self.address,
            "kind": self.kind,
            "actions": list(self.actions),
            "previous_address": self.previous_address,
            "reason": self.reason,
            "replace_paths": [list(path) for path in self.replace_paths],
            "updated": list(self.updated),
        }


@dataclass(frozen=True)
class PlanChanges:
    """Every change a plan makes to managed resources, in the plan's order."""

    changes: tuple[ResourceChange, ...] = field(default_factory=tuple)

    def of_kind(self, kind: str) -> list[ResourceChange]:
        return [c for c in self.changes if c.kind == kind]

    @property
    def destroyed(self) -> list[ResourceChange]:
        """Deletes and replacements: each destroys an object the state holds."""
        return [c for c in self.changes if c.destroys]

    @property
    def moved(self) -> list[ResourceChange]:
        """Every instance that moves to a new address, whatever else happens to it."""
        return [c for c in self.changes if c.previous_address is not None]

    def counts(self) -> dict[str, int]:
        return {kind: len(self.of_kind(kind)) for kind in KINDS}


def _paths(value: Any) -> tuple[tuple[str | int, ...], ...]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        return ()
    return tuple(tuple(step for step in path) for path in value if isinstance(path, Sequence))


def _unknown(flag: Any) -> bool:
    """Whether an ``after_unknown`` entry marks any part of its value as known only after apply."""
    if isinstance(flag, Mapping):
        return any(_unknown(v) for v in flag.values())
    if isinstance(flag, list):
        return any(_unknown(v) for v in flag)
    return flag is True


def updated_attributes(change: Mapping[str, Any]) -> tuple[str, ...]:
    """The top-level attributes an update gives a new known value; when it gives none, those it
    leaves to be known only after apply."""
    before, after = change.get("before") or {}, change.get("after") or {}
    unknown = change.get("after_unknown") or {}
    known = {
        n for n in set(before) | set(after) if not _unknown(unknown.get(n)) and before.get(n) != after.get(n)
    }
    return tuple(sorted(known or {n for n, flag in unknown.items() if _unknown(flag)}))


def read_change(entry: Mapping[str, Any]) -> ResourceChange | None:
    """One ``resource_changes`` entry; None for a data source or an instance left as it is."""
    if entry.get("mode", "managed") != "managed":
        return None
    change = entry.get("change") or {}
    actions = tuple(str(a) for a in change.get("actions", ()))
    previous = entry.get("previous_address")
    if actions in ((), ("no-op",), ("read",)) and previous is None:
        return None
    return ResourceChange(
        address=str(entry["address"]),
        actions=actions,
        previous_address=None if previous is None else str(previous),
        reason=entry.get("action_reason"),
        replace_paths=_paths(change.get("replace_paths")),
        updated=updated_attributes(change) if "update" in actions else (),
    )


def read_plan(plan: Mapping[str, Any]) -> PlanChanges:
    """The managed-resource changes of a ``terraform show -json`` plan document."""
    read = (read_change(entry) for entry in plan.get("resource_changes") or ())
    return PlanChanges(tuple(change for change in read if change is not None))
