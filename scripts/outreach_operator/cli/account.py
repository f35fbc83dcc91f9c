"""Whether the credentials and region are the environment's, before a command reads or writes anything.

With ``--env``, the root's provider block says where the environment lives: ``region`` and
``allowed_account_ids`` (``terraform/environments/<env>/main.tf``). Both are variables, so they are
resolved as Terraform resolves them, read-only and without running Terraform: the variable's default,
then ``TF_VAR_<name>``, ``terraform.tfvars``, ``terraform.tfvars.json`` and the ``*.auto.tfvars``
(``.json``) files in lexical order, a later source winning
(https://developer.hashicorp.com/terraform/language/values/variables#variable-definition-precedence).
A root whose ``allowed_account_ids`` is unset pins the account its outputs' ARNs name (where it was
applied) instead; a root with neither is checked for its region only, and a note says so.

``check_caller`` asks sts GetCallerIdentity once (``Session.caller``) and refuses (``WrongAccount``,
exit 2: the credentials cannot be used as given, nothing was read or written) an account or region
that is not the environment's. A session without a region takes the root's. Without ``--env``
(explicit flags only) nothing is checked: there is no root to compare with.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from outreach_dev import terraform_cli, terraform_hcl
from outreach_operator.cli.output import BadInput, Session

_VARIABLE_REFERENCE = re.compile(r"^\$\{var\.([A-Za-z_][A-Za-z0-9_-]*)\}$")


class WrongAccount(BadInput):
    """The credentials or the region are not the environment's (exit 2): nothing was read or written."""


@dataclass(frozen=True)
class Pins:
    """Where an environment lives: its region and the accounts it may be in."""

    env: str
    region: str | None
    accounts: tuple[str, ...]
    # What the accounts come from: "allowed_account_ids", "outputs" (the ARNs the outputs name), "".
    accounts_from: str


def _load(path: Path) -> dict[str, Any]:
    if path.suffix == ".json":
        loaded: dict[str, Any] = json.loads(path.read_text())
        return loaded
    return terraform_hcl.load_file(path)


def _environment_value(text: str) -> Any:
    """A ``TF_VAR_`` value: a list or map as HCL/JSON (``["111122223333"]``), anything else as text."""
    try:
        return json.loads(text)
    except ValueError:  # not JSON: a plain string variable, as Terraform reads it
        return text


def variable_values(root: Path, environ: Mapping[str, str] = os.environ) -> dict[str, Any]:
    """The root's variables as ``terraform plan`` in ``root`` would resolve them (no ``-var`` flags)."""
    values: dict[str, Any] = {}
    for path in sorted(root.glob("*.tf")):
        for block in _load(path).get("variable", []):
            for name, body in block.items():
                values[name] = body.get("default") if isinstance(body, dict) else None
    for name in list(values):
        if f"TF_VAR_{name}" in environ:
            values[name] = _environment_value(environ[f"TF_VAR_{name}"])
    files = [root / "terraform.tfvars", root / "terraform.tfvars.json"]
    files += sorted([*root.glob("*.auto.tfvars"), *root.glob("*.auto.tfvars.json")], key=lambda p: p.name)
    for path in files:
        if path.is_file():
            values.update(_load(path))
    return values


def _setting(provider: Mapping[str, Any], name: str, variables: Mapping[str, Any]) -> Any:
    value = provider.get(name)
    if isinstance(value, str):
        reference = _VARIABLE_REFERENCE.match(value)
        if reference:
            return variables.get(reference.group(1))
        if value.startswith("${"):
            return None  # an expression this reader does not evaluate: treated as unset
    return value


def root_pins(
    env: str, root: Path, *, output_accounts: tuple[str, ...] = (), environ: Mapping[str, str] = os.environ
) -> Pins:
    """The region and accounts of the root's default ``aws`` provider (see the module docstring)."""
    variables = variable_values(root, environ)
    provider: Mapping[str, Any] = {}
    for path in sorted(root.glob("*.tf")):
        for block in _load(path).get("provider", []):
            aws = block.get("aws")
            if isinstance(aws, dict) and "alias" not in aws:
                provider = aws
    setting = _setting(provider, "region", variables)
    region = str(setting) if setting else None
    allowed = _setting(provider, "allowed_account_ids", variables)
    if isinstance(allowed, list) and allowed:
        return Pins(env, region, tuple(str(a) for a in allowed), "allowed_account_ids")
    if output_accounts:
        return Pins(env, region, output_accounts, "outputs")
    return Pins(env, region, (), "")


def pins_of(session: Session) -> Pins | None:
    """The pins of the session's ``--env`` root; ``None`` without ``--env``."""
    env = session.targets.env
    if env is None:
        return None
    root = terraform_cli.environment_dir(env)
    return root_pins(env, root, output_accounts=session.targets.output_accounts)


def check_caller(session: Session, pins: Pins) -> None:
    """Refuse credentials of another account or a session in another region (``WrongAccount``)."""
    where = f"terraform/environments/{pins.env}"
    region = session.region()
    if region is None and pins.region:
        session.targets = replace(session.targets, region=pins.region)
        session.targets.activate()
        region = pins.region
    if pins.region and region != pins.region:
        raise WrongAccount(
            f"the session's region is {region}; {pins.env} is in {pins.region} (the provider's region in "
            f"{where}): pass --region {pins.region} or export AWS_REGION={pins.region}; nothing was read"
        )
    caller = session.caller()
    if not pins.accounts:
        session.note(f"{pins.env} pins no account (allowed_account_ids unset, no ARN in its outputs)")
        return
    if caller["account"] not in pins.accounts:
        source = (
            f"allowed_account_ids of {where}"
            if pins.accounts_from == "allowed_account_ids"
            else f"the account {pins.env}'s Terraform outputs name"
        )
        raise WrongAccount(
            f"the credentials are for account {caller['account']} ({caller['arn']}); {pins.env} is in "
            f"{', '.join(pins.accounts)} ({source}): use credentials of that account; nothing was read"
        )
