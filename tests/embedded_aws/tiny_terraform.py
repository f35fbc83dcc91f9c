"""A small Terraform configuration applied to the embedded AWS, then planned again.

The configuration gets the hashicorp/aws provider pinned by the local root's lock file and the local
root's provider settings (fake credentials, skip flags, every service at ``var.endpoint``), so a test
proves what the project's own Terraform would do against the emulator. ``plan_is_empty`` tells whether
Terraform, reading everything back, wants no change: what the provider reads back matches.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from python_terraform import IsFlagged

from outreach_dev import terraform_cli, terraform_outputs

LOCK_FILE = terraform_cli.ENVIRONMENTS_DIR / "local" / ".terraform.lock.hcl"
PROVIDER = """
terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = "~> 5.100" }
  }
}

variable "endpoint" { type = string }

provider "aws" {
  region                      = "%(region)s"
  access_key                  = "test"
  secret_key                  = "test"
  skip_credentials_validation = true
  skip_requesting_account_id  = true
  skip_metadata_api_check     = true
  skip_region_validation      = true
  endpoints {
    iam    = var.endpoint
    kms    = var.endpoint
    lambda = var.endpoint
    sts    = var.endpoint
  }
}
"""


class TinyRoot:
    """One configuration directory: ``main.tf`` (provider block added) and the files it reads."""

    def __init__(self, directory: Path, configuration: str, *, region: str) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "main.tf").write_text(PROVIDER % {"region": region} + configuration)
        shutil.copy(LOCK_FILE, directory / LOCK_FILE.name)
        terraform_cli.init(directory, lockfile_readonly=True)

    def apply(self, endpoint: str) -> dict[str, Any]:
        """Apply (auto-approved); the outputs."""
        terraform_cli.run(
            self.directory,
            "apply",
            f"-var=endpoint={endpoint}",
            auto_approve=IsFlagged,
            input=False,
            no_color=IsFlagged,
        )
        result = terraform_cli.run(self.directory, "output", json=IsFlagged)
        return terraform_outputs.from_json(result.stdout)

    def plan_is_empty(self, endpoint: str) -> bool:
        """Whether a plan after the apply finds nothing to change."""
        result = terraform_cli.run(
            self.directory, "plan", f"-var=endpoint={endpoint}", input=False, no_color=IsFlagged
        )
        return "No changes." in result.stdout
