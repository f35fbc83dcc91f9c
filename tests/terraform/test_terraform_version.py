"""Each root's ``required_version`` admits no Terraform that cannot run the root's own settings.

The S3 backend's ``use_lockfile`` (locking without a DynamoDB table) arrived in Terraform 1.10; a
root whose backend example uses it must not accept an older Terraform, which would reject the
backend configuration at ``terraform init``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
ROOTS = sorted(
    p for p in (REPO_ROOT / "terraform" / "environments").iterdir() if (p / "versions.tf").exists()
)
# Terraform version that introduced each backend setting the roots use.
SETTING_SINCE = {"use_lockfile": (1, 10)}
_REQUIRED = re.compile(r'required_version\s*=\s*"([^"]+)"')
_LOWER_BOUND = re.compile(r">=?\s*(\d+)\.(\d+)")


def lower_bound(constraint: str) -> tuple[int, int]:
    """The smallest major.minor a ``>=``, ``>`` or ``~>`` constraint admits; (0, 0) for none."""
    bounds = [(int(major), int(minor)) for major, minor in _LOWER_BOUND.findall(constraint)]
    return max(bounds, default=(0, 0))


def test_lower_bound_reads_the_constraint_forms_the_roots_use() -> None:
    # GIVEN the forms the roots and modules write / THEN each gives the version it starts at
    assert lower_bound(">= 1.10.0") == (1, 10)
    assert lower_bound(">= 1.9, < 2.0") == (1, 9)
    assert lower_bound("~> 1.10") == (1, 10)
    assert lower_bound("") == (0, 0)


@pytest.mark.parametrize("root", ROOTS, ids=[root.name for root in ROOTS])
def test_required_version_admits_only_terraform_that_knows_the_backend_settings(root: Path) -> None:
    # GIVEN the root's required_version and the backend settings its example file uses
    match = _REQUIRED.search((root / "versions.tf").read_text(encoding="utf-8"))
    assert match, f"{root.name}: versions.tf declares no required_version"
    example = root / "backend.hcl.example"
    used = example.read_text(encoding="utf-8") if example.exists() else ""
    needed = max(
        (since for setting, since in SETTING_SINCE.items() if re.search(rf"^\s*{setting}\s*=", used, re.M)),
        default=(0, 0),
    )
    # THEN the constraint's lower bound is at least the version that introduced each of them
    assert lower_bound(match.group(1)) >= needed, (
        f"{root.name}: required_version {match.group(1)!r} admits Terraform older than "
        f"{needed[0]}.{needed[1]}, which rejects its backend settings"
    )
