"""A need: one IAM action on one resource ARN that a function's role must allow, and why."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class Need:
    action: str
    resource: str
    reason: str = field(default="", compare=False)

    def __str__(self) -> str:
        return f"{self.action} on {self.resource} ({self.reason})"
