"""The local root differs from the prod root only where docs/local-semantics.md says, and why.

Both roots are parsed (python-hcl2) into their settings: every argument of every module call, of the
aws provider, of ``locals`` and of the ``terraform`` block, nested objects and blocks flattened into
Terraform-like addresses (``module.pipeline.scraper.environment.SCRAPER_ALLOW_LOOPBACK``). A reference
to a variable is replaced by the value the root gives it (terraform.tfvars, else the default), so two
roots that pass the same value through differently named or defaulted variables agree. The
environment's own name (``local``, ``prod``) in names and tags is replaced by ``<environment>``: that
names differ is the documented rule for every name, not a setting.

Every setting whose value differs, or that only one root has, must be covered by an address in the
first column of the table under "Where the local root differs from prod" (an address covers itself
and everything under it); every documented address must still cover a difference. The module calls
are whatever the roots hold, so a module added to both roots is compared without a change here.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from outreach_dev import terraform_cli
from tests.support.terraform_roots import load_hcl, variable_values

LOCAL_ROOT = terraform_cli.ENVIRONMENTS_DIR / "local"
PROD_ROOT = terraform_cli.ENVIRONMENTS_DIR / "prod"
SEMANTICS = terraform_cli.REPO / "docs" / "local-semantics.md"
SECTION = "## Where the local root differs from prod"
COMPARED_BLOCKS = ("module", "provider", "locals", "terraform")
ENVIRONMENT = "<environment>"

_VARIABLE = re.compile(r"\$\{var\.([A-Za-z0-9_]+)\}")


def _resolve(value: Any, variables: dict[str, Any], environment: str) -> Any:
    """``value`` with variable references replaced and the environment's name made generic."""
    if isinstance(value, str):
        whole = _VARIABLE.fullmatch(value)
        if whole and whole.group(1) in variables:
            return _resolve(variables[whole.group(1)], {}, environment)
        text = _VARIABLE.sub(
            lambda m: str(variables[m.group(1)]) if m.group(1) in variables else m.group(0), value
        )
        # The name alone, never a reference such as local.package_dir.
        return re.sub(rf"(?<![A-Za-z0-9_.{{]){re.escape(environment)}(?![A-Za-z0-9_.])", ENVIRONMENT, text)
    if isinstance(value, list):
        return [_resolve(v, variables, environment) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, variables, environment) for k, v in value.items()}
    return value


def _flatten(prefix: str, value: Any, into: dict[str, str]) -> None:
    """Objects and blocks (a list of one object) become addresses; anything else is a leaf."""
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        value = value[0]
    if isinstance(value, dict) and value:
        for key, inner in value.items():
            _flatten(f"{prefix}.{key}", inner, into)
        return
    into[prefix] = json.dumps(value, sort_keys=True)


def settings(root: Path) -> dict[str, str]:
    """Every compared setting of the root, by address, as canonical JSON of its resolved value."""
    variables = variable_values(root)
    found: dict[str, str] = {}
    for path in sorted(root.glob("*.tf")):
        document = _resolve(load_hcl(path), variables, root.name)
        for kind in COMPARED_BLOCKS:
            for block in document.get(kind, []):
                _flatten(kind, block, found)
    return found


def differences(local: dict[str, str], prod: dict[str, str]) -> dict[str, tuple[str | None, str | None]]:
    return {
        address: (local.get(address), prod.get(address))
        for address in sorted(set(local) | set(prod))
        if local.get(address) != prod.get(address)
    }


def documented_addresses(markdown: str) -> list[str]:
    """The addresses in the first column of the differences table."""
    start = markdown.index(SECTION) + len(SECTION)
    following = markdown.find("\n## ", start)
    section = markdown[start : following if following != -1 else len(markdown)]
    rows = [line for line in section.splitlines() if line.startswith("|")][2:]  # header, ruler
    return [address for row in rows for address in re.findall(r"`([^`]+)`", row.split("|")[1])]


def covered(address: str, documented: list[str]) -> bool:
    return any(address == d or address.startswith(f"{d}.") for d in documented)


def _undocumented(local_root: Path) -> list[str]:
    documented = documented_addresses(SEMANTICS.read_text(encoding="utf-8"))
    found = differences(settings(local_root), settings(PROD_ROOT))
    return [f"{a}: local {v[0]}, prod {v[1]}" for a, v in found.items() if not covered(a, documented)]


def test_every_difference_of_the_local_root_from_prod_is_documented() -> None:
    assert _undocumented(LOCAL_ROOT) == [], (
        f"add a row to {SEMANTICS.name} ({SECTION[3:]}) or align the roots"
    )


def test_every_documented_difference_still_exists() -> None:
    found = differences(settings(LOCAL_ROOT), settings(PROD_ROOT))
    documented = documented_addresses(SEMANTICS.read_text(encoding="utf-8"))
    assert documented
    assert [d for d in documented if not any(covered(a, [d]) for a in found)] == []


def test_a_new_module_argument_only_the_local_root_sets_is_an_undocumented_difference(tmp_path: Path) -> None:
    # GIVEN a copy of the local root whose pipeline module gets one more argument
    copy = tmp_path / "local"
    shutil.copytree(LOCAL_ROOT, copy, ignore=shutil.ignore_patterns(".terraform", "tests"))
    main = copy / "main.tf"
    text, count = re.subn(
        r'(module "pipeline" \{\n)',
        r"\1  failure_record_expiration_days = 3\n",
        main.read_text(encoding="utf-8"),
    )
    assert count == 1
    main.write_text(text, encoding="utf-8")

    # WHEN the copy is compared with prod THEN exactly that argument is reported
    assert _undocumented(copy) == ["module.pipeline.failure_record_expiration_days: local 3, prod None"]


def test_a_value_passed_through_a_variable_is_compared_by_the_value_the_root_gives_it(tmp_path: Path) -> None:
    # GIVEN a copy of the local root whose tfvars give the scraper less concurrency than prod's
    copy = tmp_path / "local"
    shutil.copytree(LOCAL_ROOT, copy, ignore=shutil.ignore_patterns(".terraform", "tests"))
    tfvars = copy / "terraform.tfvars"
    text, count = re.subn(r"scraper_concurrency\s*=\s*\d+", "scraper_concurrency = 7", tfvars.read_text())
    assert count == 1
    tfvars.write_text(text, encoding="utf-8")

    # WHEN it is compared with prod THEN both places the variable reaches differ
    assert _undocumented(copy) == [
        "module.pipeline.scrape_mapping.maximum_concurrency: local 7, prod 140",
        "module.pipeline.scraper.reserved_concurrency: local 7, prod 140",
    ]


@pytest.mark.parametrize("root", [LOCAL_ROOT, PROD_ROOT], ids=["local", "prod"])
def test_the_comparison_reads_every_module_call_of_the_root(root: Path) -> None:
    blocks = [block for path in root.glob("*.tf") for block in load_hcl(path).get("module", [])]
    calls = {name for block in blocks for name in block}
    compared = {address.split(".")[1] for address in settings(root) if address.startswith("module.")}
    assert calls and compared == calls
