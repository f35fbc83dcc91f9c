"""`make validate` and `make terraform-check` validate a module standalone unless it takes provider
configurations from its caller (``configuration_aliases``); fmt and terraform test run for every one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import hcl2
import pytest

from outreach_dev import hcl_files, terraform_cli
from outreach_dev.terraform_cli_aliases import configuration_aliases, provider_aliases

PLAIN = """\
terraform {
  required_providers {
    aws = {
      source = "hashicorp/aws"
      # configuration_aliases would make this module take aws.receiving from its caller.
    }
  }
}
"""
ALIASED = """\
terraform {
  required_providers {
    aws = {
      source                = "hashicorp/aws"
      configuration_aliases = [aws.receiving, aws.other]
    }
  }
}
"""
TEST_FILE = 'run "plans" {\n  command = plan\n}\n'


def run_blocks(test_file: Path) -> list[tuple[str, dict[str, Any]]]:
    """Each run block of a .tftest.hcl file as (name, body)."""
    runs = hcl_files.load(test_file, hcl2.SerializationOptions(with_comments=False)).get("run", [])
    return [(name.strip('"'), body) for run in runs for name, body in run.items()]


def module(directory: Path, versions: str, *, tests: bool = True) -> Path:
    directory.mkdir()
    (directory / "versions.tf").write_text(versions, encoding="utf-8")
    if tests:
        (directory / "tests").mkdir()
        (directory / "tests" / "plans.tftest.hcl").write_text(TEST_FILE, encoding="utf-8")
    return directory


@pytest.fixture
def commands(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Each terraform command check_one/validate_one would run, as (directory name, command)."""
    ran: list[tuple[str, str]] = []

    def run(directory: Path, command: str, *args: str, **options: Any) -> terraform_cli.Result:
        ran.append((directory.name, command))
        return terraform_cli.Result(directory, command, 0.0, f"{command} ok\n")

    def init(directory: Path, **options: Any) -> terraform_cli.Result:
        return run(directory, "init")

    monkeypatch.setattr(terraform_cli, "run", run)
    monkeypatch.setattr(terraform_cli, "init", init)
    return ran


@pytest.mark.parametrize(
    ("versions", "aliases"),
    [
        (PLAIN, []),
        (ALIASED, ["aws.receiving", "aws.other"]),
        ('terraform {\n  required_version = ">= 1.9.0"\n}\n', []),
    ],
    ids=["no aliases (a comment naming them is no declaration)", "two aliases", "no required_providers"],
)
def test_configuration_aliases_are_read_from_the_modules_required_providers(
    tmp_path: Path, versions: str, aliases: list[str]
) -> None:
    assert configuration_aliases(module(tmp_path / "m", versions, tests=False)) == aliases


def test_check_validates_a_directory_with_tests_by_its_terraform_test_and_one_without_by_validate(
    tmp_path: Path, commands: list[tuple[str, str]]
) -> None:
    # GIVEN modules with and without tests, taking aws.receiving from their caller or not
    directories = [
        module(tmp_path / "aliased", ALIASED),
        module(tmp_path / "plain", PLAIN),
        module(tmp_path / "aliased-untested", ALIASED, tests=False),
        module(tmp_path / "plain-untested", PLAIN, tests=False),
    ]

    # WHEN make terraform-check checks each
    checked = {d.name: terraform_cli.check_one(d) for d in directories}

    # THEN a tested directory runs terraform test alone (it validates what it plans), an untested one
    # terraform validate where it stands alone, and the report says which
    assert commands == [
        ("aliased", "init"),
        ("aliased", "test"),
        ("plain", "init"),
        ("plain", "test"),
        ("aliased-untested", "init"),
        ("plain-untested", "init"),
        ("plain-untested", "validate"),
    ]
    assert {name: result.note for name, result in checked.items()} == {
        "aliased": terraform_cli.VALIDATED_BY_TEST,
        "plain": terraform_cli.VALIDATED_BY_TEST,
        "aliased-untested": terraform_cli.NOT_STANDALONE,
        "plain-untested": "",
    }


def test_every_run_block_plans_its_own_directory_so_terraform_test_validates_that_configuration() -> None:
    # terraform test validates the configuration a run block plans; one naming another module in a
    # module block would leave its directory's own configuration to a separate terraform validate.
    elsewhere = [
        (terraform_cli.relative(test_file), name)
        for directory in terraform_cli.tested_configurations()
        for test_file in sorted((directory / "tests").glob("*.tftest.hcl"))
        for name, body in run_blocks(test_file)
        if "module" in body
    ]
    assert terraform_cli.tested_configurations(), "no module or root with tests was found"
    assert elsewhere == []


def test_make_validate_skips_only_the_modules_with_configuration_aliases(
    tmp_path: Path, commands: list[tuple[str, str]]
) -> None:
    aliased = module(tmp_path / "aliased", ALIASED)
    plain = module(tmp_path / "plain", PLAIN)

    results = [terraform_cli.validate_one(d) for d in (aliased, plain)]

    assert commands == [("plain", "init"), ("plain", "validate")]
    assert [r.note for r in results] == [terraform_cli.NOT_STANDALONE, ""]


def test_every_root_is_validated_standalone_so_the_aliased_modules_are_validated_through_them() -> None:
    # The roots define the aliased provider (receiving.tf) and call the modules that take it.
    assert [e.name for e in terraform_cli.environments() if not terraform_cli.validated_standalone(e)] == []
    takers = [m.name for m in terraform_cli.modules() if not terraform_cli.validated_standalone(m)]
    assert "email-inbound" in takers
    assert all(provider_aliases(e) == ["receiving"] for e in terraform_cli.environments())


@pytest.fixture
def terraform_printing_gogc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in ``terraform``, first on PATH, that prints the GOGC it was started with."""
    directory = tmp_path / "bin"
    directory.mkdir()
    fake = directory / "terraform"
    fake.write_text('#!/bin/sh\nprintf "%s" "${GOGC-unset}"\n', encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{directory}:/usr/bin:/bin")


@pytest.mark.usefixtures("terraform_printing_gogc")
def test_terraform_runs_with_go_gc_percent_400_when_gogc_is_unset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOGC", "recorded, so that the test's setting is undone")
    monkeypatch.delenv("GOGC")
    assert terraform_cli.run(tmp_path, "version").stdout == "400"


@pytest.mark.usefixtures("terraform_printing_gogc")
def test_terraform_keeps_a_gogc_the_caller_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOGC", "150")
    assert terraform_cli.run(tmp_path, "version").stdout == "150"
