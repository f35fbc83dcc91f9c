"""What an environment root will create, read from its plan against a throwaway embedded AWS.

``make preflight`` needs a root's own settings before anything is applied: its provider's region,
the accounts it may deploy to, each function's reserved concurrency, its variables and outputs.
Terraform computes all of them, so Terraform is asked: the root and the modules are copied to a
scratch directory with an override file (local state, fake credentials, no account pin), empty zips
stand in for ``make package``'s, and ``terraform plan`` runs against a moto server started for the
purpose on loopback (``AWS_ENDPOINT_URL``), so no credentials are used and nothing reaches an account.
``terraform show -json`` of that plan is then read (https://developer.hashicorp.com/terraform/internals/json-format).
The same reader takes the plan ``terraform test -json -verbose`` prints for a root on a mocked
provider (``test_plan``: the IAM tests plan the prod root that way).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from python_terraform import IsFlagged

from embedded_aws.server import embedded_aws
from outreach_dev import packaging, terraform_cli, terraform_outputs
from outreach_dev.terraform_cli_aliases import provider_aliases

OVERRIDE_FILE = "preflight_override.tf"
PLAN_FILE = "preflight.tfplan"

# Local state, fake credentials and no account pin: the plan runs against the scratch emulator only.
# The provider settings go to the default configuration and to each aliased one the root defines
# (``provider "aws" { alias = "receiving" }``, receiving.tf): an override merges only into a block of
# the same alias, and Terraform refuses one for an alias the root lacks (outreach_dev.terraform_cli_aliases).
_OVERRIDE_BACKEND = """\
terraform {
  backend "local" {}
}
"""
_OVERRIDE_PROVIDER_SETTINGS = """\
  access_key                  = "test"
  secret_key                  = "test"
  skip_credentials_validation = true
  skip_requesting_account_id  = true
  skip_metadata_api_check     = true
  skip_region_validation      = true
  s3_use_path_style           = true
  allowed_account_ids         = null
"""


def override(root: Path) -> str:
    """The override file for ``root``: a local backend, and the scratch settings in its default AWS
    provider and in each aliased one it defines."""
    aliased = [f"  alias = {json.dumps(alias)}\n" for alias in provider_aliases(root, "aws")]
    providers = [f'provider "aws" {{\n{alias}{_OVERRIDE_PROVIDER_SETTINGS}}}\n' for alias in ["", *aliased]]
    return "\n".join([_OVERRIDE_BACKEND, *providers])


# Variables (or outputs) by which a root names what it deploys to.
ALLOWED_ACCOUNTS_VARIABLE = "allowed_account_ids"
ENDPOINT_VARIABLE = "endpoint"


@dataclass(frozen=True)
class PlannedResource:
    address: str
    type: str
    values: Mapping[str, Any]


@dataclass(frozen=True)
class RootPlan:
    """A root's settings as its plan has them."""

    env: str
    region: str | None
    allowed_account_ids: tuple[str, ...]
    # Function name -> reserved concurrency (None: the function uses the unreserved pool).
    reservations: Mapping[str, int | None]
    # Root variables and the outputs the plan knows, by name (an output wins over a variable).
    values: Mapping[str, Any]
    resources: tuple[PlannedResource, ...]

    @property
    def reserved_total(self) -> int:
        return sum(r for r in self.reservations.values() if r is not None)

    def of_type(self, *types: str) -> list[PlannedResource]:
        return [r for r in self.resources if r.type in types]


class RootPlanError(RuntimeError):
    """The root did not plan; the message carries Terraform's first error."""


def _expression(expressions: Mapping[str, Any], name: str, variables: Mapping[str, Any]) -> Any:
    expression = expressions.get(name) or {}
    if "constant_value" in expression:
        return expression["constant_value"]
    for reference in expression.get("references", []):
        if reference.startswith("var."):
            return variables.get(reference.removeprefix("var."))
    return None


def resource_changes(plan: Mapping[str, Any], *, managed_only: bool = True) -> tuple[PlannedResource, ...]:
    """Each resource a plan document (``terraform show -json``, or a ``test_plan`` of ``terraform test
    -json -verbose``) will have after apply; with ``managed_only``, no data sources and no deletions."""
    return tuple(
        PlannedResource(change["address"], change["type"], change["change"].get("after") or {})
        for change in plan.get("resource_changes", [])
        if not managed_only
        or (change.get("mode") == "managed" and "delete" not in change["change"]["actions"])
    )


