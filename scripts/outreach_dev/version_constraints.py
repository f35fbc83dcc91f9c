"""Terraform version constraints (``>= 1.10.0``, ``~> 5.100``) evaluated with ``packaging``.

Terraform's syntax (https://developer.hashicorp.com/terraform/language/expressions/version-constraints)
is a comma-separated list of ``=``, ``!=``, ``>``, ``>=``, ``<``, ``<=`` and ``~>`` terms, where a bare
version means ``=`` and ``~>`` lets only the right-most given component grow (``~> 5.100`` is
``>= 5.100, < 6``; ``~> 1.2.3`` is ``>= 1.2.3, < 1.3``), which PEP 440 spells ``~=``.
"""

from __future__ import annotations

import re

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

_TERM = re.compile(r"^\s*(=|!=|>=|<=|>|<|~>)?\s*v?([0-9][0-9A-Za-z.+-]*)\s*$")


class ConstraintError(ValueError):
    """A constraint or version Terraform would accept that could not be read here."""


def to_specifier(constraint: str) -> SpecifierSet:
    specifiers: list[str] = []
    for term in constraint.split(","):
        match = _TERM.match(term)
        if match is None:
            raise ConstraintError(f"unreadable version constraint {constraint!r}")
        operator, version = match.group(1) or "=", match.group(2)
        if operator == "~>":
            # One component (``~> 5``) lets that component grow: any 5.x and later.
            specifiers.append(f"~={version}" if "." in version else f">={version}")
        else:
            specifiers.append(f"{'==' if operator == '=' else operator}{version}")
    try:
        return SpecifierSet(",".join(specifiers))
    except InvalidSpecifier as exc:
        raise ConstraintError(f"unreadable version constraint {constraint!r}: {exc}") from exc


def satisfies(version: str, constraint: str) -> bool:
    """Whether ``version`` meets the Terraform ``constraint``."""
    try:
        parsed = Version(version.lstrip("v"))
    except InvalidVersion as exc:
        raise ConstraintError(f"unreadable version {version!r}") from exc
    return to_specifier(constraint).contains(parsed, prereleases=True)
