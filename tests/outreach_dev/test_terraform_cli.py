"""`make validate` and `make terraform-check` validate a module standalone unless it takes provider
configurations from its caller (``configuration_aliases``); fmt and terraform test run for every one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from outreach_dev import terraform_cli
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


def test_a_module_with_configuration_aliases_is_not_validated_standalone_and_one_without_still_is(
    tmp_path: Path, commands: list[tuple[str, str]]
) -> None:
    # GIVEN a module that takes aws.receiving from its caller and one that does not, both with tests
    aliased = module(tmp_path / "aliased", ALIASED)
    plain = module(tmp_path / "plain", PLAIN)

    # WHEN make terraform-check checks each
    checked = {d.name: terraform_cli.check_one(d) for d in (aliased, plain)}

    # THEN the plain one is validated and tested, the aliased one only tested, and the report says why
    assert commands == [
        ("aliased", "init"),
        ("aliased", "test"),
        ("plain", "init"),
        ("plain", "validate"),
        ("plain", "test"),
    ]
    assert checked["aliased"].note == terraform_cli.NOT_STANDALONE
    assert checked["plain"].note == ""


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
