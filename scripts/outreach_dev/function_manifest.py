"""The pipeline's Lambda functions, as ``modules/outreach-pipeline/functions.json`` lists them.

The manifest is JSON owned by the outreach-pipeline module because it is the one format both sides
read without a parser of their own: Terraform with ``jsondecode(file(...))`` (the module builds each
function's ``<package_dir>/<name>.zip`` and hands each submodule its handler from it), Python with
the standard library. HCL would need an HCL parser in the tooling; a Python or TOML file would need
an external data source in Terraform. The module owns it since the module deploys what it lists.

Every Python reader of the function list goes through :data:`FUNCTIONS`: ``make package`` (one zip
per entry), the dependency-direction test (the handler modules), the IAM scenario registry (one row
per entry), ``function_env`` (each function's ``module_path``) and the zips the Terraform tests apply.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
MANIFEST = REPO / "modules" / "outreach-pipeline" / "functions.json"

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_HANDLER = re.compile(r"^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)+$")


def _is_call(name: object) -> bool:
    return isinstance(name, str) and _NAME.match(name) is not None


class FunctionManifestError(ValueError):
    """functions.json does not describe the functions as this reader expects."""


@dataclass(frozen=True)
class Function:
    """One Lambda function: its zip is ``dist/<name>.zip``."""

    name: str
    handler: str
    # The Python package at the zip's root, and whether the runtime dependencies go in beside it.
    package: str
    runtime_dependencies: bool
    # The module calls from modules/outreach-pipeline down to the modules/lambda-function instance
    # that creates the function and its role: ("stream_dispatch", "dispatcher").
    module_path: tuple[str, ...]

    @property
    def handler_module(self) -> str:
        """The handler's module: ``outreach.dispatcher`` for ``outreach.dispatcher.lambda_handler``."""
        return self.handler.rsplit(".", 1)[0]

    @property
    def address(self) -> str:
        """The lambda-function instance's address inside the pipeline module (``module.a.module.b``)."""
        return ".".join(f"module.{call}" for call in self.module_path)

    def deployed_name(self, environment: str) -> str:
        """The function's name in AWS: ``outreach-<environment>-<name with '-' for '_'>``."""
        return f"outreach-{environment}-{self.name.replace('_', '-')}"


def _function(name: str, entry: Any, path: Path) -> Function:
    if not _NAME.match(name):
        raise FunctionManifestError(f"{path}: function name {name!r} is not snake_case")
    try:
        handler, zip_spec, module_path = entry["handler"], entry["zip"], entry["module_path"]
        package, runtime_dependencies = zip_spec["package"], zip_spec["runtime_dependencies"]
    except (KeyError, TypeError) as exc:
        raise FunctionManifestError(f"{path}: function {name!r} lacks {exc}") from exc
    if not isinstance(handler, str) or not _HANDLER.match(handler):
        raise FunctionManifestError(f"{path}: function {name!r} has no module.function handler: {handler!r}")
    if not isinstance(package, str) or not handler.startswith(f"{package}."):
        raise FunctionManifestError(f"{path}: handler {handler!r} of {name!r} is outside package {package!r}")
    if not isinstance(runtime_dependencies, bool):
        raise FunctionManifestError(f"{path}: zip.runtime_dependencies of {name!r} must be true or false")
    if not isinstance(module_path, list) or not module_path or not all(map(_is_call, module_path)):
        raise FunctionManifestError(f"{path}: module_path of {name!r} must list module call names")
    return Function(name, handler, package, runtime_dependencies, tuple(module_path))


def load(path: Path = MANIFEST) -> Mapping[str, Function]:
    """The functions of the manifest at ``path``, by name, in the manifest's order."""
    try:
        document = json.loads(path.read_text())
        entries = document["functions"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise FunctionManifestError(f"cannot read the function list from {path}: {exc}") from exc
    if not isinstance(entries, dict) or not entries:
        raise FunctionManifestError(f"{path}: functions must be a non-empty object")
    return {name: _function(name, entry, path) for name, entry in entries.items()}


FUNCTIONS: Mapping[str, Function] = load()
