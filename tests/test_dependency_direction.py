"""Dependencies point one way: Lambda code imports no tooling, and handlers share the core, not each other."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from outreach_dev import function_manifest

PACKAGE = Path(__file__).resolve().parents[1] / "functions" / "outreach"
# Each function's handler module (modules/outreach-pipeline/functions.json).
HANDLERS = {function.handler_module for function in function_manifest.FUNCTIONS.values()}
# Tooling, tests and the checkov policies (loaded by checkov under their plain file names).
TOOLING = (
    "outreach_dev",
    "outreach_operator",
    "embedded_aws",
    "tests",
    "moto",
    "pytest",
    "python_terraform",
    "checkov",
    "policies",
    *(path.stem for path in (PACKAGE.parents[1] / "policies").glob("*.py") if path.stem != "__init__"),
)


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _tooling_imports(paths: Iterable[Path]) -> set[str]:
    return {
        f"{path.stem} imports {name}"
        for path in paths
        for name in _imports(path)
        if any(_is_under(name, tool) for tool in TOOLING)
    }


def test_lambda_code_imports_no_tooling_checkov_or_policies() -> None:
    assert _tooling_imports(PACKAGE.rglob("*.py")) == set()


def test_an_import_of_checkov_or_a_policy_module_is_an_offence(tmp_path: Path) -> None:
    # GIVEN Lambda-style modules importing checkov, the policies package and a policy helper by file name
    (tmp_path / "a.py").write_text("import checkov.common\n")
    (tmp_path / "b.py").write_text("from policies import ckv_out_002_sqs_mapping_batch_item_failures\n")
    (tmp_path / "c.py").write_text("from outreach_policy_values import value\n")
    # WHEN the direction check reads them / THEN each import is reported
    assert _tooling_imports(sorted(tmp_path.glob("*.py"))) == {
        "a imports checkov.common",
        "b imports policies",
        "b imports policies.ckv_out_002_sqs_mapping_batch_item_failures",
        "c imports outreach_policy_values",
        "c imports outreach_policy_values.value",
    }


def test_no_module_imports_a_handler_so_handlers_share_only_the_core() -> None:
    offenders = set()
    for path in PACKAGE.rglob("*.py"):
        module = _module_name(path)
        own = {handler for handler in HANDLERS if _is_under(module, handler)}
        for name in _imports(path):
            for handler in HANDLERS - own:
                if _is_under(name, handler):
                    offenders.add(f"{module} imports {name}")
    assert offenders == set()


def test_the_checks_see_the_handlers() -> None:
    modules = {_module_name(path) for path in PACKAGE.rglob("*.py")}
    assert {"outreach.dispatcher", "outreach.scraper"} <= HANDLERS <= modules


def test_lambda_code_never_imports_the_operator_command_line() -> None:
    # GIVEN the command line, a tooling package beside the Lambda code
    command_line = "outreach_operator.cli"
    assert (PACKAGE.parents[1] / "scripts" / "outreach_operator" / "cli" / "app.py").is_file()
    assert any(_is_under(command_line, tool) for tool in TOOLING)
    # THEN no module of the Lambda package imports it (or any part of it)
    offenders = {
        f"{_module_name(path)} imports {name}"
        for path in PACKAGE.rglob("*.py")
        for name in _imports(path)
        if _is_under(name, command_line) or name in {"click", "rich"} or name.startswith(("click.", "rich."))
    }
    assert offenders == set()
