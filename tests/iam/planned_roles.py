"""The Lambda functions of the prod root as Terraform plans them: each role's policy and its wiring.

The prod root and the modules are copied to a temporary directory with ``roles.tftest.hcl`` beside
the root, and planned by ``terraform test -json -verbose`` against the mocked provider
(``tests/terraform/mocks``): the mocked provider fills in computed ARNs, the test file gives each
resource a role names the ARN AWS would give it, and ``-verbose`` prints the plan as JSON. So the
policies read here are the documents Terraform would send to IAM, built by the modules themselves.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from python_terraform import IsFlagged

from outreach_tools import terraform_cli

ROOT = terraform_cli.ENVIRONMENTS_DIR / "prod"
TEST_FILE = Path(__file__).with_name("roles.tftest.hcl")
TEST_DIRECTORY = "iam"
_COPY_IGNORES = shutil.ignore_patterns(".terraform", "*.tfstate*", "tfplan", "__pycache__")


@dataclass(frozen=True)
class PlannedFunction:
    """One aws_lambda_function with the inline policy of its execution role."""

    address: str
    name: str
    arn: str
    handler_module: str
    environment: Mapping[str, str]
    tracing_mode: str | None
    policy: dict[str, Any]


@dataclass(frozen=True)
class Plan:
    """The planned resources (address, type, values after apply) of one root."""

    resources: tuple[tuple[str, str, Mapping[str, Any]], ...]

    def of_type(self, resource_type: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
        for address, kind, values in self.resources:
            if kind == resource_type:
                yield address, values

    def arns(self) -> set[str]:
        """Every ARN a planned resource has (its own and its stream's)."""
        return {
            value
            for _, _, values in self.resources
            for key in ("arn", "stream_arn")
            if isinstance(value := values.get(key), str) and value.startswith("arn:")
        }

    def _one(self, resource_type: str, attribute: str, value: str, wanted: str) -> str:
        found = [
            values[wanted] for _, values in self.of_type(resource_type) if values.get(attribute) == value
        ]
        if len(found) != 1:
            raise LookupError(f"{len(found)} planned {resource_type} with {attribute} = {value!r}")
        return str(found[0])

    def table_arn(self, name: str) -> str:
        return self._one("aws_dynamodb_table", "name", name, "arn")

    def queue_arn(self, url: str) -> str:
        return self._one("aws_sqs_queue", "url", url, "arn")

    def bucket_arn(self, name: str) -> str:
        return self._one("aws_s3_bucket", "bucket", name, "arn")

    def log_group_arn(self, name: str) -> str:
        return self._one("aws_cloudwatch_log_group", "name", name, "arn")

    def functions(self) -> dict[str, PlannedFunction]:
        """Planned functions by name; the role policy is the one in the same module instance."""
        policies = {
            address.rsplit(".aws_iam_role_policy.", 1)[0]: json.loads(values["policy"])
            for address, values in self.of_type("aws_iam_role_policy")
        }
        functions = {}
        for address, values in self.of_type("aws_lambda_function"):
            module = address.rsplit(".aws_lambda_function.", 1)[0]
            environment = values.get("environment") or [{}]
            tracing = values.get("tracing_config") or [{}]
            functions[values["function_name"]] = PlannedFunction(
                address=address,
                name=values["function_name"],
                arn=values["arn"],
                handler_module=values["handler"].rsplit(".", 1)[0],
                environment=dict(environment[0].get("variables") or {}),
                tracing_mode=tracing[0].get("mode"),
                policy=policies[module],
            )
        return functions


def _copy_configuration(workdir: Path) -> Path:
    """The root, the modules and the test fixtures at their relative places; returns the root."""
    repo = terraform_cli.REPO
    for part in (
        "modules",
        "tests/terraform/mocks",
        "tests/terraform/fixtures/packages",
        "terraform/environments/prod",
    ):
        shutil.copytree(repo / part, workdir / part, ignore=_COPY_IGNORES)
    root = workdir / ROOT.relative_to(repo)
    (root / TEST_DIRECTORY).mkdir()
    shutil.copy(TEST_FILE, root / TEST_DIRECTORY / TEST_FILE.name)
    return root


def plan_prod(workdir: Path) -> Plan:
    """Plan the prod root on the mocked provider in ``workdir``; return the plan JSON's resources."""
    root = _copy_configuration(workdir)
    data_dir = workdir / "terraform-data"
    terraform_cli.init(root, backend=False, data_dir=data_dir)
    result = terraform_cli.run(
        root,
        "test",
        env={"TF_DATA_DIR": str(data_dir)},
        json=IsFlagged,
        verbose=IsFlagged,
        no_color=IsFlagged,
        test_directory=TEST_DIRECTORY,
    )
    plans = [
        message["test_plan"]
        for line in result.stdout.splitlines()
        if line.startswith("{") and (message := json.loads(line)).get("type") == "test_plan"
    ]
    if len(plans) != 1:
        raise terraform_cli.TerraformError(f"expected one plan from {TEST_FILE.name}, got {len(plans)}")
    return Plan(
        tuple(
            (change["address"], change["type"], change["change"]["after"] or {})
            for change in plans[0]["resource_changes"]
        )
    )
