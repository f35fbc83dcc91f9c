"""A Terraform root's files as data (python-hcl2): its blocks and the values its variables take."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from outreach_dev import terraform_hcl


def load_hcl(path: Path) -> dict[str, Any]:
    """One .tf or .tfvars file: blocks as lists of one-key dicts, strings unquoted, `${…}` kept."""
    return terraform_hcl.load_file(path, block_markers=False)


def variable_values(root: Path) -> dict[str, Any]:
    """What each of the root's variables is without -var flags: terraform.tfvars, else its default."""
    values: dict[str, Any] = {}
    for path in sorted(root.glob("*.tf")):
        for block in load_hcl(path).get("variable", []):
            for name, body in block.items():
                if "default" in body:
                    values[name] = body["default"]
    tfvars = root / "terraform.tfvars"
    if tfvars.is_file():
        values.update(load_hcl(tfvars))
    return values
