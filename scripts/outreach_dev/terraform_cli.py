"""Terraform for the project's modules and environment roots, driven with python-terraform.

    python -m outreach_dev.terraform_cli check           # fmt -check, then terraform test, or validate
    python -m outreach_dev.terraform_cli validate        # fmt -check + validate every root and module
    python -m outreach_dev.terraform_cli test            # terraform test wherever tests/ exists
    python -m outreach_dev.terraform_cli plan --env dev  # init with backend.hcl, plan to tfplan
    python -m outreach_dev.terraform_cli apply --env dev # apply that saved plan

A module that takes provider configurations from its caller (``configuration_aliases``) is not
validated by itself, only as part of the roots that call it (``validated_standalone``); it is still
formatted and tested.

``terraform init`` installs providers from the filesystem mirror named by TF_PLUGIN_DIR when it is
set (for example /opt/tf-plugins), and from the registry otherwise.

terraform and its providers run with Go's garbage collector at ``GO_GC_PERCENT`` unless GOGC is
already set (see ``go_gc_percent``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from python_terraform import IsFlagged, Terraform

from outreach_dev import terraform_outputs
from outreach_dev.env_vars import overridden
from outreach_dev.terraform_cli_aliases import configuration_aliases

REPO = Path(__file__).resolve().parents[2]
MODULES_DIR = REPO / "modules"
ENVIRONMENTS_DIR = REPO / "terraform" / "environments"
PLAN_FILE = "tfplan"
BACKEND_FILE = "backend.hcl"


class TerraformError(RuntimeError):
    """A terraform command failed; the message carries its output."""


@dataclass(frozen=True)
class Result:
    directory: Path
    command: str
    seconds: float
    stdout: str
    stderr: str = ""
    note: str = ""

    @property
    def output(self) -> str:
        return f"{self.stdout}{self.stderr}"


DEFAULT_PLUGIN_DIR = Path("/opt/tf-plugins")

# terraform and the aws provider are Go programs: Go collects garbage each time the heap has grown by
# GOGC percent since the last collection (100 by default; https://go.dev/doc/gc-guide). Each process
# decodes the aws provider's schema of some 1,500 resource types, and terraform test starts the provider
# twice per run block, so much of their CPU is collection. Measured on the 2-core machine, GOGC 100 → 400:
# terraform test of modules/email (36 run blocks) 32 s → 22 s of CPU, peak 300 → 455 MiB; three applies
# of the local root on the embedded AWS 79 and 87 s → 64 and 65 s of CPU, peak 318 → 548 and 579 MiB.
GO_GC_PERCENT = "400"


def plugin_dir() -> str | None:
    """The provider mirror to init from: TF_PLUGIN_DIR when set (empty means the registry),
    else /opt/tf-plugins when it exists, as the Makefile does."""
    if "TF_PLUGIN_DIR" in os.environ:
        return os.environ["TF_PLUGIN_DIR"].strip() or None
    return str(DEFAULT_PLUGIN_DIR) if DEFAULT_PLUGIN_DIR.is_dir() else None


def go_gc_percent() -> None:
    """Set GOGC to ``GO_GC_PERCENT`` for the terraform processes this process starts, unless GOGC is set
    already.

    python-terraform starts terraform with a copy of this process's environment and takes no other, so
    the value is set there, once, and stays: every terraform command is meant to run with it, and no
    other Go program is started by the tooling.
    """
    os.environ.setdefault("GOGC", GO_GC_PERCENT)


def modules() -> list[Path]:
    return sorted(p.parent for p in MODULES_DIR.glob("*/versions.tf"))


def environments() -> list[Path]:
    return sorted(p.parent for p in ENVIRONMENTS_DIR.glob("*/versions.tf"))


def has_tests(directory: Path) -> bool:
    return any((directory / "tests").glob("*.tftest.hcl"))


def tested_configurations() -> list[Path]:
    """Modules and roots that carry ``tests/*.tftest.hcl``."""
    return [d for d in (*modules(), *environments()) if has_tests(d)]


def validated_standalone(directory: Path) -> bool:
    """Whether ``terraform validate`` runs in ``directory`` by itself: every root, and every module
    but one that takes provider configurations from its caller.

    A module whose ``required_providers`` list ``configuration_aliases`` (modules/email-inbound's
    ``aws.receiving``) receives them through the calling module block's ``providers`` argument, and
    only a root module defines provider configurations
    (https://developer.hashicorp.com/terraform/language/modules/develop/providers): validated alone,
    nothing passes them and Terraform reports "Provider configuration not present". Such a module is
    still formatted, validated as part of every root that calls it, and tested (its tests supply the
    aliased provider with a ``mock_provider`` block of that alias).
    """
    return not configuration_aliases(directory)


NOT_STANDALONE = "fmt and test only: it takes configuration_aliases, so its callers validate it"


def relative(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def run(
    directory: Path,
    command: str,
    *args: str,
    capture: bool = True,
    env: Mapping[str, str] | None = None,
    **options: Any,
) -> Result:
    """Run one terraform command in ``directory``; raise TerraformError when it fails."""
    go_gc_percent()
    terraform = Terraform(working_dir=str(directory))
    started = time.monotonic()
    with overridden(env or {}):
        code, out, err = terraform.cmd(command, *args, capture_output=capture, **options)
    seconds = time.monotonic() - started
    if code != 0:
        raise TerraformError(
            f"terraform {command} failed in {relative(directory)} (exit {code}):\n{out or ''}{err or ''}"
        )
    return Result(directory, command, seconds, out or "", err or "")


def init(
    directory: Path,
    *,
    backend: bool = True,
    backend_config: Path | None = None,
    data_dir: Path | None = None,
    capture: bool = True,
    lockfile_readonly: bool = False,
) -> Result:
    options: dict[str, Any] = {"input": False, "no_color": IsFlagged}
    if lockfile_readonly:
        options["lockfile"] = "readonly"  # verify against the committed lock file, never rewrite it
    if not backend:
        options["backend"] = False
    if backend_config is not None:
        options["backend_config"] = str(backend_config)
    mirror = plugin_dir()
    if mirror:
        options["plugin_dir"] = mirror
    env = {"TF_DATA_DIR": str(data_dir)} if data_dir is not None else None
    return run(directory, "init", capture=capture, env=env, **options)


def fmt_check(directories: Sequence[Path]) -> Result:
    return run(REPO, "fmt", *(relative(d) for d in directories), check=IsFlagged, recursive=IsFlagged)


def validate_one(directory: Path) -> Result:
    started = time.monotonic()
    if not validated_standalone(directory):
        return Result(directory, "validate", time.monotonic() - started, "", note=NOT_STANDALONE)
    init(directory, backend=False)
    result = run(directory, "validate", no_color=IsFlagged)
    return Result(directory, "validate", time.monotonic() - started, result.output)


def test_one(directory: Path) -> Result:
    started = time.monotonic()
    init(directory, backend=False)
    result = run(directory, "test", no_color=IsFlagged)
    return Result(directory, "test", time.monotonic() - started, result.output)


VALIDATED_BY_TEST = "validated by terraform test"


def check_one(directory: Path) -> Result:
    """init once, then terraform test where tests/ exists, and terraform validate (where it stands
    alone: ``validated_standalone``) only where it does not.

    terraform test validates the configuration it tests, so a separate validate before it is the same
    check done twice (two more starts of the aws provider, about 2 s of CPU a directory). The test
    command "executes a series of Terraform plan or apply commands"
    (https://developer.hashicorp.com/terraform/cli/commands/test), and plan "includes an implied
    validation check" (https://developer.hashicorp.com/terraform/cli/commands/validate); the test
    runner calls the same ``Validate`` as terraform validate on the configuration before each run
    block's plan, and a failed validation fails the run and skips the file's remaining runs. Tried on
    this repository: a local no resource reads that refers to an undeclared variable
    (modules/dashboard), and an argument the aws provider's schema lacks on a resource no run plans an
    instance of (``count = 0``, modules/private-bucket), each fail terraform test with the diagnostic
    terraform validate gives ("Reference to undeclared input variable", "Unsupported argument").
    Every run block here plans the directory's own configuration (none names another ``module``), so
    the validation covers it; a module that takes ``configuration_aliases`` is validated too, with the
    aliased provider its tests supply. ``make validate`` still validates every directory alone.
    """
    started = time.monotonic()
    init(directory, backend=False)
    if has_tests(directory):
        output = run(directory, "test", no_color=IsFlagged).output
        return Result(directory, "check", time.monotonic() - started, output, note=VALIDATED_BY_TEST)
    if not validated_standalone(directory):
        return Result(directory, "check", time.monotonic() - started, "", note=NOT_STANDALONE)
    output = run(directory, "validate", no_color=IsFlagged).output
    return Result(directory, "check", time.monotonic() - started, output)


# Configurations checked at once. Each terraform process maps the same ~700 MB provider binary (shared
# pages, from the one TF_PLUGIN_DIR mirror that init links rather than copies); terraform test runs a
# file's run blocks one after another, so a directory's tests are one sequential unit of work.
POOL_SIZE = 4


def run_blocks(directory: Path) -> int:
    """How many ``run`` blocks the directory's tests hold: its share of terraform test's time."""
    return sum(
        sum(1 for line in f.read_text(encoding="utf-8").splitlines() if line.startswith("run "))
        for f in (directory / "tests").glob("*.tftest.hcl")
    )


def longest_first(directories: Sequence[Path]) -> list[Path]:
    """The directories with the most run blocks first, so the pool's last task is a short one."""
    return sorted(directories, key=lambda d: (-run_blocks(d), str(d)))


def _each(action: Any, directories: Sequence[Path], label: str) -> list[Result]:
    with ThreadPoolExecutor(max_workers=POOL_SIZE) as pool:
        results = list(pool.map(action, longest_first(directories)))
    results.sort(key=lambda r: str(r.directory))
    for result in results:
        note = f"  ({result.note})" if result.note else ""
        print(f"  {label:<9} {relative(result.directory):<42} {result.seconds:5.1f}s{note}", flush=True)
    return results


def validate_all() -> None:
    started = time.monotonic()
    fmt_check([MODULES_DIR, REPO / "terraform"])
    print("  fmt       modules terraform                            ok", flush=True)
    _each(validate_one, [*modules(), *environments()], "validate")
    print(f"validate: every module and root is valid ({time.monotonic() - started:.1f}s)")


def _print_test_summaries(results: Sequence[Result]) -> None:
    for result in results:
        summary = [line for line in result.output.splitlines() if line.startswith(("Success!", "Failure!"))]
        if summary:
            print(f"    {relative(result.directory)}: {' '.join(summary)}")


def check_all() -> None:
    started = time.monotonic()
    fmt_check([MODULES_DIR, REPO / "terraform"])
    print("  fmt       modules terraform                            ok", flush=True)
    results = _each(check_one, [*modules(), *environments()], "check")
    _print_test_summaries(results)
    print(f"terraform check: formatted, valid and tested ({time.monotonic() - started:.1f}s)")


def test_all() -> None:
    started = time.monotonic()
    results = _each(test_one, tested_configurations(), "test")
    _print_test_summaries(results)
    print(f"terraform test: every module and root passes ({time.monotonic() - started:.1f}s)")


def environment_dir(name: str) -> Path:
    directory = ENVIRONMENTS_DIR / name
    if not (directory / "versions.tf").is_file():
        known = ", ".join(d.name for d in environments())
        raise TerraformError(f"no environment {name!r} under terraform/environments (known: {known})")
    return directory


def _init_environment(directory: Path) -> None:
    example = directory / f"{BACKEND_FILE}.example"
    backend_file = directory / BACKEND_FILE
    if example.is_file() and not backend_file.is_file():
        raise TerraformError(
            f"{relative(backend_file)} is missing: copy {relative(example)} to it "
            "and fill in the state bucket"
        )
    init(directory, backend_config=backend_file if backend_file.is_file() else None, capture=False)


def plan(name: str) -> Path:
    directory = environment_dir(name)
    _init_environment(directory)
    run(directory, "plan", capture=False, input=False, out=PLAN_FILE)
    saved = directory / PLAN_FILE
    print(f"plan saved to {relative(saved)}; apply it with `make apply ENV={name}`")
    return saved


def apply(name: str) -> None:
    directory = environment_dir(name)
    saved = directory / PLAN_FILE
    if not saved.is_file():
        raise TerraformError(
            f"no saved plan at {relative(saved)}: run `make plan ENV={name}` and review it first"
        )
    _init_environment(directory)
    run(directory, "apply", PLAN_FILE, capture=False, input=False)
    saved.unlink()


def copy_configuration(root: Path, destination: Path) -> Path:
    """Copy the modules and ``root`` (a directory under terraform/environments) to ``destination``.

    The copy keeps the relative module paths and the root's lock file, so a throwaway apply runs
    exactly the committed configuration without writing state or .terraform/ into the repository.
    """
    ignore = shutil.ignore_patterns(
        ".terraform", "tests", "*.tfstate", "*.tfstate.backup", "tfplan", "backend.hcl"
    )
    shutil.copytree(MODULES_DIR, destination / "modules", ignore=ignore)
    target = destination / root.relative_to(REPO)
    shutil.copytree(root, target, ignore=ignore)
    return target


def apply_root(
    directory: Path,
    *,
    variables: Mapping[str, str],
    state: Path | None = None,
    data_dir: Path | None = None,
    parallelism: int = 20,
) -> dict[str, Any]:
    """Init (against the committed lock file) and apply a root, auto-approved; returns its outputs
    as ``terraform_outputs`` flattens them."""
    init(directory, data_dir=data_dir, lockfile_readonly=True)
    env = {"TF_DATA_DIR": str(data_dir)} if data_dir is not None else None
    state_option: dict[str, Any] = {"state": str(state)} if state is not None else {}
    var_args = [f"-var={key}={value}" for key, value in sorted(variables.items())]
    run(
        directory,
        "apply",
        *var_args,
        env=env,
        auto_approve=IsFlagged,
        input=False,
        no_color=IsFlagged,
        parallelism=parallelism,
        **state_option,
    )
    result = run(directory, "output", env=env, json=IsFlagged, **state_option)
    return terraform_outputs.from_json(result.stdout)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Terraform for the modules and environment roots.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="fmt -check, validate every root and module, terraform test all of them")
    sub.add_parser("validate", help="fmt -check and validate every root and module")
    sub.add_parser("test", help="terraform test in every module and root that has tests/")
    for name in ("plan", "apply"):
        command = sub.add_parser(name, help=f"{name} one environment")
        command.add_argument("--env", required=True, help="environment under terraform/environments")
    args = parser.parse_args(argv)
    os.environ.setdefault("TF_IN_AUTOMATION", "1")  # no "run terraform apply next" hints
    try:
        if args.command == "check":
            check_all()
        if args.command == "validate":
            validate_all()
        if args.command == "test":
            test_all()
        if args.command == "plan":
            plan(args.env)
        if args.command == "apply":
            apply(args.env)
    except TerraformError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
