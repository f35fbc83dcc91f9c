"""A need: one IAM action on one resource ARN that a function's role must allow, and why.

``context`` is the request context IAM evaluates the role's conditions with, as far as the test
knows it: each condition key with its values (``dynamodb:LeadingKeys``, ``ses:FromAddress``,
``iam:PassedToService``), sorted so equal requests are one need.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

Context = tuple[tuple[str, tuple[str, ...]], ...]


def context_of(values: Mapping[str, Iterable[str]]) -> Context:
    return tuple(sorted((key, tuple(sorted(set(found)))) for key, found in values.items()))


@dataclass(frozen=True, order=True)
class Need:
    action: str
    resource: str
    reason: str = field(default="", compare=False)
    context: Context = ()

    @property
    def request_context(self) -> dict[str, list[str]]:
        return {key: list(values) for key, values in self.context}

    def __str__(self) -> str:
        keys = "".join(f" [{key} = {', '.join(values)}]" for key, values in self.context)
        return f"{self.action} on {self.resource}{keys} ({self.reason})"
