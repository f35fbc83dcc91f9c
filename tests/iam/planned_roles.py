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
from email.utils import parseaddr
from pathlib import Path
from typing import Any

from outreach_dev import planned_root, terraform_cli

ROOT = terraform_cli.ENVIRONMENTS_DIR / "prod"
TEST_FILE = Path(__file__).with_name("roles.tftest.hcl")
TEST_DIRECTORY = "iam"
_COPY_IGNORES = shutil.ignore_patterns(".terraform", "*.tfstate*", "tfplan", "__pycache__")
SCHEDULE_GROUP = "aws_scheduler_schedule_group"
EMAIL_IDENTITY = "aws_sesv2_email_identity"


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [value]


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
        """Every ARN a planned resource has (its own and its stream's), and for each schedule group the
        ARN its schedules are named under (``schedule/<group>``, see ``schedule_arn``)."""
        arns = {
            value
            for _, _, values in self.resources
            for key in ("arn", "stream_arn")
            if isinstance(value := values.get(key), str) and value.startswith("arn:")
        }
        return arns | {self._schedules_of(group["name"]) for _, group in self.of_type(SCHEDULE_GROUP)}

    def _one(self, resource_type: str, attribute: str, value: str, wanted: str) -> str:
        found = [
            values[wanted] for _, values in self.of_type(resource_type) if values.get(attribute) == value
        ]
        if len(found) != 1:
            raise LookupError(f"{len(found)} planned {resource_type} with {attribute} = {value!r}")
        return str(found[0])

    def table_arn(self, name: str) -> str:
        return self._one("aws_dynamodb_table", "name", name, "arn")

    def table_partition_key(self, name: str) -> str:
        """The table's partition key attribute: the one ``dynamodb:LeadingKeys`` is evaluated on."""
        return self._one("aws_dynamodb_table", "name", name, "hash_key")

    def trust_policy(self, role_arn: str) -> dict[str, Any]:
        """The planned trust policy (``assume_role_policy``) of the role ``role_arn``."""
        return dict(json.loads(self._one("aws_iam_role", "arn", role_arn, "assume_role_policy")))

    def schedule_group_arn(self, group: str) -> str:
        return self._one(SCHEDULE_GROUP, "name", group, "arn")

    def queue_arn(self, url: str) -> str:
        return self._one("aws_sqs_queue", "url", url, "arn")

    def bucket_arn(self, name: str) -> str:
        return self._one("aws_s3_bucket", "bucket", name, "arn")

    def log_group_arn(self, name: str) -> str:
        return self._one("aws_cloudwatch_log_group", "name", name, "arn")

    def role_arn(self, arn: str) -> str:
        return self._one("aws_iam_role", "arn", arn, "arn")

    def kms_key_arn(self, key: str) -> str:
        """The planned KMS key a request names by its ARN or its key id (KMS takes either as KeyId:
        https://docs.aws.amazon.com/kms/latest/APIReference/API_VerifyMac.html)."""
        found = [
            str(values["arn"])
            for _, values in self.of_type("aws_kms_key")
            if key in (values.get("arn"), values.get("key_id"))
        ]
        if len(found) != 1:
            raise LookupError(f"{len(found)} planned aws_kms_key named {key!r}")
        return found[0]

    def configuration_set_arn(self, name: str) -> str:
        return self._one("aws_sesv2_configuration_set", "configuration_set_name", name, "arn")

    def identity_arn(self, sender: str) -> str:
        """The planned SES identity ``sender`` (``Name <address>`` or an address) sends as: the most
        specific one, the address itself, else its domain or a parent domain, which covers every
        address below it (https://docs.aws.amazon.com/ses/latest/dg/creating-identities.html)."""
        address = parseaddr(sender)[1].lower()
        planned = {str(v["email_identity"]).lower(): str(v["arn"]) for _, v in self.of_type(EMAIL_IDENTITY)}
        labels = address.rpartition("@")[2].split(".")
        for identity in [address, *(".".join(labels[i:]) for i in range(len(labels) - 1))]:
            if identity in planned:
                return planned[identity]
        raise LookupError(f"no planned {EMAIL_IDENTITY} covers the sender {sender!r}")

    def _schedules_of(self, group: str) -> str:
        group_arn = self._one(SCHEDULE_GROUP, "name", group, "arn")
        prefix, _, name = group_arn.rpartition(":schedule-group/")
        return f"{prefix}:schedule/{name}"

    def schedule_arn(self, group: str, name: str) -> str:
        """A schedule of a planned group: ``arn:...:scheduler:<region>:<account>:schedule/<group>/<name>``
        (resource type ``schedule`` in
        https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazoneventbridgescheduler.html)."""
        return f"{self._schedules_of(group)}/{name}"

    def _role_policy(self, module: str) -> dict[str, Any]:
        """Every inline policy on the role of the function in ``module``, as one document.

        A policy belongs to the role when it is in the same module instance, or when it names the
        role by its name (a statement the function's module cannot hold, added beside it). Action
        and Resource are lists, as IAM reads a single string
        (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_grammar.html).
        """
        role_names = {
            values["name"]
            for address, values in self.of_type("aws_iam_role")
            if address.rsplit(".aws_iam_role.", 1)[0] == module
        }
        statements = [
            {
                **statement,
                "Action": _as_list(statement["Action"]),
                "Resource": _as_list(statement["Resource"]),
            }
            for address, values in self.of_type("aws_iam_role_policy")
            if address.rsplit(".aws_iam_role_policy.", 1)[0] == module or values.get("role") in role_names
            for statement in _as_list(json.loads(values["policy"])["Statement"])
        ]
        return {"Version": "2012-10-17", "Statement": statements}

    def functions(self) -> dict[str, PlannedFunction]:
        """Planned functions by name, each with the inline policies of its execution role."""
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
                policy=self._role_policy(module),
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
    plan = planned_root.mocked_plan(root, TEST_DIRECTORY, workdir / "terraform-data")
    return Plan(
        tuple((r.address, r.type, r.values) for r in planned_root.resource_changes(plan, managed_only=False))
    )
