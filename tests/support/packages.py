"""Deployment zips of the outreach package alone, for applying a root where no function runs from them."""

from __future__ import annotations

from pathlib import Path

from outreach_dev import packaging


def code_only_packages(directory: Path) -> Path:
    """One zip per function with the outreach package only: Terraform and moto need a zip, not its
    dependencies. Returns ``directory``, the roots' ``package_dir``."""
    code = packaging.source_entries()
    for function in packaging.FUNCTIONS:
        packaging.write_zip(code, directory / f"{function}.zip")
    return directory
