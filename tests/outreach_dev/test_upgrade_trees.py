"""The override that points an old or new tree's root at the embedded AWS connects every AWS provider
configuration the root defines, and only those (Terraform refuses an override of an undefined alias)."""

from __future__ import annotations

from pathlib import Path

import pytest

from outreach_dev.upgrade_trees import OVERRIDE_FILE, Tree, prepare_root
from tests.support.terraform_roots import load_hcl

LOCAL_MAIN = """\
provider "aws" {
  region     = var.region
  access_key = "test"
  skip_credentials_validation = true
  endpoints {
    sqs = var.endpoint
    sns = var.endpoint
  }
}
"""
DEV_MAIN = 'provider "aws" {\n  region = var.region\n}\n\nvariable "region" {\n  type = string\n}\n'
RECEIVING = 'provider "aws" {\n  alias  = "receiving"\n  region = var.region\n}\n'


def tree(directory: Path, *, receiving: bool) -> Tree:
    for name, text in (("local", LOCAL_MAIN), ("dev", DEV_MAIN)):
        root = directory / "terraform" / "environments" / name
        root.mkdir(parents=True)
        (root / "versions.tf").write_text("terraform {}\n", encoding="utf-8")
        (root / "main.tf").write_text(text, encoding="utf-8")
    if receiving:
        (directory / "terraform" / "environments" / "dev" / "receiving.tf").write_text(
            RECEIVING, encoding="utf-8"
        )
    return Tree("test", directory)


@pytest.mark.parametrize(
    ("receiving", "aliases"),
    [(True, [None, "receiving"]), (False, [None])],
    ids=["a tree with receiving.tf", "a revision from before receiving.tf"],
)
def test_the_override_connects_the_aliased_provider_only_where_the_root_defines_it(
    tmp_path: Path, receiving: bool, aliases: list[str | None]
) -> None:
    # GIVEN a tree whose dev root does or does not define provider "aws" { alias = "receiving" }
    source = tree(tmp_path, receiving=receiving)

    # WHEN dev is pointed at the embedded AWS
    root, _ = prepare_root(source, "dev", "http://127.0.0.1:1", tmp_path / "packages")

    # THEN every configuration it defines, and no other, gets the local root's connection
    providers = [block["aws"] for block in load_hcl(root / OVERRIDE_FILE)["provider"]]
    assert [p.get("alias") for p in providers] == aliases
    for provider in providers:
        assert provider["access_key"] == "test"
        assert provider["skip_credentials_validation"] is True
        assert provider["endpoints"] == [{"sqs": "http://127.0.0.1:1", "sns": "http://127.0.0.1:1"}]
        assert "region" not in provider
