"""Two copies of the repository to compare: a git revision's tree and the working tree, each packaged.

A revision is exported with ``git archive <rev> | tar -x``; the working tree is copied as it is,
every tracked and untracked file git does not ignore, uncommitted changes included (so no
``*.auto.tfvars``, state or ``.terraform/`` comes along). Each copy builds its own zips with its own
``make package``, so a function's ``source_code_hash`` is what that tree's code gives it. Both use
this checkout's virtual environment and its dependency cache (``build/package-deps``, keyed by the
requirements), so only a revision with other dependencies installs any.

Roots other than ``local`` point at an account through their backend and provider; an override file
(https://developer.hashicorp.com/terraform/language/files/override) gives them a local backend and
the local root's provider connection to the embedded AWS instead, as tests/terraform/test_root_applies.py
does, and nothing the root says about the pipeline changes. The connection goes to the root's default
AWS provider and to each aliased one it defines (``alias = "receiving"`` in receiving.tf), and only to
those: Terraform refuses an override of an alias the root lacks, as a revision from before
receiving.tf does (outreach_dev.terraform_cli_aliases).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from outreach_dev.terraform_cli import REPO
from outreach_dev.terraform_cli_aliases import provider_aliases

ENVIRONMENTS = Path("terraform") / "environments"
OVERRIDE_FILE = "embedded_aws_override.tf"
ENDPOINT_VARIABLE = "endpoint"
DEPENDENCY_CACHE = Path("build") / "package-deps"
SENDER_IDENTITY = "example.com"

# What a root requires and does not commit, as tests/terraform/test_root_applies.py gives it: prod
# refuses to apply without someone to alarm; both send from one SES identity, which prod owns.
REQUIRED: Mapping[str, Mapping[str, str]] = {
    "prod": {"alarm_emails": '["oncall@example.com"]', "email_sender_identity": SENDER_IDENTITY},
    "dev": {"email_sender_identity": SENDER_IDENTITY, "email_create_sender_identity": "false"},
}

# The provider settings of the local root an override copies: all but those each root sets alike.
_SKIPPED_PROVIDER_SETTINGS = ("region", "allowed_account_ids")
_ENDPOINT_LINE = re.compile(r"^\s*(\w+)\s*=\s*var\.endpoint\s*$")
_SETTING_LINE = re.compile(r"^\s*(\w+)\s*=\s*(\"[^\"]*\"|true|false)\s*$")


class UpgradeCheckError(RuntimeError):
    """The comparison cannot be set up: an unknown revision or root, or a tree that does not package
    or apply; the message says which and why."""


@dataclass(frozen=True)
class Tree:
    """One copy of the repository: where it is and what it is a copy of."""

    label: str
    directory: Path

    def root(self, name: str) -> Path:
        directory = self.directory / ENVIRONMENTS / name
        if not (directory / "versions.tf").is_file():
            raise UpgradeCheckError(f"{self.label} has no root {ENVIRONMENTS / name}")
        return directory

    @property
    def dist(self) -> Path:
        return self.directory / "dist"


def _git(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, check=False)


def resolve(rev: str) -> str:
    """The commit ``rev`` names, in full; UpgradeCheckError when it names none."""
    found = _git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if found.returncode != 0:
        raise UpgradeCheckError(f"{rev!r} is not a commit of {REPO}")
    return found.stdout.decode().strip()


def export_revision(commit: str, destination: Path) -> Tree:
    """``git archive <commit> | tar -x -C <destination>``."""
    destination.mkdir(parents=True)
    archive = _git("archive", "--format=tar", commit)
    if archive.returncode != 0:
        raise UpgradeCheckError(f"git archive {commit} failed: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(destination)], input=archive.stdout, check=True)
    return Tree(commit[:12], destination)


def copy_working_tree(destination: Path) -> Tree:
    """Every file of the working tree git tracks or would track, as it is on disk now."""
    listed = _git("ls-files", "-z", "--cached", "--others", "--exclude-standard")
    if listed.returncode != 0:
        raise UpgradeCheckError(f"git ls-files failed: {listed.stderr.decode().strip()}")
    for name in sorted(set(listed.stdout.decode().split("\0")) - {""}):
        source = REPO / name
        if source.is_file():  # a tracked file deleted in the working tree is not copied
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return Tree("working tree", destination)


def package(tree: Tree) -> list[Path]:
    """Run the tree's own ``make package`` with this checkout's virtual environment; its zips."""
    python = Path(sys.executable)
    venv = python.parent.parent
    cache = tree.directory / DEPENDENCY_CACHE
    cache.mkdir(parents=True, exist_ok=True)
    for built in sorted((REPO / DEPENDENCY_CACHE).glob("deps-*")):
        if not (cache / built.name).exists():
            (cache / built.name).symlink_to(built, target_is_directory=True)
    command = ["make", "-C", str(tree.directory), "package", f"VENV={venv}", f"--old-file={python}"]
    # The tree's scripts/ must come first: this checkout's may be on the path of the running venv.
    environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "MAKEFLAGS")}
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=environment)
    if done.returncode != 0:
        raise UpgradeCheckError(f"make package failed in {tree.label}:\n{done.stdout}{done.stderr}")
    zips = sorted(tree.dist.glob("*.zip"))
    if not zips:
        raise UpgradeCheckError(f"make package built no zip in {tree.label}'s dist/")
    return zips


def stage_packages(zips: list[Path], destination: Path) -> Path:
    """Put ``zips`` (and nothing else) in ``destination``: every root reads its zips from there, so a
    function's ``filename`` is the same for both trees and only the zip's content can differ."""
    if destination.exists():
        shutil.rmtree(destination)
    destination.mkdir(parents=True)
    for path in zips:
        shutil.copy2(path, destination / path.name)
    return destination


def declares(root: Path, variable: str) -> bool:
    return any(f'variable "{variable}"' in f.read_text(encoding="utf-8") for f in root.glob("*.tf"))


def override(tree: Tree, endpoint: str, aliases: Sequence[str] = ()) -> str:
    """A local backend and the local root's provider connection (credentials, skip flags, an
    endpoint for each service it names), all pointed at ``endpoint``: in the default AWS provider and
    in one ``provider "aws" { alias = ... }`` for each of ``aliases`` (those the root defines)."""
    local = tree.root("local") / "main.tf"
    services: list[str] = []
    settings: list[str] = []
    depth = 0
    for line in local.read_text(encoding="utf-8").splitlines():
        stripped = line.split("#", 1)[0].rstrip()
        if depth == 0 and stripped.startswith('provider "aws"'):
            depth = 1
            continue
        if depth == 0:
            continue
        setting = _SETTING_LINE.match(stripped) if depth == 1 else None
        if setting and setting.group(1) not in _SKIPPED_PROVIDER_SETTINGS:
            settings.append(f"  {setting.group(1)} = {setting.group(2)}")
        if depth == 2 and (service := _ENDPOINT_LINE.match(stripped)):
            services.append(service.group(1))
        depth += stripped.count("{") - stripped.count("}")
    if not services:
        raise UpgradeCheckError(f"{tree.label}: the local root's provider names no endpoint")
    connection = [*settings, "  endpoints {"]
    connection.extend(f"    {service} = {json.dumps(endpoint)}" for service in services)
    connection.extend(["  }", "}"])
    lines = ["terraform {", '  backend "local" {}', "}", "", 'provider "aws" {', *connection]
    for alias in aliases:
        lines.extend(["", 'provider "aws" {', f"  alias = {json.dumps(alias)}", *connection])
    return "\n".join(lines) + "\n"


def prepare_root(tree: Tree, name: str, endpoint: str, packages: Path) -> tuple[Path, dict[str, str]]:
    """The root's directory, pointed at the embedded AWS, and the -var values it is applied with."""
    root = tree.root(name)
    variables = {"package_dir": str(packages), **REQUIRED.get(name, {})}
    if declares(root, ENDPOINT_VARIABLE):
        variables[ENDPOINT_VARIABLE] = endpoint  # the local root: already on the embedded AWS
    else:
        text = override(tree, endpoint, provider_aliases(root, "aws"))
        (root / OVERRIDE_FILE).write_text(text, encoding="utf-8")
    return root, variables