def mocked_plan(root: Path, test_directory: str, data_dir: Path) -> Mapping[str, Any]:
    """The plan of the one run block in ``root``/``test_directory``, as ``terraform test -json -verbose``
    prints it (the provider as the test file mocks it; the root is initialised here without a backend)."""
    terraform_cli.init(root, backend=False, data_dir=data_dir)
    result = terraform_cli.run(
        root,
        "test",
        env={"TF_DATA_DIR": str(data_dir)},
        json=IsFlagged,
        verbose=IsFlagged,
        no_color=IsFlagged,
        test_directory=test_directory,
    )
    plans = [
        message["test_plan"]
        for line in result.stdout.splitlines()
        if line.startswith("{") and (message := json.loads(line)).get("type") == "test_plan"
    ]
    if len(plans) != 1:
        raise terraform_cli.TerraformError(f"expected one plan from {test_directory}/, got {len(plans)}")
    return dict(plans[0])


def from_plan_json(env: str, plan: Mapping[str, Any]) -> RootPlan:
    """Read a ``terraform show -json`` plan document."""
    variables = {name: v.get("value") for name, v in plan.get("variables", {}).items()}
    known_outputs = terraform_outputs.from_plan(plan)
    provider = plan.get("configuration", {}).get("provider_config", {}).get("aws", {})
    region = _expression(provider.get("expressions", {}), "region", variables)
    resources = resource_changes(plan)
    reservations: dict[str, int | None] = {}
    for resource in resources:
        if resource.type == "aws_lambda_function":
            reserved = resource.values.get("reserved_concurrent_executions")
            reservations[str(resource.values["function_name"])] = (
                None if reserved is None or int(reserved) < 0 else int(reserved)
            )
    allowed = variables.get(ALLOWED_ACCOUNTS_VARIABLE) or ()
    return RootPlan(
        env=env,
        region=None if region is None else str(region),
        allowed_account_ids=tuple(str(a) for a in allowed),
        reservations=reservations,
        values={**variables, **known_outputs},
        resources=resources,
    )


def _placeholder_packages(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for function in packaging.FUNCTIONS:
        (directory / f"{function}.zip").write_bytes(b"")
    return directory


def _declares(root: Path, variable: str) -> bool:
    return any(f'variable "{variable}"' in f.read_text() for f in root.glob("*.tf"))


def _scratch_environment(endpoint: str, data_dir: Path) -> dict[str, str]:
    """What terraform runs with on top of this process's environment: every AWS call to the
    emulator (the override's static keys win over any profile or keys the operator has set)."""
    return {"AWS_ENDPOINT_URL": endpoint, "TF_DATA_DIR": str(data_dir), "TF_IN_AUTOMATION": "1"}


def first_error(text: str) -> str:
    """Terraform's first ``Error:`` title and its explanation (the paragraph past the source
    context), on one line."""
    _, found, rest = text.partition("Error: ")
    if not found:
        lines = [line for line in text.splitlines() if line.strip()]
        return lines[-1].strip() if lines else "terraform failed"
    title, _, body = rest.partition("\n")
    paragraphs = [
        " ".join(line.strip(" │╷╵") for line in block.splitlines()).strip() for block in body.split("\n\n")
    ]
    explanation = next(
        (p for p in paragraphs if p and not p.startswith(("on ", "with ", "This was checked", "Error: "))),
        "",
    )
    return f"{title.strip()}: {explanation}" if explanation else title.strip()


def read_root_plan(env: str) -> RootPlan:
    """Plan ``terraform/environments/<env>`` on a scratch emulator and read the plan."""
    root = terraform_cli.environment_dir(env)
    with tempfile.TemporaryDirectory(prefix="outreach-preflight-") as scratch:
        work = Path(scratch)
        copy = terraform_cli.copy_configuration(root, work / "config")
        (copy / OVERRIDE_FILE).write_text(override(copy))
        variables = {"package_dir": str(_placeholder_packages(work / "packages"))}
        with embedded_aws() as endpoint:
            if _declares(copy, ENDPOINT_VARIABLE):
                variables[ENDPOINT_VARIABLE] = endpoint
            environment = _scratch_environment(endpoint, work / ".terraform")
            var_args = [f"-var={key}={value}" for key, value in sorted(variables.items())]
            try:
                terraform_cli.init(copy, data_dir=work / ".terraform", lockfile_readonly=True)
                terraform_cli.run(
                    copy,
                    "plan",
                    *var_args,
                    env=environment,
                    input=False,
                    lock=False,
                    refresh=False,
                    no_color=IsFlagged,
                    out=PLAN_FILE,
                )
                shown = terraform_cli.run(copy, "show", PLAN_FILE, env=environment, json=IsFlagged)
            except terraform_cli.TerraformError as exc:
                raise RootPlanError(first_error(str(exc))) from exc
    return from_plan_json(env, json.loads(shown.stdout))
