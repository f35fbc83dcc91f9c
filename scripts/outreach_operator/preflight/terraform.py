"""The ``terraform`` check: the Terraform binary and the locked aws provider fit every version constraint.

The root's and the modules' ``required_version`` and ``required_providers`` are read from their
``versions.tf``; the provider is the one ``.terraform.lock.hcl`` locks, and a filesystem mirror
(TF_PLUGIN_DIR) must hold it for this platform.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from outreach_dev import terraform_cli
from outreach_dev.terraform_hcl import load_file as read_hcl
from outreach_dev.version_constraints import ConstraintError, satisfies
from outreach_operator.preflight.target import Preflight, Result, Status

AWS_PROVIDER = "registry.terraform.io/hashicorp/aws"


def _constraints(root: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(required_version, aws provider version) constraints of the root and every module, each with
    the file it comes from."""
    core: list[tuple[str, str]] = []
    provider: list[tuple[str, str]] = []
    for versions in [root / "versions.tf", *sorted(terraform_cli.MODULES_DIR.glob("*/versions.tf"))]:
        where = terraform_cli.relative(versions)
        for block in read_hcl(versions).get("terraform", []):
            if "required_version" in block:
                core.append((str(block["required_version"]), where))
            for providers in block.get("required_providers", []):
                aws = providers.get("aws")
                if isinstance(aws, dict) and "version" in aws:
                    provider.append((str(aws["version"]), where))
    return core, provider


def _terraform_version() -> dict[str, Any]:
    binary = shutil.which("terraform")
    if binary is None:
        raise FileNotFoundError("terraform is not on PATH")
    completed = subprocess.run(
        [binary, "version", "-json"], capture_output=True, text=True, check=True, timeout=120
    )
    answer: dict[str, Any] = json.loads(completed.stdout)
    return answer


def _locked_provider(root: Path) -> str | None:
    lock = root / ".terraform.lock.hcl"
    if not lock.is_file():
        return None
    for block in read_hcl(lock).get("provider", []):
        if AWS_PROVIDER in block:
            return str(block[AWS_PROVIDER]["version"])
    return None


def _mirror_holds(mirror: Path, version: str, platform: str) -> bool:
    """Whether a filesystem mirror has the provider, unpacked or packed
    (https://developer.hashicorp.com/terraform/cli/config/config-file#filesystem_mirror)."""
    base = mirror / AWS_PROVIDER
    return (base / version / platform).is_dir() or (
        base / f"terraform-provider-aws_{version}_{platform}.zip"
    ).is_file()


def check_terraform(ctx: Preflight) -> Result:
    name = "terraform"
    try:
        installed = _terraform_version()
        core, provider = _constraints(ctx.root)
    except (OSError, subprocess.SubprocessError, json.JSONDecodeError) as exc:
        return Result(name, Status.FAIL, f"cannot run terraform: {exc}", "install Terraform 1.10 or newer")
    version, platform = str(installed["terraform_version"]), str(installed.get("platform", ""))
    locked = _locked_provider(ctx.root)
    try:
        core_misses = [f"{c} ({where})" for c, where in core if not satisfies(version, c)]
        provider_misses = (
            [f"{c} ({where})" for c, where in provider if not satisfies(locked, c)] if locked else []
        )
    except ConstraintError as exc:
        return Result(name, Status.FAIL, str(exc), "fix the constraint in the file it names")
    if core_misses:
        return Result(
            name,
            Status.FAIL,
            f"Terraform {version} does not satisfy {', '.join(core_misses)}",
            "install a Terraform release that does (the project is tested with 1.11)",
        )
    lock_file = terraform_cli.relative(ctx.root / ".terraform.lock.hcl")
    if locked is None:
        return Result(
            name,
            Status.FAIL,
            f"{lock_file} does not lock {AWS_PROVIDER}",
            "restore the committed lock file (git checkout -- it)",
        )
    if provider_misses:
        return Result(
            name,
            Status.FAIL,
            f"the locked aws provider {locked} does not satisfy {', '.join(provider_misses)}",
            f"run `terraform init -upgrade` in {terraform_cli.relative(ctx.root)} and commit the lock file",
        )
    mirror = terraform_cli.plugin_dir()
    if mirror and not _mirror_holds(Path(mirror), locked, platform):
        return Result(
            name,
            Status.FAIL,
            f"the provider mirror {mirror} has no hashicorp/aws {locked} for {platform}",
            "add it to the mirror (terraform providers mirror) or unset TF_PLUGIN_DIR to use the registry",
        )
    source = f"mirror {mirror}" if mirror else "the registry"
    return Result(
        name, Status.PASS, f"Terraform {version}, hashicorp/aws {locked} (locked, from {source}) fit"
    )
